"""Train FastSpeech (v1) from the durations in a dump.

    python examples/fastspeech/train_fastspeech.py \
        --train-dir ./dump/train/ --dev-dir ./dump/valid/ --outdir ./exp/fastspeech \
        --config examples/fastspeech/conf/fastspeech.v1.yaml --use-norm 1 --mixed_precision 0

The dump needs DUMP/<split>/durations/ (examples/fastspeech2/extract_durations.py writes
them from the built-in aligner; a Tacotron2 teacher or TextGrids work as well).
"""

import logging
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import tensorflow_tts  # noqa: E402,F401

import tensorflow as tf  # noqa: E402

from tensorflow_tts.recipes import acoustic as recipe_lib  # noqa: E402
from tensorflow_tts.configs.base_config import ConfigError  # noqa: E402
from tensorflow_tts.losses.spectrogram import log_duration_loss, masked_mel_mae  # noqa: E402
from tensorflow_tts.models import TFFastSpeech  # noqa: E402
from tensorflow_tts.optimizers import create_optimizer  # noqa: E402
from tensorflow_tts.trainers import Seq2SeqBasedTrainer  # noqa: E402
from tensorflow_tts.alignment.durations import fix_batch_durations  # noqa: E402
from tensorflow_tts.dump.screening import DumpCheckError  # noqa: E402

logger = logging.getLogger("tensorflow_tts.train_fastspeech")


class FastSpeechTrainer(Seq2SeqBasedTrainer):
    """FastSpeech's losses: log-duration MSE and mel L1 before/after the postnet.

    Duration targets are the batch's ``duration_gts``, repaired to sum to the mel lengths.
    """

    def call_model(self, batch, training):
        durations = fix_batch_durations(batch["duration_gts"], batch["input_lengths"], batch["mel_lengths"])
        mel_before, mel_after, duration_outputs = self.model(
            batch["input_ids"], batch["speaker_ids"], durations, training=training,
            num_frames=tf.shape(batch["mel_gts"])[1],  # the padded length: static shapes under jit_compile
        )
        return {
            "mel_before": mel_before,
            "mel_after": mel_after,
            "duration_outputs": duration_outputs,
            "duration_targets": durations,
        }

    def compute_per_example_losses(self, batch, outputs):
        mel_lengths = batch["mel_lengths"]
        return {
            "duration_loss": log_duration_loss(outputs["duration_targets"], outputs["duration_outputs"], batch["input_lengths"]),
            "mel_loss_before": masked_mel_mae(batch["mel_gts"], outputs["mel_before"], mel_lengths),
            "mel_loss_after": masked_mel_mae(batch["mel_gts"], outputs["mel_after"], mel_lengths),
        }


def parse_args(argv=None):
    parser = recipe_lib.training_parser("Train FastSpeech (TensorFlowTTS flags).", "examples/fastspeech/conf/*.yaml")
    return recipe_lib.parse_training_args(parser, argv)


def main(argv=None):
    args = parse_args(argv)
    recipe_lib.setup_logging(args.verbose)
    from tensorflow_tts.utils import return_strategy

    strategy = return_strategy()
    try:
        recipe = recipe_lib.load_recipe(args.config, "fastspeech", outdir=args.outdir)
        if recipe.use_griffin:
            logger.warning(
                "%s: use_griffin is ignored here; only train_fastspeech2.py writes Griffin-Lim audio "
                "(1.8 read the key only in its LibriTTS FastSpeech2 script)",
                args.config,
            )
        dump_dir, train_split = recipe_lib.split_dir_parts(args.train_dir)
        if not recipe_lib.has_durations(dump_dir, train_split):
            raise FileNotFoundError(
                f"{dump_dir / train_split / 'durations'}: FastSpeech needs durations in the dump; write them "
                "with examples/fastspeech2/extract_durations.py (or tensorflow-tts-textgrid-to-durations)"
            )
        common = dict(
            use_norm=args.use_norm,
            with_durations=True,
            with_f0_energy=False,
            n_speakers=recipe.model_config.n_speakers,
            vocab_size=recipe.model_config.vocab_size,
            num_replicas=strategy.num_replicas_in_sync,
        )
        train_batches, _ = recipe_lib.build_dataset(args.train_dir, recipe.data_config, training=True, **common)
        valid_batches = None
        if args.dev_dir:
            valid_batches, _ = recipe_lib.build_dataset(args.dev_dir, recipe.data_config, training=False, **common)
    except (ConfigError, DumpCheckError, ValueError, FileNotFoundError) as error:
        logger.error("%s", error)
        return 2
    recipe_lib.write_config(recipe, args.outdir, {"use_norm": args.use_norm})
    trainer = FastSpeechTrainer(config=recipe.trainer_config, strategy=strategy, is_mixed_precision=args.mixed_precision)
    with strategy.scope():
        model = TFFastSpeech(config=recipe.model_config, name="fastspeech")
        model.build_once()
        trainer.compile(model, create_optimizer(recipe.optimizer_params, recipe.trainer_config.train_max_steps))
    trainer.fit(train_batches, valid_batches, resume=args.resume or None, pretrained=args.pretrained or None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
