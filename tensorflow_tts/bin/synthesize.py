"""tensorflow-tts-synthesize: text to wav with an acoustic model and a vocoder.

    tensorflow-tts-synthesize --text "Hello world." --acoustic fastspeech2/ --vocoder mb_melgan.tflite \\
        --processor ljspeech_mapper.json --out hello.wav
    tensorflow-tts-synthesize --text-file lines.txt ... --out wavs/     # one wav per line

A model is a folder with config.yml and weights, a SavedModel folder or a .tflite file.
"""

import argparse
import logging
import sys
from pathlib import Path

from tensorflow_tts.bin.cli import add_verbose_flag, setup_logging

logger = logging.getLogger("tensorflow_tts.synthesize")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="tensorflow-tts-synthesize",
        description="Synthesize speech. Long text is read sentence by sentence; --text-file writes one wav per line.",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--text", help="the text to read")
    source.add_argument("--text-file", type=Path, help="UTF-8 text, one utterance per line")
    parser.add_argument("--acoustic", required=True, help="FastSpeech2/FastSpeech/Tacotron2 (or a text2wav .tflite)")
    parser.add_argument("--vocoder", default=None, help="MB-MelGAN/MelGAN/HiFi-GAN")
    parser.add_argument("--processor", default=None, help="mapper JSON (default: the one in the acoustic model's folder)")
    parser.add_argument("--out", required=True, type=Path,
                        help="the wav (--text); with --text-file a folder, or NAME.wav for NAME_0001.wav, ...")
    parser.add_argument("--speaker-id", default="0", help="speaker id, or a speaker name of the mapper")
    parser.add_argument("--speed", type=float, default=1.0, help="how much faster to speak: 2.0 is twice as fast, 0.5 half as fast")
    parser.add_argument("--f0", type=float, default=1.0, help="pitch multiplier (FastSpeech2)")
    parser.add_argument("--energy", type=float, default=1.0, help="energy multiplier (FastSpeech2)")
    parser.add_argument("--sampling-rate", type=int, default=None, help="of the wav, when the models record none")
    parser.add_argument("--stream", action="store_true",
                        help="vocode in chunks as audio is needed and report the time to first audio")
    parser.add_argument("--chunk-frames", type=int, default=32, help="--stream: mel frames per chunk")
    parser.add_argument("--num-threads", type=int, default=None, help="TFLite interpreter threads")
    add_verbose_flag(parser)
    return parser.parse_args(argv)


def _utterances(args):
    """(output path, text, label) for each utterance to synthesize."""
    if args.text is not None:
        return [(args.out, args.text, "--text")]
    try:
        lines = args.text_file.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"--text-file {args.text_file}: cannot read it ({error})") from None
    numbered = [(number, line.strip()) for number, line in enumerate(lines, start=1) if line.strip()]
    if not numbered:
        raise ValueError(f"--text-file {args.text_file}: no text in it")
    if args.out.suffix.lower() == ".wav":
        folder, stem = args.out.parent, args.out.stem + "_"
    else:
        folder, stem = args.out, ""
    return [(folder / f"{stem}{number:04d}.wav", line, f"{args.text_file.name} line {number}") for number, line in numbered]


def _synthesize(synthesizer, text, args):
    controls = dict(speaker_id=args.speaker_id, speed=args.speed, f0=args.f0, energy=args.energy)
    if not args.stream:
        return synthesizer.synthesize(text, **controls)
    from tensorflow_tts.inference.streaming import measure_stream

    audio, first, total = measure_stream(synthesizer.stream(text, chunk_frames=args.chunk_frames, **controls))
    logger.info("time to first audio %.3f s, total %.3f s, audio %.3f s",
                first, total, audio.size / synthesizer.sampling_rate)
    return audio


def main(argv=None):
    args = parse_args(argv)
    setup_logging(args.verbose)
    import numpy as np
    import soundfile as sf

    from tensorflow_tts.inference.synthesizer import SynthesisError, Synthesizer

    if args.chunk_frames < 1:
        logger.error("--chunk-frames must be at least 1, got %d", args.chunk_frames)
        return 2
    try:
        utterances = _utterances(args)
        synthesizer = Synthesizer(acoustic=args.acoustic, vocoder=args.vocoder, processor=args.processor,
                                  sampling_rate=args.sampling_rate, num_threads=args.num_threads)
    except (SynthesisError, ValueError) as error:
        logger.error("%s", error)
        return 1
    failures = 0
    for path, text, label in utterances:
        try:
            audio = _synthesize(synthesizer, text, args)
            path.parent.mkdir(parents=True, exist_ok=True)
            sf.write(str(path), np.clip(audio, -1.0, 1.0), synthesizer.sampling_rate, subtype="PCM_16")
        except (SynthesisError, OSError) as error:
            logger.error("%s: %s", label, error)
            failures += 1
            continue
        logger.info("wrote %s (%.2f s)", path, audio.size / synthesizer.sampling_rate)
    if failures:
        logger.error("%d of %d utterances failed", failures, len(utterances))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
