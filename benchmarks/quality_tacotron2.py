"""Does Tacotron 2 learn to attend? Train the tiny recipe on the bundled corpus for a fixed time
budget, then print the alignment figures of every valid utterance.

    python benchmarks/quality_tacotron2.py --outdir /tmp/tacotron2_quality --max-minutes 30

Figures (teacher-forced alignments of the valid split, as extract_duration.py sees them):
  focus rate         mean over decoder steps of the largest attention weight (1 = one token
                     per step), averaged over the utterances;
  diagonal coverage  fraction of decoder steps whose most attended token lies within 0.2 of
                     the diagonal (token / tokens vs step / steps);
  token coverage     fraction of tokens that are the most attended one at some step;
  monotonic          the most attended token never moves back by more than one token, and
                     the path runs from the first 3 tokens to the last 3 (complete).
Goal: focus rate >= 0.7 and a monotonic alignment on every valid utterance. Writes
alignment_<utt>.png and figures.json into --outdir; exits 1 when the goal is missed.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import tensorflow_tts  # noqa: E402,F401

import logging  # noqa: E402

import numpy as np  # noqa: E402
import yaml  # noqa: E402

from tensorflow_tts.trainers import acoustic_recipe as recipe_lib  # noqa: E402
from tensorflow_tts.utils.alignments import alignment_quality  # noqa: E402
from examples.tacotron2.extract_duration import screen_split, teacher_forced_batches  # noqa: E402
from examples.tacotron2.train_tacotron2 import Tacotron2Trainer, parse_args as train_args, prepare  # noqa: E402

logger = logging.getLogger("tensorflow_tts.quality_tacotron2")

TINY = REPO / "examples" / "tacotron2" / "conf" / "tacotron2.tiny.yaml"
CORPUS = REPO / "test" / "files" / "corpus" / "ljspeech"


class BudgetedTrainer(Tacotron2Trainer):
    """Stops (and saves) after the first update past the deadline."""

    deadline = float("inf")

    def _after_train_step(self, micro_results, window):
        super()._after_train_step(micro_results, window)
        if time.monotonic() > self.deadline and self.steps < self.config.train_max_steps:
            logger.info("time budget spent at step %d", self.steps)
            # fit() reads train_max_steps from this same config object at every step.
            self.config.train_max_steps = self.steps


def make_dump(outdir):
    from tensorflow_tts.bin import preprocess

    dump = Path(outdir) / "dump"
    if not (dump / "valid_utt_ids.npy").is_file():
        status = preprocess.main(
            ["--rootdir", str(CORPUS), "--outdir", str(dump), "--config", str(REPO / "preprocess" / "ljspeech_preprocess.yaml"),
             "--dataset", "ljspeech", "--verbose", "0"]
        )
        if status not in (0, None):
            raise SystemExit(f"preprocessing the bundled corpus failed ({status})")
    return dump


def measure(model, dump, split="valid", outdir=None):
    """Per-utterance AlignmentQuality of a split; PNGs of the alignments into outdir."""
    from tensorflow_tts.utils.plotting import plot_alignment

    r = model.config.reduction_factor
    utt_ids, _ = screen_split(dump, split, True, r)
    results = {}
    for item in teacher_forced_batches(model, dump, split, utt_ids, True, batch_size=8):
        steps = -(-item["mel_length"] // r)
        quality = alignment_quality(item["alignment"], item["input_length"], steps)
        # The first decoder step attends from an all-zero state: shown apart, not excused.
        later = alignment_quality(item["alignment"][:, 1:], item["input_length"], steps - 1)
        results[item["utt_id"]] = (quality, later)
        if outdir is not None:
            figure = plot_alignment(
                item["alignment"].T,
                title=f"{item['utt_id']}: focus {quality.focus_rate:.2f}",
                input_length=item["input_length"],
                output_length=steps,
            )
            figure.savefig(Path(outdir) / f"alignment_{item['utt_id']}.png")
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--outdir", required=True, help="dump, training run, alignment PNGs, figures.json")
    parser.add_argument("--max-minutes", type=float, default=30.0, help="training time budget")
    parser.add_argument("--config", default=str(TINY))
    parser.add_argument("--max-steps", type=int, default=None, help="also stop after this many steps")
    parser.add_argument("--checkpoint", default=None, help="measure this trained model (with --config) instead of training")
    args = parser.parse_args(argv)
    outdir = Path(args.outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    from tensorflow_tts.utils import return_strategy

    strategy = return_strategy()
    dump = make_dump(outdir)
    recipe_lib.setup_logging(1)  # after preprocessing, which sets its own level
    config_path = Path(args.config)
    if args.max_steps:
        values = yaml.safe_load(config_path.read_text())
        values["train_max_steps"] = args.max_steps
        config_path = outdir / "config.yaml"
        config_path.write_text(yaml.safe_dump(values, sort_keys=False))
    if args.checkpoint:
        from examples.tacotron2.extract_duration import load_model

        _, model = load_model(config_path, args.checkpoint)
        return report(measure(model, dump, outdir=outdir), outdir, steps=None, minutes=0.0)
    flags = train_args(["--dump-dir", str(dump), "--outdir", str(outdir / "exp"), "--config", str(config_path)])
    trainer, train_batches, valid_batches = prepare(flags, strategy, trainer_cls=BudgetedTrainer)
    start = time.monotonic()
    trainer.deadline = start + 60.0 * args.max_minutes
    trainer.fit(train_batches, valid_batches)
    minutes = (time.monotonic() - start) / 60.0

    print(f"\ntrained {trainer.steps} steps in {minutes:.1f} min on {os.cpu_count()} CPU core(s)")
    return report(measure(trainer.model, dump, outdir=outdir), outdir, trainer.steps, minutes)


def report(results, outdir, steps, minutes):
    """Print the figures, write figures.json; 0 when the goal is met, else 1."""
    print(f"{'utterance':<14}{'focus':>7}{'diagonal':>10}{'tokens':>8}{'back':>6}  monotonic complete  | from step 1: back monotonic complete")
    for utt_id, (quality, later) in results.items():
        print(
            f"{utt_id:<14}{quality.focus_rate:>7.3f}{quality.diagonal_coverage:>10.3f}{quality.token_coverage:>8.3f}"
            f"{quality.max_backward_jump:>6d}  {str(quality.monotonic):<9} {str(quality.complete):<9} | "
            f"{later.max_backward_jump:>17d} {str(later.monotonic):<9} {later.complete}"
        )
    qualities = [quality for quality, _ in results.values()]
    focus = float(np.mean([quality.focus_rate for quality in qualities]))
    diagonal = float(np.mean([quality.diagonal_coverage for quality in qualities]))
    tokens = float(np.mean([quality.token_coverage for quality in qualities]))
    # A path stuck on the first tokens never moves back either: monotonic counts only complete ones.
    monotonic = sum(quality.monotonic and quality.complete for quality in qualities)
    monotonic_later = sum(later.monotonic and later.complete for _, later in results.values())
    passed = focus >= 0.7 and monotonic == len(results)
    print(f"focus rate {focus:.3f}, diagonal coverage {diagonal:.3f}, token coverage {tokens:.3f}, "
          f"monotonic and complete {monotonic}/{len(results)} ({monotonic_later}/{len(results)} from decoder step 1): "
          f"goal {'met' if passed else 'MISSED'}")
    summary = {
        "steps": steps,
        "minutes": minutes,
        "focus_rate": focus,
        "diagonal_coverage": diagonal,
        "token_coverage": tokens,
        "monotonic": monotonic,
        "monotonic_from_step_1": monotonic_later,
        "utterances": {utt_id: {**vars(quality), "from_step_1": vars(later)} for utt_id, (quality, later) in results.items()},
        "goal_met": passed,
    }
    (outdir / "figures.json").write_text(json.dumps(summary, indent=2))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
