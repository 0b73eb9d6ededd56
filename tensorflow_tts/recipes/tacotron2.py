"""The Tacotron 2 recipe: its trainer (losses, teacher-forcing schedule, alignment images), its
training YAML, model building and loading, and the train/decode command lines.

`examples/tacotron2/train_tacotron2.py` and `decode_tacotron2.py` call `train_main` and
`decode_main`; the teacher-forced extraction (durations, postnet mels) is
`tensorflow_tts.recipes.tacotron2_extraction`.
"""

import dataclasses
import logging
from pathlib import Path

import numpy as np
import tensorflow as tf
from tqdm import tqdm

from tensorflow_tts.alignment.search import batch_monotonic_alignment_search
from tensorflow_tts.configs.base_config import BaseConfig, ConfigError
from tensorflow_tts.configs.data import AcousticDataConfig
from tensorflow_tts.configs.trainer import TrainerConfig
from tensorflow_tts.dump.screening import DumpCheckError
from tensorflow_tts.losses.alignment import binarization_loss, ramped_weight
from tensorflow_tts.losses.guided_attention import guided_attention_loss
from tensorflow_tts.losses.spectrogram import masked_mel_mae, masked_mel_mse
from tensorflow_tts.losses.stop_token import decoder_steps, stop_token_loss
from tensorflow_tts.models import TFTacotron2
from tensorflow_tts.optimizers import create_optimizer, pop_optimizer_params
from tensorflow_tts.dump import layout
from tensorflow_tts.recipes import acoustic
from tensorflow_tts.trainers import Seq2SeqBasedTrainer

# The names the example scripts logged under before their code moved here: log lines read as before.
logger = logging.getLogger("tensorflow_tts.train_tacotron2")
decode_logger = logging.getLogger("tensorflow_tts.decode_tacotron2")

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


# ---------------------------------------------------------------------------- recipe


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
    values, _, model_config, trainer_config, rest = acoustic.read_recipe(path, ("tacotron2",), outdir)
    rest.pop("use_norm", None)  # recorded in <outdir>/config.yml by training; the flag decides
    optimizer_params = pop_optimizer_params(rest, source=str(path))["optimizer_params"]
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


def load_model(config_path, checkpoint):
    """(recipe, the built Tacotron 2 with the checkpoint's weights)."""
    recipe = load_recipe(config_path)
    model = build_tacotron2(recipe.model_config)
    acoustic.restore_weights({"model": model}, checkpoint)
    return recipe, model


def build_datasets(recipe, train_dir, dev_dir, use_norm, num_replicas):
    """(train batches, valid batches or None, train AcousticDataset) over the global batch."""
    common = dict(
        use_norm=use_norm,
        with_durations=False,
        n_speakers=recipe.model_config.n_speakers,
        vocab_size=recipe.model_config.vocab_size,
        num_replicas=num_replicas,
    )
    train_batches, train_dataset = acoustic.build_dataset(train_dir, recipe.data_config, training=True, **common)
    valid_batches = None
    if dev_dir:
        valid_batches, _ = acoustic.build_dataset(dev_dir, recipe.data_config, training=False, **common)
    if train_dataset.num_mels != recipe.model_config.n_mels:
        raise ConfigError(
            f"the dump's mels have {train_dataset.num_mels} channels but n_mels is {recipe.model_config.n_mels}; "
            "set tacotron2_params.n_mels to match"
        )
    return train_batches, valid_batches, train_dataset


# ---------------------------------------------------------------------------- training command line


def parse_args(argv=None):
    """The train_tacotron2.py flags (the shared acoustic training flags; --dump-dir fills --train-dir/--dev-dir)."""
    parser = acoustic.training_parser("Train Tacotron 2 (TensorFlowTTS flags).", "examples/tacotron2/conf/*.yaml")
    return acoustic.parse_training_args(parser, argv)


def prepare(args, strategy, trainer_cls=Tacotron2Trainer):
    """(trainer, train batches, valid batches) from parsed flags; raises ConfigError/DumpCheckError."""
    recipe = load_recipe(args.config, outdir=args.outdir)
    acoustic.seed_run(recipe, args.seed)
    train_batches, valid_batches, _ = build_datasets(
        recipe, args.train_dir, args.dev_dir, args.use_norm, strategy.num_replicas_in_sync
    )
    replicas = strategy.num_replicas_in_sync
    logger.info("training on %d replica(s): global batch %d", replicas, recipe.data_config.batch_size * replicas)
    acoustic.write_config(recipe, args.outdir, {"use_norm": args.use_norm})
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


def train_main(argv=None):
    """The train_tacotron2.py command line; returns the exit status (2: bad config or dump)."""
    args = parse_args(argv)
    acoustic.setup_logging(args.verbose)
    from tensorflow_tts.utils import return_strategy

    strategy = return_strategy()  # before any tensor: it may split the CPU into replicas
    try:
        trainer, train_batches, valid_batches = prepare(args, strategy)
    except (ConfigError, DumpCheckError, ValueError, FileNotFoundError) as error:
        logger.error("%s", error)
        return 2
    trainer.fit(train_batches, valid_batches, resume=args.resume or None, pretrained=args.pretrained or None)
    return 0


# ---------------------------------------------------------------------------- decoding


def parse_decode_args(argv=None):
    """The decode_tacotron2.py flags: the shared decoding flags plus the attention window and step limit."""
    parser = acoustic.decoding_parser("Decode mels with a trained Tacotron 2.")
    parser.add_argument("--win-front", type=int, default=None, help="attention window behind the last peak")
    parser.add_argument("--win-back", type=int, default=None, help="and ahead of it (both or neither)")
    parser.add_argument("--maximum-iterations", type=int, default=None, help="decoder steps at most (default 4000)")
    args = parser.parse_args(argv)
    if (args.win_front is None) != (args.win_back is None):
        parser.error("give both --win-front and --win-back, or neither")
    if args.maximum_iterations is not None and args.maximum_iterations < 1:
        parser.error("--maximum-iterations must be >= 1")
    return args


def stop_length(stop_logits, reduction_factor, threshold):
    """Frames up to and including the first step whose r stop probabilities all pass the threshold
    (all frames when none does). stop_logits: (S * r,) -> int."""
    steps = np.asarray(stop_logits).reshape(-1, reduction_factor)
    stopped = np.all(1.0 / (1.0 + np.exp(-steps)) > threshold, axis=1)
    return int((np.argmax(stopped) + 1) * reduction_factor) if stopped.any() else int(steps.size)


def decode_main(argv=None):
    """The decode_tacotron2.py command line: free-running synthesis of a dump split.

    Writes <utt>-norm-feats.npy (or -raw-feats.npy with --use-norm 0), the mel after the postnet
    [frames, num_mels] cut at the first stop, and <utt>.png (prediction above the reference when
    the split has it, and the alignment). Returns the exit status (2: bad config, checkpoint or split).
    """
    args = parse_decode_args(argv)
    acoustic.setup_logging(args.verbose)
    try:
        _, model = load_model(args.config, args.checkpoint)
        utterances = acoustic.read_utterances(args.rootdir, args.num_samples, model.config, args.speaker_id)
    except (ConfigError, FileNotFoundError, ValueError) as error:
        decode_logger.error("%s", error)
        return 2
    from tensorflow_tts.utils.plotting import figure_to_array, plot_alignment, plot_mel_comparison

    if args.win_front is not None:
        model.setup_window(args.win_front, args.win_back)
    if args.maximum_iterations:
        model.setup_maximum_iterations(args.maximum_iterations)
    r, threshold = model.config.reduction_factor, model.config.stop_threshold
    rootdir, outdir = Path(args.rootdir), Path(args.outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    feats = layout.mel_kind(args.use_norm).suffix
    written = 0
    for start in tqdm(range(0, len(utterances), args.batch_size), desc="[decode]"):
        chunk = utterances[start : start + args.batch_size]
        width = max(len(ids) for _, ids, _ in chunk)
        input_ids = np.zeros([len(chunk), width], np.int32)
        for row, (_, ids, _) in enumerate(chunk):
            input_ids[row, : len(ids)] = ids
        lengths = np.array([len(ids) for _, ids, _ in chunk], np.int32)
        speakers = np.array([speaker for _, _, speaker in chunk], np.int32)
        _, mel_outputs, stop_logits, alignments = model.inference(
            tf.constant(input_ids), tf.constant(lengths), tf.constant(speakers)
        )
        mel_outputs, stop_logits, alignments = mel_outputs.numpy(), stop_logits.numpy(), alignments.numpy()
        for row, (utt_id, ids, _) in enumerate(chunk):
            length = stop_length(stop_logits[row], r, threshold)
            mel = mel_outputs[row, :length].astype(np.float32)
            if not acoustic.finite_or_warn(mel, utt_id):
                continue
            np.save(outdir / f"{utt_id}-{feats}.npy", mel, allow_pickle=False)
            reference_path = rootdir / feats / f"{utt_id}-{feats}.npy"
            reference = np.load(reference_path) if reference_path.is_file() else None
            figure = plot_mel_comparison(mel, reference, title=utt_id)
            alignment = plot_alignment(
                alignments[row].T, title=f"{utt_id} alignment", input_length=len(ids), output_length=length // r
            )
            image = np.concatenate([_fit_width(figure_to_array(figure), 1000), _fit_width(figure_to_array(alignment), 1000)])
            tf.io.write_file(str(outdir / f"{utt_id}.png"), tf.io.encode_png(image))
            if length == stop_logits.shape[1]:
                decode_logger.warning("%s: no stop within %d decoder steps (maximum_iterations); the mel is cut there",
                                      utt_id, length // r)
            written += 1
    acoustic.write_decoded_speakers(outdir, utterances, rootdir)
    decode_logger.info("wrote %d mel(s) and plot(s) to %s (%d skipped), their speakers to speakers.tsv",
                       written, outdir, len(utterances) - written)
    return 0


def _fit_width(image, width):
    """Pad (or crop) an [H, W, C] image to the given width with white."""
    if image.shape[1] >= width:
        return image[:, :width]
    return np.pad(image, [[0, 0], [0, width - image.shape[1]], [0, 0]], constant_values=255)
