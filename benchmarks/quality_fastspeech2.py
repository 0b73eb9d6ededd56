"""FastSpeech2 quality on the bundled corpus: train the tiny config with the built-in aligner in a time budget.

    python benchmarks/quality_fastspeech2.py --max-minutes 20

Prints the last train and the valid losses, and on the valid utterances: the mel L1 between
`inference()` output (predicted durations, F0, energy) and the reference mel after DTW
alignment, next to the same figure for a baseline that predicts the train-set mean frame;
how many tokens the aligner and the duration predictor give 0 frames; and the mean
predicted/reference length ratio; then the MCD and log-F0 RMSE of the decoded valid
utterances, vocoded with 60-iteration Griffin-Lim, against the recordings
(`vocoded_scores.py`). Goal: model L1 < half the baseline's.
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

from tensorflow_tts.dump import layout
from tensorflow_tts.dump.statistics import read_stats
from tensorflow_tts.metrics import dtw_mel_l1
from tensorflow_tts.optimizers import create_optimizer
from tensorflow_tts.recipes import acoustic as recipe_lib
from tensorflow_tts.recipes.fastspeech2 import FastSpeech2Trainer, build_fastspeech2
from measure import TimeBudget, peak_gpu_memory_mib
from vocoded_scores import griffin_lim_scores

REPO = Path(__file__).resolve().parents[1]


class TimeBudgetTrainer(TimeBudget, FastSpeech2Trainer):
    """The FastSpeech2 trainer, stopping at the time budget."""


def preprocess_corpus(dump):
    from tensorflow_tts.bin import preprocess

    status = preprocess.main([
        "--rootdir", str(REPO / "test" / "files" / "corpus" / "ljspeech"), "--outdir", str(dump),
        "--config", str(REPO / "preprocess" / "ljspeech_preprocess.yaml"), "--dataset", "ljspeech", "--verbose", "0",
    ])
    if status:
        sys.exit(f"preprocessing failed ({status})")


def utterances(dump, split):
    for utt_id in layout.load_utt_ids(dump, split):
        yield utt_id, layout.load_feature(layout.IDS, dump / split, utt_id), layout.load_feature(layout.NORM_MEL, dump / split, utt_id)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-minutes", type=float, default=20.0, help="training time budget")
    parser.add_argument("--config", default=str(REPO / "examples" / "fastspeech2" / "conf" / "fastspeech2.tiny.yaml"))
    parser.add_argument("--dump-dir", default=None, help="an existing dump (default: preprocess the bundled corpus)")
    parser.add_argument("--outdir", default=None, help="default: a temporary folder")
    parser.add_argument("--mixed-precision", action="store_true", help="train in mixed precision (float16 on GPU)")
    args = parser.parse_args(argv)
    recipe_lib.setup_logging(0)
    outdir = Path(args.outdir or tempfile.mkdtemp(prefix="quality_fastspeech2_"))
    dump = Path(args.dump_dir) if args.dump_dir else outdir / "dump"
    if not args.dump_dir:
        preprocess_corpus(dump)

    recipe = recipe_lib.load_recipe(args.config, "fastspeech2", outdir=outdir / "exp")
    strategy = tf.distribute.get_strategy()
    common = dict(use_norm=True, with_durations=False, n_speakers=recipe.model_config.n_speakers,
                  vocab_size=recipe.model_config.vocab_size, num_replicas=1, need_frames_per_token=True)
    train_batches, train_dataset = recipe_lib.build_dataset(dump / "train", recipe.data_config, training=True, **common)
    valid_batches, _ = recipe_lib.build_dataset(dump / "valid", recipe.data_config, training=False, **common)
    trainer = TimeBudgetTrainer(
        config=recipe.trainer_config, strategy=strategy, aligner_config=recipe.aligner_config,
        f0_stats=read_stats(dump / "stats_f0.npy"), energy_stats=read_stats(dump / "stats_energy.npy"),
        is_mixed_precision=args.mixed_precision,
    )
    model, aligner = build_fastspeech2(recipe.model_config, recipe.aligner_config, train_dataset.num_mels)
    trainer.compile(model, create_optimizer(recipe.optimizer_params, recipe.trainer_config.train_max_steps), aligner=aligner)
    start = time.monotonic()
    trainer.deadline = start + 60.0 * args.max_minutes
    trainer.fit(train_batches, valid_batches)
    minutes = (time.monotonic() - start) / 60.0
    valid_losses = trainer.evaluate()

    train_losses = last_train_scalars(outdir / "exp" / "train")

    # Aligner durations on the train set (MAS gives each token >= 1 frame when frames >= tokens).
    aligner_zero = aligner_tokens = 0
    for batch in train_dataset.create(batch_size=16, shuffle=False, add_padding_ratio=False):
        durations = aligner(batch["input_ids"], batch["mel_gts"], batch["input_lengths"], batch["mel_lengths"])["durations"]
        for row, length in enumerate(batch["input_lengths"].numpy()):
            aligner_zero += int((durations[row, :length] == 0).numpy().sum())
            aligner_tokens += int(length)

    mean_frame = np.concatenate([mel for _, _, mel in utterances(dump, "train")]).mean(axis=0)
    model_l1, baseline_l1, ratios, predicted_zero, predicted_tokens, decoded = [], [], [], 0, 0, {}
    one = tf.constant([1.0])
    for utt_id, ids, reference in utterances(dump, "valid"):
        outputs = model.inference(tf.constant(ids[None], tf.int32), tf.constant([0], tf.int32), one, one, one)
        durations = outputs[2].numpy()[0]
        prediction = outputs[1].numpy()[0, : int(durations.sum())]
        decoded[utt_id] = prediction
        predicted_zero += int((durations == 0).sum())
        predicted_tokens += len(durations)
        ratios.append(len(prediction) / len(reference))
        model_l1.append(dtw_mel_l1(prediction, reference) if len(prediction) else float("nan"))
        baseline_l1.append(dtw_mel_l1(np.tile(mean_frame, (len(reference), 1)), reference))

    print(f"\ntrained {trainer.steps} steps in {minutes:.1f} min (budget {args.max_minutes} min)")
    print("train losses (last log window): " + ", ".join(f"{k}={v:.4f}" for k, v in sorted(train_losses.items())))
    print("valid losses:                   " + ", ".join(f"{k}={v:.4f}" for k, v in sorted(valid_losses.items())))
    model_mean, baseline_mean = float(np.mean(model_l1)), float(np.mean(baseline_l1))
    print(f"valid DTW-aligned mel L1: model {model_mean:.4f}, train-mean-frame baseline {baseline_mean:.4f} "
          f"(ratio {model_mean / baseline_mean:.3f}; goal < 0.5)")
    print(f"zero-frame tokens: aligner {aligner_zero}/{aligner_tokens} (train), "
          f"duration predictor {predicted_zero}/{predicted_tokens} (valid inference)")
    print(f"mean predicted/reference length ratio (valid): {np.mean(ratios):.3f}")
    vocoded = griffin_lim_scores(dump, "valid", decoded)
    print(f"outputs in {outdir}")
    print(json.dumps({"steps": trainer.steps, "train_minutes": round(minutes, 2),
                      "steps_per_second": trainer.steps_per_second(), "peak_gpu_memory_mib": peak_gpu_memory_mib(),
                      "mixed_precision": args.mixed_precision, "dtw_mel_l1": model_mean, "baseline_dtw_mel_l1": baseline_mean,
                      "griffin_lim_vocoded": vocoded}))


def last_train_scalars(logdir):
    """The loss scalars of the last train log window, from the TensorBoard events."""
    values = {}
    for path in sorted(Path(logdir).glob("events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                if "loss" in value.tag:
                    values[value.tag] = float(tf.make_ndarray(value.tensor)) if value.HasField("tensor") else value.simple_value
    return values


if __name__ == "__main__":
    main()
