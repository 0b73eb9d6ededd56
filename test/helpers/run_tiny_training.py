"""Train the tiny regressor (or with --gan the tiny GAN) in a fresh process (for multi-replica,
multi-worker, crash and resume tests).

Prints one JSON line {"steps", "epochs", "num_replicas", "strategy", "learning_rate"} and
writes the final weights to --weights-out (.npz; a GAN's generator's, then its discriminator's).
"""

import argparse
import json
import time

# Run as a script, so its own folder is first on sys.path: `tiny` is helpers/tiny.py.
from tiny import build_gan_trainer, build_seq2seq_trainer, make_dataset, make_gan_dataset, trainer_config

import numpy as np

from tensorflow_tts.trainers.base_trainer import _learning_rate
from tensorflow_tts.utils import return_strategy
from tensorflow_tts.utils.seeding import seed_everything


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
    parser.add_argument("--seed", type=int, default=None, help="global random seed (seed_everything)")
    parser.add_argument("--shuffle", action="store_true", help="reshuffle every epoch (and random crops for --gan)")
    parser.add_argument("--dropout", type=float, default=0.0, help="dropout rate inside the regressor")
    parser.add_argument("--gan", action="store_true", help="train the tiny GAN instead of the regressor")
    parser.add_argument("--discriminator-start", type=int, default=0, help="first step of the discriminator (--gan)")
    args = parser.parse_args()

    strategy = return_strategy()
    seed_everything(args.seed)
    global_batch_size = args.batch_size * strategy.num_replicas_in_sync
    config = trainer_config(
        args.outdir, train_max_steps=args.steps, save_interval_steps=args.save_interval, log_interval_steps=1,
        gradient_accumulation_steps=args.accumulation,
    )
    if args.gan:
        config["discriminator_train_start_steps"] = args.discriminator_start
        trainer = build_gan_trainer(config, strategy)
        dataset = make_gan_dataset(global_batch_size, num_examples=args.num_examples, shuffle=args.shuffle)
        optimizer = trainer._gen_optimizer
    else:
        trainer = build_seq2seq_trainer(config, strategy, dropout_rate=args.dropout)
        dataset = make_dataset(global_batch_size, num_examples=args.num_examples, shuffle=args.shuffle)
        optimizer = trainer.optimizer
    if args.step_delay:
        original = trainer._after_train_step

        def slow_after_step(*step_args):
            original(*step_args)
            time.sleep(args.step_delay)

        trainer._after_train_step = slow_after_step
    trainer.fit(dataset, resume=args.resume)
    if args.weights_out:
        np.savez(args.weights_out, *[weight for model in trainer.models.values() for weight in model.get_weights()])
    print(
        json.dumps(
            {
                "steps": trainer.steps,
                "epochs": trainer.epochs,
                "num_replicas": strategy.num_replicas_in_sync,
                "strategy": type(strategy).__name__,
                "learning_rate": _learning_rate(optimizer),
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
