"""FastSpeech2 recipe: its trainer (duration, F0/energy and mel losses, plus the built-in
aligner's when the dump has no durations), building the model, the train run, and decoding.

`examples/fastspeech2/train_fastspeech2.py` calls `train_main`, `decode_fastspeech2.py`
calls `decode_main` (the FastSpeech family's decoding, `recipes.fastspeech`).
"""

import logging

import numpy as np
import tensorflow as tf

from tensorflow_tts.alignment.durations import average_by_durations, fix_batch_durations, normalize_nonzero
from tensorflow_tts.configs.aligner import AlignerConfig
from tensorflow_tts.configs.base_config import ConfigError
from tensorflow_tts.dump.screening import DumpCheckError
from tensorflow_tts.layers.aligner import Aligner
from tensorflow_tts.losses.alignment import binarization_loss, forward_sum_loss, ramped_weight
from tensorflow_tts.losses.spectrogram import log_duration_loss, masked_mel_mae, masked_mse
from tensorflow_tts.models import TFFastSpeech2
from tensorflow_tts.optimizers import create_optimizer
from tensorflow_tts.recipes import acoustic as recipe_lib
from tensorflow_tts.recipes import fastspeech as fastspeech_recipe
from tensorflow_tts.trainers import Seq2SeqBasedTrainer

# The logger name the example script logged under, kept so log lines read as before.
logger = logging.getLogger("tensorflow_tts.train_fastspeech2")


# ---------------------------------------------------------------------------- training


class FastSpeech2Trainer(Seq2SeqBasedTrainer):
    """FastSpeech2's losses: log-duration MSE, F0/energy MSE, mel L1 before/after the postnet.

    With an aligner (``compile(model, optimizer, aligner=...)``), its hard durations
    (no gradient) are the duration targets and its forward-sum and binarization losses are
    added; otherwise the batch's ``duration_gts`` are used (repaired to sum to the mel
    lengths). F0 and energy targets: per token, the mean of the non-zero frame values
    over the token's frames, standardised with ``f0_stats``/``energy_stats`` ([mean, std]
    over voiced frames); per frame with ``variance_level: frame``. Batches carry raw F0
    and energy (AcousticDataset with normalize_f0_energy=False).

    Args: as BaseTrainer, plus aligner_config (AlignerConfig or dict: loss weights and the
        binarization schedule), f0_stats, energy_stats ([mean, std]; None = no scaling),
        griffin_lim (a TFGriffinLim for the dump's mels: evaluation then also writes
        Griffin-Lim audio of the predicted and target mels, 1.8's ``use_griffin``).
    """

    # Griffin-Lim iterations for the evaluation audio (1.8's value).
    GRIFFIN_LIM_ITERATIONS = 32

    def __init__(self, config, strategy=None, steps=0, epochs=0, is_mixed_precision=False,
                 aligner_config=None, f0_stats=None, energy_stats=None, griffin_lim=None):
        super().__init__(config, strategy=strategy, steps=steps, epochs=epochs, is_mixed_precision=is_mixed_precision)
        if isinstance(aligner_config, dict):
            aligner_config = AlignerConfig.from_dict(aligner_config, source="aligner_params")
        self.aligner_config = aligner_config or AlignerConfig()
        self.f0_stats = None if f0_stats is None else np.asarray(f0_stats, np.float32)
        self.energy_stats = None if energy_stats is None else np.asarray(energy_stats, np.float32)
        self.griffin_lim = griffin_lim
        self.aligner = None

    def compile(self, model, optimizer, aligner=None):
        """Attach the built model (and the built aligner, trained by the same optimizer)."""
        self.model = model
        self.aligner = aligner
        models = {"model": model} if aligner is None else {"model": model, "aligner": aligner}
        self.optimizer = self._register_group("model", models, optimizer).optimizer

    # ------------------------------------------------------------------ targets

    def _variance_targets(self, batch, durations):
        """Raw per-frame F0/energy (B, F) -> normalised targets (B, T) or (B, F)."""
        if self.model.config.variance_level == "token":
            f0 = average_by_durations(batch["f0_gts"], durations)
            energy = average_by_durations(batch["energy_gts"], durations)
        else:
            f0, energy = batch["f0_gts"], batch["energy_gts"]
        return normalize_nonzero(f0, self.f0_stats), normalize_nonzero(energy, self.energy_stats)

    def call_model(self, batch, training):
        """Batch: input_ids (B, T), speaker_ids (B,), mel_gts (B, F, num_mels), f0_gts/energy_gts (B, F),
        duration_gts (B, T) when there is no aligner.

        Returns: mel_before/mel_after (B, F, num_mels); duration_outputs/duration_targets (B, T);
        f0/energy outputs and targets (B, T), or (B, F) with ``variance_level: frame``; with the
        aligner also alignment_log_probs, alignment (soft) and alignment_hard (B, F, T).
        """
        input_lengths, mel_lengths = batch["input_lengths"], batch["mel_lengths"]
        outputs = {}
        if self.aligner is not None:
            aligned = self.aligner(batch["input_ids"], batch["mel_gts"], input_lengths, mel_lengths, training=training)
            durations = tf.stop_gradient(aligned["durations"])
            outputs.update(
                alignment_log_probs=aligned["log_probs"], alignment=aligned["soft"], alignment_hard=aligned["hard"]
            )
        else:
            durations = fix_batch_durations(batch["duration_gts"], input_lengths, mel_lengths)
        f0, energy = self._variance_targets(batch, durations)
        mel_before, mel_after, duration_outputs, f0_outputs, energy_outputs = self.model(
            batch["input_ids"], batch["speaker_ids"], durations, f0, energy, training=training,
            num_frames=tf.shape(batch["mel_gts"])[1],  # the padded length: static shapes under jit_compile
        )
        outputs.update(
            mel_before=mel_before,
            mel_after=mel_after,
            duration_outputs=duration_outputs,
            f0_outputs=f0_outputs,
            energy_outputs=energy_outputs,
            duration_targets=durations,
            f0_targets=f0,
            energy_targets=energy,
        )
        return outputs

    # ------------------------------------------------------------------ losses

    def _binarization_weight(self):
        """0 before binarization_start_steps, then a linear ramp to the weight over the warm-up."""
        config = self.aligner_config
        return ramped_weight(self.optimizer.iterations, config.binarization_loss_weight,
                             config.binarization_start_steps, config.binarization_warmup_steps)

    def compute_per_example_losses(self, batch, outputs):
        """Returns: (total (B,), {loss name: (B,)}); the aligner's losses enter the total weighted."""
        input_lengths, mel_lengths = batch["input_lengths"], batch["mel_lengths"]
        variance_lengths = input_lengths if self.model.config.variance_level == "token" else mel_lengths
        losses = {
            "duration_loss": log_duration_loss(outputs["duration_targets"], outputs["duration_outputs"], input_lengths),
            "f0_loss": masked_mse(outputs["f0_targets"], outputs["f0_outputs"], variance_lengths),
            "energy_loss": masked_mse(outputs["energy_targets"], outputs["energy_outputs"], variance_lengths),
            "mel_loss_before": masked_mel_mae(batch["mel_gts"], outputs["mel_before"], mel_lengths),
            "mel_loss_after": masked_mel_mae(batch["mel_gts"], outputs["mel_after"], mel_lengths),
        }
        total = tf.add_n(list(losses.values()))
        if self.aligner is not None:
            config = self.aligner_config
            losses["forward_sum_loss"] = forward_sum_loss(
                outputs["alignment_log_probs"], input_lengths, mel_lengths, config.blank_logprob
            )
            losses["binarization_loss"] = binarization_loss(outputs["alignment_hard"], outputs["alignment"], mel_lengths)
            total += config.forward_sum_loss_weight * losses["forward_sum_loss"]
            total += self._binarization_weight() * losses["binarization_loss"]
        return total, losses

    # ------------------------------------------------------------------ figures and audio

    def intermediate_results(self, batch, outputs):
        """Predicted vs target mel, and the soft and hard alignments, of the first utterance.

        With a `griffin_lim`, also its audio of that utterance's mels before and after the
        postnet and of the target mel, so the predictions can be listened to without a vocoder.
        """
        from tensorflow_tts.utils.plotting import plot_alignment, plot_mel_comparison

        mel_length = int(batch["mel_lengths"][0])
        input_length = int(batch["input_lengths"][0])
        images = {
            "mel": plot_mel_comparison(
                outputs["mel_after"][0], batch["mel_gts"][0], length=mel_length, title=f"step {self.steps}"
            )
        }
        durations = outputs["duration_targets"][0][:input_length]
        hard = np.zeros([mel_length, input_length], np.float32)
        hard[np.arange(mel_length), np.repeat(np.arange(input_length), durations)[:mel_length]] = 1.0
        images["alignment_hard"] = plot_alignment(hard, title=f"durations, step {self.steps}")
        if "alignment" in outputs:
            images["alignment"] = plot_alignment(
                outputs["alignment"][0],
                title=f"soft alignment, step {self.steps}",
                input_length=input_length,
                output_length=mel_length,
            )
        results = {"images": images}
        if self.griffin_lim is not None:
            mels = {
                "griffin_lim/before_postnet": outputs["mel_before"][0],
                "griffin_lim/after_postnet": outputs["mel_after"][0],
                "griffin_lim/target": batch["mel_gts"][0],
            }
            results["audios"] = {tag: self._griffin_lim_audio(mel[:mel_length]) for tag, mel in mels.items()}
        return results

    def _griffin_lim_audio(self, mel):
        """Args: one mel ``(T, num_mels)`` as the dump stores it. Returns (audio ``(T * hop,)``, sampling rate)."""
        audio = self.griffin_lim(np.asarray(mel, np.float32), n_iter=self.GRIFFIN_LIM_ITERATIONS)
        return audio.numpy(), self.griffin_lim.sampling_rate


def build_fastspeech2(model_config, aligner_config=None, num_mels=None):
    """The built FastSpeech2 model and, when asked, its built aligner (call in strategy.scope()).

    Args: model_config (FastSpeech2Config), aligner_config (AlignerConfig; None = no aligner),
        num_mels (the dump's mel bins; default: the model config's).
    Returns: (TFFastSpeech2, Aligner or None).
    """
    model = TFFastSpeech2(config=model_config, name="fastspeech2")
    model.build_once()
    aligner = None
    if aligner_config is not None:
        aligner = Aligner(aligner_config, model_config.vocab_size, num_mels or model_config.num_mels).build_once()
    return model, aligner


def parse_args(argv=None):
    """The training flags (`recipes.acoustic.training_parser`'s plus stats and 1.8's Griffin-Lim inputs)."""

    def extra_flags(parser):
        parser.add_argument("--f0-stat", default=None, help="stats_f0.npy (default: the dump's)")
        parser.add_argument("--energy-stat", default=None, help="stats_energy.npy (default: the dump's)")
        # 1.8's LibriTTS script spelled these two with underscores; only use_griffin: true reads them.
        parser.add_argument(
            "--dataset_config", default=None, help="use_griffin: the dump's preprocess YAML (default: DUMP/preprocess_config.yml)"
        )
        parser.add_argument("--dataset_stats", default=None, help="use_griffin: stats.npy (default: the dump's)")

    parser = recipe_lib.training_parser(
        "Train FastSpeech2 (TensorFlowTTS flags).", "examples/fastspeech2/conf/*.yaml", extra_flags
    )
    return recipe_lib.parse_training_args(parser, argv)


def train_main(argv=None):
    """Train FastSpeech2 (and the aligner when needed). Returns the exit status (2: bad config or dump)."""
    args = parse_args(argv)
    recipe_lib.setup_logging(args.verbose)
    from tensorflow_tts.utils import return_strategy

    strategy = return_strategy()  # before any tensor: it may split the CPU into replicas
    try:
        dump_dir, train_split = recipe_lib.split_dir_parts(args.train_dir)
        recipe = recipe_lib.load_recipe(args.config, "fastspeech2", outdir=args.outdir, dump_dir=dump_dir)
        recipe_lib.seed_run(recipe, args.seed)
        f0_stats = recipe_lib.stats_or_default(args.f0_stat, dump_dir, "stats_f0.npy")
        energy_stats = recipe_lib.stats_or_default(args.energy_stat, dump_dir, "stats_energy.npy")
        use_aligner = recipe.aligner_config.enabled
        if use_aligner is None:
            use_aligner = not recipe_lib.has_durations(dump_dir, train_split)
        replicas = strategy.num_replicas_in_sync
        logger.info(
            "training on %d replica(s); duration targets: %s",
            replicas, "built-in aligner" if use_aligner else "durations/ of the dump",
        )
        train_batches, valid_batches, train_dataset = recipe_lib.build_train_valid(
            args.train_dir,
            args.dev_dir,
            recipe.data_config,
            use_norm=args.use_norm,
            with_durations=not use_aligner,
            n_speakers=recipe.model_config.n_speakers,
            vocab_size=recipe.model_config.vocab_size,
            num_replicas=replicas,
            need_frames_per_token=use_aligner,
        )
        fastspeech_recipe.check_position_table(train_dataset, recipe.model_config)
        griffin_lim = None
        if recipe.use_griffin:
            griffin_lim = recipe_lib.eval_griffin_lim(
                recipe,
                args.dataset_config,
                dump_dir,
                args.dataset_stats or dump_dir / "stats.npy",
                use_norm=args.use_norm,
                num_mels=train_dataset.num_mels,
            )
            if griffin_lim is not None:
                logger.info("use_griffin: evaluation also writes Griffin-Lim audio of the predicted mels")
    except (ConfigError, DumpCheckError, ValueError, FileNotFoundError) as error:
        logger.error("%s", error)
        return 2
    recipe_lib.write_config(recipe, args.outdir, {"use_norm": args.use_norm, "use_internal_aligner": bool(use_aligner)})

    trainer = FastSpeech2Trainer(
        config=recipe.trainer_config,
        strategy=strategy,
        is_mixed_precision=args.mixed_precision,
        aligner_config=recipe.aligner_config,
        f0_stats=f0_stats,
        energy_stats=energy_stats,
        griffin_lim=griffin_lim,
    )
    with strategy.scope():
        model, aligner = build_fastspeech2(
            recipe.model_config, recipe.aligner_config if use_aligner else None, train_dataset.num_mels
        )
        optimizer = create_optimizer(recipe.optimizer_params, recipe.trainer_config.train_max_steps)
        trainer.compile(model, optimizer, aligner=aligner)
    trainer.fit(train_batches, valid_batches, resume=args.resume or None, pretrained=args.pretrained or None)
    return 0


main = train_main  # the name examples/fastspeech2/train_fastspeech2.py had


# ---------------------------------------------------------------------------- decoding


def parse_decode_args(argv=None):
    """The decoding flags, as `recipes.fastspeech.parse_decode_args` (FastSpeech2's description)."""
    return fastspeech_recipe.parse_decode_args(argv, model_type="fastspeech2")


def decode_main(argv=None):
    """Decode a dump split with a trained FastSpeech2 (predicted durations, F0, energy); see
    `recipes.fastspeech.decode_main`. Returns the exit status."""
    return fastspeech_recipe.decode_main(argv, model_type="fastspeech2")

