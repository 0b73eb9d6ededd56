"""Does a tiny Multi-band MelGAN, trained for a few minutes on the bundled corpus, beat Griffin-Lim?

Preprocesses test/files/corpus/ljspeech, trains examples/multiband_melgan/conf/multiband_melgan.tiny.yaml
within `--max-minutes` (stopping early at the budget), then prints, on the valid utterances
(whole utterances, not segments), the distance of (a) the vocoder's output from the
normalised mel and (b) Griffin-Lim (`--griffin-lim-iters`, from the raw mel) to the recording:

* MR-STFT distance: spectral convergence + log STFT magnitude, mean over the v1
  resolutions (fft 1024/2048/512), as the training loss measures it;
* log-mel L1: mean |log10 mel(output) - log10 mel(recording)| with the one mel definition,
  mel magnitudes floored at 1e-5 (log10 -5) as HiFi-GAN's validation mel error does: the
  recordings hold digital silence (log10 -10 in the dump), where any output noise would
  otherwise dominate. The unfloored figure is printed too.

    python benchmarks/quality_vocoder.py --max-minutes 10
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)

import numpy as np
import tensorflow as tf

from tensorflow_tts.audio.griffin_lim import TFGriffinLim
from tensorflow_tts.audio.mel import log_mel_spectrogram
from tensorflow_tts.bin import preprocess
from tensorflow_tts.configs.preprocess import PreprocessConfig
from tensorflow_tts.losses.stft import TFMultiResolutionSTFT
from tensorflow_tts.recipes.vocoder import VocoderGanTrainer, build_train_parser, load_generator, run_vocoder_training
from tensorflow_tts.utils.logs import setup_logging
from tensorflow_tts.dump import layout

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "test" / "files" / "corpus" / "ljspeech"
PREPROCESS_CONFIG = REPO / "preprocess" / "ljspeech_preprocess.yaml"
TINY_CONFIG = REPO / "examples" / "multiband_melgan" / "conf" / "multiband_melgan.tiny.yaml"


class TimeBudgetTrainer(VocoderGanTrainer):
    """Stops (and saves) at the first step that ends after `deadline` (time.monotonic())."""

    deadline = float("inf")

    def _after_train_step(self, micro_results, window):
        super()._after_train_step(micro_results, window)
        if time.monotonic() > self.deadline:
            self.config.train_max_steps = self.steps


LOG_MEL_FLOOR = -5.0  # log10 of the 1e-5 mel floor of the log-mel L1


def distances(audio, reference, reference_mel, features, mr_stft):
    """(MR-STFT distance, floored log-mel L1, unfloored log-mel L1) of `audio` against the recording."""
    sc_loss, mag_loss = mr_stft(tf.constant(reference[np.newaxis]), tf.constant(audio[np.newaxis]))
    mel = log_mel_spectrogram(
        audio, features.sampling_rate, features.fft_size, features.hop_size, features.num_mels,
        features.fmin, features.fmax, features.win_length, features.window,
    )
    floored = np.abs(np.maximum(mel, LOG_MEL_FLOOR) - np.maximum(reference_mel, LOG_MEL_FLOOR))
    return float(sc_loss[0] + mag_loss[0]), float(np.mean(floored)), float(np.mean(np.abs(mel - reference_mel)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-minutes", type=float, default=10.0, help="training budget (at most 20 on 2 cores)")
    parser.add_argument("--config", default=str(TINY_CONFIG))
    parser.add_argument("--workdir", default=None, help="dump and experiment folder (default: a temporary one)")
    parser.add_argument("--griffin-lim-iters", type=int, default=60)
    parser.add_argument("--eval-only", action="store_true", help="evaluate the run already in --workdir")
    args = parser.parse_args(argv)
    setup_logging(0)

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="quality_vocoder_"))
    dump = workdir / "dump"
    outdir = workdir / "exp"
    start = time.monotonic()
    if args.eval_only:
        steps, train_minutes = None, 0.0
    else:
        steps, train_minutes = train(args, dump, outdir)
    rows = evaluate(dump, outdir, args.griffin_lim_iters)
    means = np.mean([row[1:] for row in rows], axis=0)
    print(f"\nMB-MelGAN tiny: {steps} steps in {train_minutes:.1f} min (budget {args.max_minutes:g} min); "
          f"Griffin-Lim: {args.griffin_lim_iters} iterations; log-mel floored at 1e-5 (raw: unfloored)")
    header = ("MR-STFT voc", "MR-STFT GL", "logmel voc", "logmel GL", "raw voc", "raw GL")
    print(f"{'utterance':<14}" + "".join(f"{name:>12}" for name in header))
    for utt_id, *values in rows + [("mean", *means)]:
        stft_voc, mel_voc, raw_voc, stft_gl, mel_gl, raw_gl = values
        print(f"{utt_id:<14}" + "".join(f"{v:>12.4f}" for v in (stft_voc, stft_gl, mel_voc, mel_gl, raw_voc, raw_gl)))
    summary = {
        "steps": steps,
        "train_minutes": round(train_minutes, 2),
        "total_minutes": round((time.monotonic() - start) / 60, 2),
        "vocoder": {"mr_stft": round(float(means[0]), 4), "log_mel_l1": round(float(means[1]), 4),
                    "log_mel_l1_unfloored": round(float(means[2]), 4)},
        "griffin_lim": {"mr_stft": round(float(means[3]), 4), "log_mel_l1": round(float(means[4]), 4),
                        "log_mel_l1_unfloored": round(float(means[5]), 4)},
    }
    summary["vocoder_beats_griffin_lim"] = bool(means[0] < means[3] and means[1] < means[4])
    print(json.dumps(summary))
    return 0 if summary["vocoder_beats_griffin_lim"] else 1


def train(args, dump, outdir):
    """Preprocess the corpus into `dump` and train within the budget; returns (steps, minutes)."""
    status = preprocess.main(
        ["--rootdir", str(CORPUS), "--outdir", str(dump), "--config", str(PREPROCESS_CONFIG), "--dataset", "ljspeech",
         "--verbose", "0"]
    )
    if status:
        sys.exit(f"preprocessing failed with status {status}")

    train_args = build_train_parser("").parse_args(
        ["--train-dir", str(dump / "train"), "--dev-dir", str(dump / "valid"), "--outdir", str(outdir),
         "--config", args.config, "--use-norm", "1", "--verbose", "0"]
    )
    TimeBudgetTrainer.deadline = time.monotonic() + args.max_minutes * 60
    train_start = time.monotonic()
    trainer = run_vocoder_training(train_args, trainer_class=TimeBudgetTrainer)
    return trainer.steps, (time.monotonic() - train_start) / 60


def evaluate(dump, outdir, griffin_lim_iters):
    """Per valid utterance: (utt_id, vocoder distances..., Griffin-Lim distances...)."""
    features = PreprocessConfig.from_yaml(PREPROCESS_CONFIG)
    generator, _ = load_generator(outdir / "config.yml", outdir / "checkpoints")
    griffin_lim = TFGriffinLim(features)
    mr_stft = TFMultiResolutionSTFT()
    rows = []
    split = dump / "valid"
    for utt_id in sorted(layout.load_utt_ids(dump, "valid")):
        reference = layout.load_feature(layout.WAVE, split, utt_id)
        raw_mel = layout.load_feature(layout.MEL, split, utt_id)
        norm_mel = layout.load_feature(layout.NORM_MEL, split, utt_id)
        vocoded = generator(norm_mel[np.newaxis], training=False).numpy()[0, :, 0]
        reconstructed = griffin_lim(raw_mel, n_iter=griffin_lim_iters).numpy()
        assert len(vocoded) == len(reconstructed) == len(reference)
        rows.append((str(utt_id), *distances(vocoded, reference, raw_mel, features, mr_stft),
                     *distances(reconstructed, reference, raw_mel, features, mr_stft)))
    return rows


if __name__ == "__main__":
    sys.exit(main())
