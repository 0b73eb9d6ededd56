"""How far the fastest shipped path's audio is from the fp32 Keras audio of the same voice.

The side-by-side speed comparison (`../shared/peers/compare.py`, `*_fastest` figures) times
our fastest CPU path: the builtin-only TFLite files with int8 (dynamic range) or float16
weights, run by LiteRT with XNNPACK. This script states what that costs in output on a
trained voice (by default the one `make demo` writes to `demo_output/`): every sentence is
synthesized by the fp32 Keras models and by each quantized TFLite path, and the quantized
audio is scored with the fp32 audio as the reference:

- end to end (one text2wav .tflite: token ids -> audio): PESQ-WB, STOI and the MR-STFT
  distance when the lengths agree (int8 may round a predicted duration the other way,
  which shifts everything after it), and the MCD (DTW-aligned, so always);
- the vocoder alone on the fp32 mels (lengths always agree): PESQ-WB, STOI, MR-STFT;
- end to end at the fast path's durations: the same four scores against the fp32 models run
  with the durations the quantized acoustic model chose (and fp32's own f0 and energy). A
  duration rounded the other way shifts all audio after it, which PESQ and STOI count as
  distance; this row leaves the shift out and keeps the spectral error (token-level
  variance models only).

Prints one line per path and a JSON summary (means over the sentences).

    python benchmarks/fast_path_distance.py                       # demo_output/, int8 and float16
    python benchmarks/fast_path_distance.py --voice DIR --quantizations int8
"""

import argparse
import statistics
import tempfile
from pathlib import Path

import numpy as np

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)

from measure import finish
from tensorflow_tts.inference import TFAutoModel
from tensorflow_tts.inference.synthesizer import Synthesizer
from tensorflow_tts.inference.tflite import TFLiteModel, convert_model, convert_text2wav
from tensorflow_tts.metrics.evaluation import evaluate_pair

REPO = Path(__file__).resolve().parents[1]
SENTENCES = (
    "The quick brown fox jumps over the lazy dog.",
    "Printing, in the only sense with which we are at present concerned, differs from most arts.",
    "She sells sea shells by the sea shore, and the shells she sells are surely seashells.",
    "A speech engineer compares voices with objective metrics before listening.",
    "How much wood would a woodchuck chuck if a woodchuck could chuck wood?",
    "Every morning the train leaves the station at seven fifteen.",
)
END_TO_END = ("pesq", "stoi", "mr_stft", "mcd")
VOCODER_ONLY = ("pesq", "stoi", "mr_stft")


def means(rows, names):
    summary = {}
    for name in names:
        values = [row[name] for row in rows if name in row]
        if values:
            summary[name] = round(statistics.fmean(values), 4)
    summary["sentences_scored"] = {name: sum(name in row for row in rows) for name in names}
    return summary


def at_fast_durations(acoustic, vocoder, fast_acoustic, text2wav, ids):
    """(fp32 audio at the fast path's durations, the fast path's audio) for one sentence's token ids,
    or None when the text2wav file's audio does not have the quantized acoustic file's length.

    The fp32 acoustic model runs teacher-forced (``call``) with the durations the quantized
    acoustic model predicts and with its own predicted f0 and energy, then the fp32 vocoder.
    """
    inputs = {"input_ids": np.asarray([ids], np.int32), "speaker_ids": np.zeros([1], np.int32),
              "speed_ratios": np.ones([1], np.float32), "f0_ratios": np.ones([1], np.float32),
              "energy_ratios": np.ones([1], np.float32)}
    durations = fast_acoustic(**{name: inputs[name] for name in fast_acoustic.input_names})["durations"]
    _, _, _, f0, energy = acoustic.inference(inputs["input_ids"], inputs["speaker_ids"], inputs["speed_ratios"],
                                             inputs["f0_ratios"], inputs["energy_ratios"])
    mel_after = acoustic(inputs["input_ids"], inputs["speaker_ids"], durations.astype(np.int32), f0, energy,
                         training=False)[1]
    reference = np.asarray(vocoder.inference(mel_after))[0, :, 0]
    fast = text2wav(**{name: inputs[name] for name in text2wav.input_names})["audio"][0, :, 0]
    if len(fast) != int(durations.sum()) * vocoder.hop_size:  # the two files chose different durations
        return None
    return reference, fast


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--voice", type=Path, default=REPO / "demo_output",
                        help="folder with fastspeech2/, mb_melgan/ and processor.json (what `make demo` writes)")
    parser.add_argument("--quantizations", nargs="*", default=["int8", "float16"], choices=["float32", "float16", "int8"])
    parser.add_argument("--json", help="also write the summary here")
    args = parser.parse_args()
    acoustic_dir, vocoder_dir, processor = args.voice / "fastspeech2", args.voice / "mb_melgan", args.voice / "processor.json"
    for path in (acoustic_dir, vocoder_dir, processor):
        if not path.exists():
            raise SystemExit(f"{path}: missing; run `make demo` first or pass --voice")
    acoustic, vocoder = TFAutoModel.from_pretrained(acoustic_dir), TFAutoModel.from_pretrained(vocoder_dir)
    reference = Synthesizer(acoustic_dir, vocoder_dir, processor=processor)
    rate = reference.sampling_rate
    fp32_audio = [reference.synthesize(text) for text in SENTENCES]
    summary = {"voice": str(args.voice), "sentences": len(SENTENCES), "sampling_rate": rate, "paths": {}}
    with tempfile.TemporaryDirectory() as workdir:
        for quantize in args.quantizations:
            text2wav = Path(workdir) / f"text2wav_{quantize}.tflite"
            text2wav.write_bytes(convert_text2wav(acoustic, vocoder, quantize=quantize, sampling_rate=rate))
            fast = Synthesizer(text2wav, processor=processor)
            end_to_end = []
            for text, audio in zip(SENTENCES, fp32_audio):
                scores, _ = evaluate_pair(audio, fast.synthesize(text), rate, metrics=END_TO_END)
                end_to_end.append(scores)
            fast_vocoder = Path(workdir) / f"vocoder_{quantize}.tflite"
            fast_vocoder.write_bytes(convert_model(vocoder, quantize=quantize, sampling_rate=rate))
            fp32_mels_fast_vocoder = Synthesizer(acoustic_dir, fast_vocoder, processor=processor)
            vocoder_rows = []
            for text, audio in zip(SENTENCES, fp32_audio):
                scores, _ = evaluate_pair(audio, fp32_mels_fast_vocoder.synthesize(text), rate, metrics=VOCODER_ONLY)
                vocoder_rows.append(scores)
            entry = {"end_to_end": means(end_to_end, END_TO_END), "vocoder_only": means(vocoder_rows, VOCODER_ONLY)}
            if acoustic.config.variance_level == "token":
                fast_acoustic = TFLiteModel(convert_model(acoustic, quantize=quantize, sampling_rate=rate))
                fast_text2wav = TFLiteModel(text2wav)
                aligned = []
                for text in SENTENCES:
                    ids, _ = reference.processor.encode(text)
                    pair = at_fast_durations(acoustic, vocoder, fast_acoustic, fast_text2wav, ids)
                    if pair is None:
                        print(f"{text[:40]!r}: the {quantize} text2wav and acoustic files chose different durations; "
                              "left out of the row at the fast path's durations", flush=True)
                        continue
                    aligned.append(evaluate_pair(*pair, rate, metrics=END_TO_END)[0])
                entry["end_to_end_at_fast_durations"] = means(aligned, END_TO_END)
            summary["paths"][f"tflite_{quantize}"] = entry
            print(f"tflite {quantize:<8} vs keras fp32, end to end: {entry['end_to_end']}; vocoder alone: {entry['vocoder_only']}; "
                  f"end to end at its own durations: {entry.get('end_to_end_at_fast_durations', 'n/a (frame-level variances)')}",
                  flush=True)
    return finish(summary, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
