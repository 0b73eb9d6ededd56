"""Train Tacotron 2 on a dump (teacher-forced, guided attention, scheduled teacher forcing).

    python examples/tacotron2/train_tacotron2.py \
        --train-dir ./dump/train/ --dev-dir ./dump/valid/ --outdir ./exp/tacotron2 \
        --config examples/tacotron2/conf/tacotron2.v1.yaml --use-norm 1 --mixed_precision 0
"""

import dataclasses
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import tensorflow_tts  # noqa: E402,F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)

import logging  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from tensorflow_tts.recipes import acoustic as recipe_lib  # noqa: E402  (dump screening and batching, shared)
from tensorflow_tts.configs.base_config import BaseConfig, ConfigError  # noqa: E402
from tensorflow_tts.configs.data import AcousticDataConfig  # noqa: E402
from tensorflow_tts.configs.trainer import TrainerConfig  # noqa: E402
from tensorflow_tts.losses.alignment import binarization_loss, ramped_weight  # noqa: E402
from tensorflow_tts.losses.guided_attention import guided_attention_loss  # noqa: E402
from tensorflow_tts.losses.spectrogram import masked_mel_mae, masked_mel_mse  # noqa: E402
from tensorflow_tts.losses.stop_token import decoder_steps, stop_token_loss  # noqa: E402
from tensorflow_tts.models import TFTacotron2  # noqa: E402
from tensorflow_tts.optimizers import create_optimizer  # noqa: E402
from tensorflow_tts.trainers import Seq2SeqBasedTrainer  # noqa: E402
from tensorflow_tts.alignment.search import batch_monotonic_alignment_search  # noqa: E402
from tensorflow_tts.dump.screening import DumpCheckError  # noqa: E402

logger = logging.getLogger("tensorflow_tts.train_tacotron2")

MEL_LOSSES = {"mae": masked_mel_mae, "mse": masked_mel_mse}


@dataclasses.dataclass
class Tacotron2TrainingConfig(BaseConfig):
    """The Tacotron 2 keys of a training YAML besides the model, data, optimizer and loop keys.

    Scheduled teacher forcing (1.8 keys): until step `start_schedule_teacher_forcing` the
    decoder is fed the ground-truth previous frame (ratio 1); from then on the ratio falls
    linearly from `start_ratio_value` to `end_ratio_value` over `schedule_decay_steps` steps
    and stays there; the rest of each fed frame is the decoder's own previous frame.
    """

    start_schedule_teacher_forcing: int = 200001  # > train_max_steps: always teacher-forced
    start_ratio_value: float = 0.5
    schedule_decay_steps: int = 50000
    end_ratio_value: float = 0.0
    # --- new ---
    mel_loss_type: str = "mae"  # "mae" (1.8) or "mse", before and after the postnet
    stop_token_pos_weight: float = 5.0  # weight of the stop frames in the stop-token BCE
    guided_attention_sigma: float = 0.2  # width of the guided attention band (1.8: 0.2)
    guided_attention_weight: float = 1.0  # 0 switches the guided attention loss off
    # New: average the guided penalty over decoder steps only (1.8: over steps x tokens,
    # which makes it ~1/tokens as strong per step as the other losses).
    guided_attention_per_step: bool = False
    # Binarization loss on the attention (as the built-in aligner's, RAD-TTS): pulls every
    # decoder step's attention onto the token of the best monotonic path through the
    # attention itself. Experimental (README): it sharpens the attention but can let it run
    # ahead of the speech. Off (0) by default; ramps up linearly after the start step.
    attention_binarization_weight: float = 0.0
    attention_binarization_start_steps: int = 0
    attention_binarization_warmup_steps: int = 0

    def __post_init__(self):
        if self.mel_loss_type not in MEL_LOSSES:
            raise ValueError(f"mel_loss_type={self.mel_loss_type!r}: expected one of {', '.join(MEL_LOSSES)}")
        if self.stop_token_pos_weight <= 0:
            raise ValueError(f"stop_token_pos_weight={self.stop_token_pos_weight}: expected > 0")
        if self.guided_attention_sigma <= 0 or self.guided_attention_weight < 0:
            raise ValueError("guided_attention_sigma must be > 0 and guided_attention_weight >= 0")
        if self.attention_binarization_weight < 0:
            raise ValueError(f"attention_binarization_weight={self.attention_binarization_weight}: expected >= 0")
        if self.attention_binarization_start_steps < 0 or self.attention_binarization_warmup_steps < 0:
            raise ValueError("attention_binarization_start_steps and attention_binarization_warmup_steps must be >= 0")
        if self.schedule_decay_steps < 1:
            raise ValueError(f"schedule_decay_steps={self.schedule_decay_steps}: expected >= 1")
        for name in ("start_ratio_value", "end_ratio_value"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name}={getattr(self, name)}: expected a ratio in [0, 1]")


def teacher_forcing_ratio(step, config):
    """The share of ground truth in the fed-back frame at a (0-based) step; works on tensors."""
    step = tf.cast(step, tf.float32)
    start = float(config.start_schedule_teacher_forcing)
    progress = tf.clip_by_value((step - start) / float(config.schedule_decay_steps), 0.0, 1.0)
    scheduled = config.start_ratio_value + (config.end_ratio_value - config.start_ratio_value) * progress
    return tf.where(step < start, 1.0, scheduled)


def attention_binarization_loss(alignments, input_lengths, steps):
    """Per-utterance binarization loss of Tacotron 2 attention.

    Args:
        alignments: (B, T_in, S) attention weights per decoder step.
        input_lengths: (B,) tokens; steps: (B,) decoder steps of each utterance.

    Returns: (B,) float32, -mean over steps of log(attention on the token that monotonic
    alignment search through the attention itself picks for that step).
    """
    soft = tf.transpose(tf.cast(alignments, tf.float32), [0, 2, 1])  # (B, S, T_in)
    _, path = batch_monotonic_alignment_search(tf.math.log(tf.maximum(soft, 1e-8)), input_lengths, steps)
    step_mask = tf.sequence_mask(steps, tf.shape(soft)[1], tf.float32)[:, :, tf.newaxis]
    hard = tf.one_hot(path, tf.shape(soft)[2]) * step_mask
    return binarization_loss(hard, soft, steps)


class Tacotron2Trainer(Seq2SeqBasedTrainer):
    """Tacotron 2's losses: mel L1 (or MSE) before and after the postnet, stop-token BCE with
    a positive weight, guided attention.

    Args: as BaseTrainer, plus training_config (Tacotron2TrainingConfig or dict: teacher
        forcing schedule and loss settings).
    """

    def __init__(self, config, strategy=None, steps=0, epochs=0, is_mixed_precision=False, training_config=None):
        super().__init__(config, strategy=strategy, steps=steps, epochs=epochs, is_mixed_precision=is_mixed_precision)
        if isinstance(training_config, dict):
            training_config = Tacotron2TrainingConfig.from_dict(training_config, source="tacotron2 training keys")
        self.training_config = training_config or Tacotron2TrainingConfig()
        self._mel_loss = MEL_LOSSES[self.training_config.mel_loss_type]

    def teacher_forcing_ratio(self):
        """Ratio for the current update (a tensor), or the Python 1.0 when it never changes."""
        if self.training_config.start_schedule_teacher_forcing >= self.config.train_max_steps:
            return 1.0  # the decoder loop then skips mixing altogether
        return teacher_forcing_ratio(self.optimizer.iterations, self.training_config)

    def call_model(self, batch, training):
        ratio = self.teacher_forcing_ratio() if training else 1.0
        if isinstance(ratio, tf.Tensor):
            ratio = tf.cast(ratio, self.model.compute_dtype)  # the frames' dtype under mixed precision
        decoder_output, mel_outputs, stop_logits, alignments = self.model(
            batch["input_ids"],
            batch["input_lengths"],
            batch["speaker_ids"],
            batch["mel_gts"],
            batch["mel_lengths"],
            training=training,
            teacher_forcing_ratio=ratio,
        )
        return {
            "mel_before": decoder_output,
            "mel_after": mel_outputs,
            "stop_logits": stop_logits,
            "alignment_history": alignments,
        }

    def compute_per_example_losses(self, batch, outputs):
        mel_lengths, input_lengths = batch["mel_lengths"], batch["input_lengths"]
        config = self.training_config
        steps = decoder_steps(mel_lengths, self.model.config.reduction_factor)
        losses = {
            "mel_loss_before": self._mel_loss(batch["mel_gts"], outputs["mel_before"], mel_lengths),
            "mel_loss_after": self._mel_loss(batch["mel_gts"], outputs["mel_after"], mel_lengths),
            "stop_token_loss": stop_token_loss(
                outputs["stop_logits"], mel_lengths, self.model.config.reduction_factor, config.stop_token_pos_weight
            ),
            "guided_attention_loss": guided_attention_loss(
                outputs["alignment_history"], input_lengths, steps, config.guided_attention_sigma,
                per_step=config.guided_attention_per_step,
            ),
        }
        total = (
            losses["mel_loss_before"]
            + losses["mel_loss_after"]
            + losses["stop_token_loss"]
            + config.guided_attention_weight * losses["guided_attention_loss"]
        )
        if config.attention_binarization_weight > 0:
            losses["attention_binarization_loss"] = attention_binarization_loss(
                outputs["alignment_history"], input_lengths, steps
            )
            weight = ramped_weight(self.optimizer.iterations, config.attention_binarization_weight,
                                   config.attention_binarization_start_steps, config.attention_binarization_warmup_steps)
            total += weight * losses["attention_binarization_loss"]
        return total, losses

    def intermediate_results(self, batch, outputs):
        """Predicted vs target mel and the alignment of the first validation utterance."""
        from tensorflow_tts.utils.plotting import plot_alignment, plot_mel_comparison

        mel_length = int(batch["mel_lengths"][0])
        input_length = int(batch["input_lengths"][0])
        steps = -(-mel_length // self.model.config.reduction_factor)
        alignment = np.asarray(outputs["alignment_history"][0]).T  # (decoder steps, tokens)
        images = {
            "mel": plot_mel_comparison(
                outputs["mel_after"][0], batch["mel_gts"][0], length=mel_length, title=f"step {self.steps}"
            ),
            "alignment": plot_alignment(
                alignment, title=f"alignment, step {self.steps}", input_length=input_length, output_length=steps
            ),
        }
        return {"images": images}


# ---------------------------------------------------------------------------- wiring


@dataclasses.dataclass
class Tacotron2Recipe:
    """A Tacotron 2 training YAML split into the configs that read it."""

    model_config: object
    trainer_config: TrainerConfig
    data_config: AcousticDataConfig
    training_config: Tacotron2TrainingConfig
    optimizer_params: dict
    values: dict  # the whole YAML mapping, as read


def load_recipe(path, outdir=None):
    """Read a Tacotron 2 training YAML; unknown keys anywhere are errors naming the file."""
    values, _, model_config, trainer_config, rest = recipe_lib.read_recipe(path, ("tacotron2",), outdir)
    rest.pop("use_norm", None)  # recorded in <outdir>/config.yml by training; the flag decides
    optimizer_params = rest.pop("optimizer_params", None) or {}
    training_names = {field.name for field in dataclasses.fields(Tacotron2TrainingConfig)}
    training_config = Tacotron2TrainingConfig.from_dict(
        {key: rest.pop(key) for key in list(rest) if key in training_names}, source=str(path)
    )
    data_config = AcousticDataConfig.from_dict(rest, source=str(path))
    return Tacotron2Recipe(model_config, trainer_config, data_config, training_config, optimizer_params, values)


def build_tacotron2(model_config):
    """The built model (call inside strategy.scope())."""
    model = TFTacotron2(config=model_config, name="tacotron2")
    model.build_once()
    return model


def build_datasets(recipe, train_dir, dev_dir, use_norm, num_replicas):
    """(train batches, valid batches or None, train AcousticDataset) over the global batch."""
    common = dict(
        use_norm=use_norm,
        with_durations=False,
        n_speakers=recipe.model_config.n_speakers,
        vocab_size=recipe.model_config.vocab_size,
        num_replicas=num_replicas,
    )
    train_batches, train_dataset = recipe_lib.build_dataset(train_dir, recipe.data_config, training=True, **common)
    valid_batches = None
    if dev_dir:
        valid_batches, _ = recipe_lib.build_dataset(dev_dir, recipe.data_config, training=False, **common)
    if train_dataset.num_mels != recipe.model_config.n_mels:
        raise ConfigError(
            f"the dump's mels have {train_dataset.num_mels} channels but n_mels is {recipe.model_config.n_mels}; "
            "set tacotron2_params.n_mels to match"
        )
    return train_batches, valid_batches, train_dataset


def parse_args(argv=None):
    parser = recipe_lib.training_parser("Train Tacotron 2 (TensorFlowTTS flags).", "examples/tacotron2/conf/*.yaml")
    return recipe_lib.parse_training_args(parser, argv)


def prepare(args, strategy, trainer_cls=Tacotron2Trainer):
    """(trainer, train batches, valid batches) from parsed flags; raises ConfigError/DumpCheckError."""
    recipe = load_recipe(args.config, outdir=args.outdir)
    train_batches, valid_batches, _ = build_datasets(
        recipe, args.train_dir, args.dev_dir, args.use_norm, strategy.num_replicas_in_sync
    )
    replicas = strategy.num_replicas_in_sync
    logger.info("training on %d replica(s): global batch %d", replicas, recipe.data_config.batch_size * replicas)
    recipe_lib.write_config(recipe, args.outdir, {"use_norm": args.use_norm})
    trainer = trainer_cls(
        config=recipe.trainer_config,
        strategy=strategy,
        is_mixed_precision=args.mixed_precision,
        training_config=recipe.training_config,
    )
    with strategy.scope():
        model = build_tacotron2(recipe.model_config)
        optimizer = create_optimizer(recipe.optimizer_params, recipe.trainer_config.train_max_steps)
        trainer.compile(model, optimizer)
    return trainer, train_batches, valid_batches


def main(argv=None):
    args = parse_args(argv)
    recipe_lib.setup_logging(args.verbose)
    from tensorflow_tts.utils import return_strategy

    strategy = return_strategy()  # before any tensor: it may split the CPU into replicas
    try:
        trainer, train_batches, valid_batches = prepare(args, strategy)
    except (ConfigError, DumpCheckError, ValueError, FileNotFoundError) as error:
        logger.error("%s", error)
        return 2
    trainer.fit(train_batches, valid_batches, resume=args.resume or None, pretrained=args.pretrained or None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
