"""Does a tiny Multi-band MelGAN, trained for a few minutes on the bundled corpus, beat Griffin-Lim?

Preprocesses test/files/corpus/ljspeech, trains examples/multiband_melgan/conf/multiband_melgan.tiny.yaml
within `--max-minutes` (stopping early at the budget), then scores, on the valid utterances
(whole utterances, not segments), (a) the vocoder's output from the normalised mel and
(b) Griffin-Lim (`--griffin-lim-iters`, from the raw mel) against the recording, with the
definitions of `tensorflow_tts.metrics`:

* PESQ-WB (higher is better; 4.64 for identical audio) and STOI (higher is better, 0-1);
* MR-STFT distance: spectral convergence + log STFT magnitude, mean over the v1
  resolutions (fft 1024/2048/512), as the training loss measures it (lower is better);
* log-mel L1, floored at log10 1e-5 (and unfloored), for information only: Griffin-Lim
  rebuilds the spectrum from the mel itself, so it wins that one by construction.

Goal: the vocoder beats Griffin-Lim on PESQ-WB, STOI and the MR-STFT distance (exit 0).
The run stays in --workdir; `--eval-only --workdir DIR` scores its checkpoint again without
training.

    python benchmarks/quality_vocoder.py --max-minutes 20 --workdir /tmp/quality_vocoder
    python benchmarks/quality_vocoder.py --eval-only --workdir /tmp/quality_vocoder
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)

import numpy as np

from tensorflow_tts.audio.griffin_lim import TFGriffinLim
from tensorflow_tts.bin import preprocess
from tensorflow_tts.configs.preprocess import PreprocessConfig
from tensorflow_tts.metrics import evaluate_pair, log_mel_l1
from tensorflow_tts.recipes.vocoder import VocoderGanTrainer, build_train_parser, load_generator, run_vocoder_training
from tensorflow_tts.utils.logs import setup_logging
from tensorflow_tts.dump import layout
from measure import TimeBudget, peak_gpu_memory_mib

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "test" / "files" / "corpus" / "ljspeech"
PREPROCESS_CONFIG = REPO / "preprocess" / "ljspeech_preprocess.yaml"
TINY_CONFIG = REPO / "examples" / "multiband_melgan" / "conf" / "multiband_melgan.tiny.yaml"


class TimeBudgetTrainer(TimeBudget, VocoderGanTrainer):
    """The vocoder trainer, stopping at the time budget."""


# (name, column label, better, judged): the figures printed per system; the judged ones decide the goal.
FIGURES = (("pesq", "PESQ", "higher", True), ("stoi", "STOI", "higher", True), ("mr_stft", "MR-STFT", "lower", True),
           ("log_mel_l1", "logmel", "lower", False), ("log_mel_l1_unfloored", "raw logmel", "lower", False))


def scores(audio, reference, features):
    """The FIGURES of `audio` against the recording, in order (NaN where a metric could not be computed)."""
    values, failures = evaluate_pair(reference, audio, features.sampling_rate,
                                     ("pesq", "stoi", "mr_stft", "log_mel_l1"), features)
    for name, reason in failures.items():
        print(f"  {name} not computed: {reason}")
    values["log_mel_l1_unfloored"] = log_mel_l1(reference, audio, features, floor=None)
    return [values.get(name, float("nan")) for name, *_ in FIGURES]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-minutes", type=float, default=10.0, help="training budget (at most 20 on 2 cores)")
    parser.add_argument("--config", default=str(TINY_CONFIG))
    parser.add_argument("--workdir", default=None, help="dump and experiment folder (default: a temporary one)")
    parser.add_argument("--griffin-lim-iters", type=int, default=60)
    parser.add_argument("--eval-only", action="store_true", help="evaluate the run already in --workdir")
    parser.add_argument("--dump-dir", default=None, help="an existing dump of the bundled corpus (default: preprocess it "
                        "into --workdir)")
    parser.add_argument("--mixed-precision", action="store_true", help="train in mixed precision (float16 on GPU)")
    args = parser.parse_args(argv)
    setup_logging(0)

    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="quality_vocoder_"))
    dump = Path(args.dump_dir) if args.dump_dir else workdir / "dump"
    outdir = workdir / "exp"
    start = time.monotonic()
    if args.eval_only:
        steps, train_minutes, steps_per_second = None, 0.0, None
    else:
        steps, train_minutes, steps_per_second = train(args, dump, outdir)
    rows = evaluate(dump, outdir, args.griffin_lim_iters)
    means = {system: np.mean([row[system] for row in rows.values()], axis=0) for system in ("vocoder", "griffin_lim")}
    print(f"\n{Path(args.config).name}: {steps} steps in {train_minutes:.1f} min (budget {args.max_minutes:g} min); "
          f"Griffin-Lim: {args.griffin_lim_iters} iterations. Judged: PESQ-WB, STOI (higher is better), MR-STFT "
          "(lower); log-mel L1 floored at 1e-5 and unfloored for information only")
    columns = [f"{label} {system}" for _, label, _, _ in FIGURES for system in ("voc", "GL")]
    print(f"{'utterance':<14}" + "".join(f"{column:>15}" for column in columns))
    for utt_id, row in [*rows.items(), ("mean", means)]:
        values = [row[system][index] for index in range(len(FIGURES)) for system in ("vocoder", "griffin_lim")]
        print(f"{utt_id:<14}" + "".join(f"{value:>15.4f}" for value in values))
    summary = {
        "steps": steps,
        "train_minutes": round(train_minutes, 2),
        "steps_per_second": steps_per_second,
        "peak_gpu_memory_mib": peak_gpu_memory_mib(),
        "mixed_precision": args.mixed_precision,
        "total_minutes": round((time.monotonic() - start) / 60, 2),
        **{system: {name: round(float(value), 4) for (name, *_), value in zip(FIGURES, means[system])}
           for system in ("vocoder", "griffin_lim")},
        "workdir": str(workdir),
    }
    wins = {name: bool(means["vocoder"][index] > means["griffin_lim"][index] if better == "higher"
                       else means["vocoder"][index] < means["griffin_lim"][index])
            for index, (name, _, better, judged) in enumerate(FIGURES) if judged}
    summary["vocoder_beats_griffin_lim"] = {**wins, "all": all(wins.values())}
    print(json.dumps(summary))
    return 0 if summary["vocoder_beats_griffin_lim"]["all"] else 1


def train(args, dump, outdir):
    """Preprocess the corpus into `dump` (unless --dump-dir) and train within the budget;
    returns (steps, minutes, steps per second after the first)."""
    if not args.dump_dir:
        status = preprocess.main(
            ["--rootdir", str(CORPUS), "--outdir", str(dump), "--config", str(PREPROCESS_CONFIG), "--dataset",
             "ljspeech", "--verbose", "0"]
        )
        if status:
            sys.exit(f"preprocessing failed with status {status}")

    train_args = build_train_parser("").parse_args(
        ["--train-dir", str(dump / "train"), "--dev-dir", str(dump / "valid"), "--outdir", str(outdir),
         "--config", args.config, "--use-norm", "1", "--verbose", "0",
         "--mixed_precision", str(int(args.mixed_precision))]
    )
    TimeBudgetTrainer.deadline = time.monotonic() + args.max_minutes * 60
    train_start = time.monotonic()
    trainer = run_vocoder_training(train_args, trainer_class=TimeBudgetTrainer)
    return trainer.steps, (time.monotonic() - train_start) / 60, trainer.steps_per_second()


def evaluate(dump, outdir, griffin_lim_iters):
    """{utt_id: {"vocoder": [figures], "griffin_lim": [figures]}} over the valid utterances (FIGURES order)."""
    features = PreprocessConfig.from_yaml(PREPROCESS_CONFIG)
    generator, _ = load_generator(outdir / "config.yml", outdir / "checkpoints")
    griffin_lim = TFGriffinLim(features)
    rows = {}
    split = dump / "valid"
    for utt_id in sorted(layout.load_utt_ids(dump, "valid")):
        reference = layout.load_feature(layout.WAVE, split, utt_id)
        norm_mel = layout.load_feature(layout.NORM_MEL, split, utt_id)
        vocoded = generator(norm_mel[np.newaxis], training=False).numpy()[0, :, 0]
        reconstructed = griffin_lim(layout.load_feature(layout.MEL, split, utt_id), n_iter=griffin_lim_iters).numpy()
        assert len(vocoded) == len(reconstructed) == len(reference)
        rows[str(utt_id)] = {"vocoder": scores(vocoded, reference, features),
                             "griffin_lim": scores(reconstructed, reference, features)}
    return rows


if __name__ == "__main__":
    sys.exit(main())
