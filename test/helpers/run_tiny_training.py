"""Train the tiny regressor in a fresh process (for multi-replica, multi-worker and crash tests).

Prints one JSON line {"steps", "epochs", "num_replicas", "strategy", "learning_rate"} and
writes the final weights to --weights-out (.npz).
"""

import argparse
import json
import time

# Run as a script, so its own folder is first on sys.path: `tiny` is helpers/tiny.py.
from tiny import build_seq2seq_trainer, make_dataset, trainer_config

import numpy as np

from tensorflow_tts.trainers.base_trainer import _learning_rate
from tensorflow_tts.utils import return_strategy


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--outdir", required=True)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=4, help="per replica")
    parser.add_argument("--accumulation", type=int, default=1, help="gradient_accumulation_steps")
    parser.add_argument("--num-examples", type=int, default=16)
    parser.add_argument("--save-interval", type=int, default=1000)
    parser.add_argument("--step-delay", type=float, default=0.0, help="seconds slept after each step")
    parser.add_argument("--resume", default=None)
    parser.add_argument("--weights-out", default=None)
    args = parser.parse_args()

    strategy = return_strategy()
    global_batch_size = args.batch_size * strategy.num_replicas_in_sync
    config = trainer_config(
        args.outdir, train_max_steps=args.steps, save_interval_steps=args.save_interval, log_interval_steps=1,
        gradient_accumulation_steps=args.accumulation,
    )
    trainer = build_seq2seq_trainer(config, strategy)
    if args.step_delay:
        original = trainer._after_train_step

        def slow_after_step(*step_args):
            original(*step_args)
            time.sleep(args.step_delay)

        trainer._after_train_step = slow_after_step
    trainer.fit(make_dataset(global_batch_size, num_examples=args.num_examples), resume=args.resume)
    if args.weights_out:
        np.savez(args.weights_out, *trainer.model.get_weights())
    print(
        json.dumps(
            {
                "steps": trainer.steps,
                "epochs": trainer.epochs,
                "num_replicas": strategy.num_replicas_in_sync,
                "strategy": type(strategy).__name__,
                "learning_rate": _learning_rate(trainer.optimizer),
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
