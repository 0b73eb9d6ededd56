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
                     the path runs from the first 3 tokens to the last 3 (complete);
  word boundaries    how far (ms) the durations extract_duration.py would write put the start
                     of each word (after the first) from where espeak-ng, which spoke the
                     corpus, began it (test/files/corpus/ljspeech/word_starts.tsv); beside it
                     the same figure for durations spread evenly over the tokens. A sharp,
                     diagonal but uniform path scores well on the figures above and no
                     better than even durations here.
Also printed (not part of the goal): the MCD and log-F0 RMSE of the valid utterances decoded
free-running, vocoded with 60-iteration Griffin-Lim, against the recordings (`vocoded_scores.py`).
Goal: focus rate >= 0.7 and a monotonic alignment on every valid utterance (the issue's), and
word boundaries at most half as far off as even durations put them (ours: alignments are
read as durations for FastSpeech 2). Writes alignment_<utt>.png and figures.json into
--outdir; exits 1 when the goal is missed.
"""

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)

import numpy as np
import yaml

from tensorflow_tts.dump import layout
from tensorflow_tts.alignment.attention import alignment_quality
from tensorflow_tts.recipes import acoustic as recipe_lib
from tensorflow_tts.recipes.tacotron2 import Tacotron2Trainer, load_model, parse_args as train_args, prepare, stop_length
from tensorflow_tts.recipes.tacotron2_extraction import screen_split, teacher_forced_batches
from vocoded_scores import griffin_lim_scores

REPO = Path(__file__).resolve().parents[1]

logger = logging.getLogger("tensorflow_tts.quality_tacotron2")

TINY = REPO / "examples" / "tacotron2" / "conf" / "tacotron2.tiny.yaml"
CORPUS = REPO / "test" / "files" / "corpus" / "ljspeech"
WORD_STARTS = CORPUS / "word_starts.tsv"
# Word boundaries must be at most this fraction as far off as even durations put them.
BOUNDARY_ERROR_RATIO = 0.5


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
    if not layout.utt_ids_path(dump, "valid").is_file():
        status = preprocess.main(
            ["--rootdir", str(CORPUS), "--outdir", str(dump), "--config", str(REPO / "preprocess" / "ljspeech_preprocess.yaml"),
             "--dataset", "ljspeech", "--verbose", "0"]
        )
        if status not in (0, None):
            raise SystemExit(f"preprocessing the bundled corpus failed ({status})")
    return dump


def word_boundaries(dump, split, utt_ids):
    """Where the words of each utterance start, by the token and by espeak-ng's audio.

    Returns: ({utt_id: (first token of each timed word but the first [W-1], the mel frame
    (fractional) where espeak-ng began that word [W-1])}, milliseconds per frame). The
    tiny recipe's tokens are the characters of the normalized text (plus end of sequence);
    an utterance whose tokens are not is left out with a warning.
    """
    from tensorflow_tts.audio.load import load_audio
    from tensorflow_tts.audio.trim import silence_bounds
    from tensorflow_tts.configs import PreprocessConfig
    from tensorflow_tts.inference import AutoProcessor
    from tensorflow_tts.dump.layout import CONFIG_NAME, IDS

    config = PreprocessConfig.from_yaml(Path(dump) / CONFIG_NAME)
    processor = AutoProcessor.from_pretrained(dump)
    texts = dict(line.split("|")[::2] for line in (CORPUS / "metadata.csv").read_text(encoding="utf-8").splitlines())
    starts = {}
    for line in WORD_STARTS.read_text(encoding="utf-8").splitlines()[1:]:
        utt_id, offset, _, seconds = line.split("\t")
        starts.setdefault(utt_id, []).append((int(offset), float(seconds)))
    boundaries = {}
    for utt_id in utt_ids:
        symbols = processor.sequence_to_symbols(np.load(IDS.path(Path(dump) / split, utt_id)))
        if "".join(symbols[: len(texts.get(utt_id, ""))]) != texts.get(utt_id, "").lower() or utt_id not in starts:
            logger.warning("%s: its tokens are not the characters of its text in %s; left out of the word boundaries",
                           utt_id, WORD_STARTS.parent)
            continue
        audio, _ = load_audio(CORPUS / "wavs" / f"{utt_id}.wav", config.sampling_rate)
        trimmed = silence_bounds(audio, config.trim_threshold_in_db, config.trim_frame_size,
                                 config.trim_hop_size)[0] if config.trim_silence else 0
        tokens, seconds = np.array(starts[utt_id][1:]).T
        boundaries[utt_id] = (tokens.astype(int), (seconds * config.sampling_rate - trimmed) / config.hop_size)
    return boundaries, 1000.0 * config.hop_size / config.sampling_rate


def boundary_errors(durations, tokens, frames):
    """Mean |frames where `durations` start the tokens - frames| (same units as frames)."""
    return float(np.mean(np.abs(np.cumsum(np.concatenate([[0], durations]))[tokens] - frames)))


def measure(model, dump, split="valid", outdir=None):
    """Per-utterance (AlignmentQuality, the same from decoder step 1, word boundary error
    in ms, the same for even durations) of a split; PNGs of the alignments into outdir."""
    from tensorflow_tts.alignment.attention import durations_from_alignment
    from tensorflow_tts.utils.plotting import plot_alignment

    import tensorflow as tf

    # The prenet drops out at inference too: one seed, so measuring a model twice agrees.
    tf.keras.utils.set_random_seed(0)
    r = model.config.reduction_factor
    utt_ids, _ = screen_split(dump, split, True, r)
    boundaries, frame_ms = word_boundaries(dump, split, utt_ids)
    results = {}
    for item in teacher_forced_batches(model, dump, split, utt_ids, True, batch_size=8):
        steps = -(-item["mel_length"] // r)
        quality = alignment_quality(item["alignment"], item["input_length"], steps)
        # The first decoder step attends from an all-zero state: shown apart, not excused.
        later = alignment_quality(item["alignment"][:, 1:], item["input_length"], steps - 1)
        errors = (float("nan"), float("nan"))
        if item["utt_id"] in boundaries:
            durations = durations_from_alignment(item["alignment"], item["input_length"], item["mel_length"], r)
            even = np.full(item["input_length"], item["mel_length"] / item["input_length"])
            errors = tuple(frame_ms * boundary_errors(d, *boundaries[item["utt_id"]]) for d in (durations, even))
        results[item["utt_id"]] = (quality, later, *errors)
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
        _, model = load_model(config_path, args.checkpoint)
        return report(measure(model, dump, outdir=outdir), outdir, steps=None, minutes=0.0, vocoded=vocoded_scores(model, dump))
    flags = train_args(["--dump-dir", str(dump), "--outdir", str(outdir / "exp"), "--config", str(config_path)])
    trainer, train_batches, valid_batches = prepare(flags, strategy, trainer_cls=BudgetedTrainer)
    start = time.monotonic()
    trainer.deadline = start + 60.0 * args.max_minutes
    trainer.fit(train_batches, valid_batches)
    minutes = (time.monotonic() - start) / 60.0

    print(f"\ntrained {trainer.steps} steps in {minutes:.1f} min on {os.cpu_count()} CPU core(s)")
    return report(measure(trainer.model, dump, outdir=outdir), outdir, trainer.steps, minutes,
                  vocoded=vocoded_scores(trainer.model, dump))


def vocoded_scores(model, dump, split="valid"):
    """Decode `split` free-running (cut at the first stop, at most twice the longest recording),
    print and return the Griffin-Lim MCD and log-F0 RMSE of the mels against the recordings."""
    import tensorflow as tf

    utterances = recipe_lib.read_utterances(dump / split, None, model.config)
    r = model.config.reduction_factor
    longest = max(len(layout.load_feature(layout.NORM_MEL, dump / split, utt_id)) for utt_id, _, _ in utterances)
    model.setup_maximum_iterations(2 * longest // r)
    mels = {}
    for utt_id, ids, speaker in utterances:
        _, mel_outputs, stop_logits, _ = model.inference(
            tf.constant(ids[None]), tf.constant([len(ids)], tf.int32), tf.constant([speaker], tf.int32)
        )
        mels[utt_id] = mel_outputs.numpy()[0, : stop_length(stop_logits.numpy()[0], r, model.config.stop_threshold)]
    return griffin_lim_scores(dump, split, mels)


def report(results, outdir, steps, minutes, vocoded=None):
    """Print the figures, write figures.json (with `vocoded`, the Griffin-Lim MCD / log-F0 RMSE);
    0 when the goal is met, else 1."""
    print(f"{'utterance':<14}{'focus':>7}{'diagonal':>10}{'tokens':>8}{'back':>6}  monotonic complete  "
          "| from step 1: back monotonic complete | word boundary ms (even)")
    for utt_id, (quality, later, error, even_error) in results.items():
        print(
            f"{utt_id:<14}{quality.focus_rate:>7.3f}{quality.diagonal_coverage:>10.3f}{quality.token_coverage:>8.3f}"
            f"{quality.max_backward_jump:>6d}  {str(quality.monotonic):<9} {str(quality.complete):<9} | "
            f"{later.max_backward_jump:>17d} {str(later.monotonic):<9} {str(later.complete):<8} | "
            f"{error:>9.1f} ({even_error:.1f})"
        )
    qualities = [quality for quality, *_ in results.values()]
    focus = float(np.mean([quality.focus_rate for quality in qualities]))
    diagonal = float(np.mean([quality.diagonal_coverage for quality in qualities]))
    tokens = float(np.mean([quality.token_coverage for quality in qualities]))
    # A path stuck on the first tokens never moves back either: monotonic counts only complete ones.
    monotonic = sum(quality.monotonic and quality.complete for quality in qualities)
    monotonic_later = sum(later.monotonic and later.complete for _, later, *_ in results.values())
    # An utterance without word times (nan) counts against the goal rather than being dropped.
    boundary_error = float(np.mean([error for *_, error, _ in results.values()]))
    even_error = float(np.mean([even for *_, even in results.values()]))
    passed = focus >= 0.7 and monotonic == len(results) and boundary_error <= BOUNDARY_ERROR_RATIO * even_error
    print(f"focus rate {focus:.3f}, diagonal coverage {diagonal:.3f}, token coverage {tokens:.3f}, "
          f"monotonic and complete {monotonic}/{len(results)} ({monotonic_later}/{len(results)} from decoder step 1), "
          f"word boundaries {boundary_error:.1f} ms off (even durations: {even_error:.1f} ms): "
          f"goal {'met' if passed else 'MISSED'}")
    summary = {
        "steps": steps,
        "minutes": minutes,
        "focus_rate": focus,
        "diagonal_coverage": diagonal,
        "token_coverage": tokens,
        "monotonic": monotonic,
        "monotonic_from_step_1": monotonic_later,
        "word_boundary_error_ms": boundary_error,
        "even_durations_word_boundary_error_ms": even_error,
        "utterances": {
            utt_id: {**vars(quality), "from_step_1": vars(later), "word_boundary_error_ms": error,
                     "even_durations_word_boundary_error_ms": even}
            for utt_id, (quality, later, error, even) in results.items()
        },
        "griffin_lim_vocoded": vocoded,
        "goal_met": passed,
    }
    (outdir / "figures.json").write_text(json.dumps(summary, indent=2))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
