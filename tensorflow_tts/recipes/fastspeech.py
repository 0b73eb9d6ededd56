"""FastSpeech (v1) recipe: its trainer (duration and mel losses), the train run from a dump's
durations, and decoding a dump split with either FastSpeech model (FastSpeech2 is one).

`examples/fastspeech/train_fastspeech.py` calls `train_main`, `decode_fastspeech.py` calls
`decode_main`; `recipes.fastspeech2` reuses the decoding.
"""

import logging
from pathlib import Path

import numpy as np
import tensorflow as tf
from tqdm import tqdm

from tensorflow_tts.alignment.durations import fix_batch_durations
from tensorflow_tts.configs.base_config import ConfigError
from tensorflow_tts.dump import layout
from tensorflow_tts.dump.screening import DumpCheckError
from tensorflow_tts.losses.spectrogram import log_duration_loss, masked_mel_mae
from tensorflow_tts.models import TFFastSpeech
from tensorflow_tts.models.registry import MODEL_CLASSES
from tensorflow_tts.optimizers import create_optimizer
from tensorflow_tts.recipes import acoustic as recipe_lib
from tensorflow_tts.trainers import Seq2SeqBasedTrainer

# The logger names the example scripts logged under, kept so log lines read as before.
logger = logging.getLogger("tensorflow_tts.train_fastspeech")
decode_logger = logging.getLogger("tensorflow_tts.decode")

# The model types `decode_main` decodes: both take (ids, speakers, speed ratios[, f0, energy ratios]).
DECODABLE_MODEL_TYPES = ("fastspeech", "fastspeech2")


# ---------------------------------------------------------------------------- training


class FastSpeechTrainer(Seq2SeqBasedTrainer):
    """FastSpeech's losses: log-duration MSE and mel L1 before/after the postnet.

    Duration targets are the batch's ``duration_gts``, repaired to sum to the mel lengths.
    """

    def call_model(self, batch, training):
        """Batch: input_ids (B, T), speaker_ids (B,), duration_gts (B, T), mel_gts (B, F, num_mels).

        Returns: {mel_before, mel_after: (B, F, num_mels), duration_outputs, duration_targets: (B, T)}.
        """
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
        """Returns: {loss name: (B,)}."""
        mel_lengths = batch["mel_lengths"]
        return {
            "duration_loss": log_duration_loss(outputs["duration_targets"], outputs["duration_outputs"], batch["input_lengths"]),
            "mel_loss_before": masked_mel_mae(batch["mel_gts"], outputs["mel_before"], mel_lengths),
            "mel_loss_after": masked_mel_mae(batch["mel_gts"], outputs["mel_after"], mel_lengths),
        }


def check_position_table(dataset, config):
    """Training keeps to the position table: raise ValueError naming the longest utterance of
    ``dataset`` (an AcousticDataset) when its mel has more frames than ``max_position_embeddings``.

    Inference computes positions beyond the table, so a long synthesis works; a model is
    trained only on positions its config declares.
    """
    longest = int(np.argmax(dataset.mel_lengths))
    frames = int(dataset.mel_lengths[longest])
    if frames > config.max_position_embeddings:
        raise ValueError(
            f"{dataset.split_dir}: utterance {dataset.utt_ids[longest]} has {frames} mel frames, more than "
            f"max_position_embeddings ({config.max_position_embeddings}); raise max_position_embeddings or set "
            "max_mel_length to leave longer utterances out"
        )


def parse_args(argv=None):
    """The training flags (`recipes.acoustic.training_parser`'s; FastSpeech adds none)."""
    parser = recipe_lib.training_parser("Train FastSpeech (TensorFlowTTS flags).", "examples/fastspeech/conf/*.yaml")
    return recipe_lib.parse_training_args(parser, argv)


def train_main(argv=None):
    """Train FastSpeech from the durations in the dump. Returns the exit status (2: bad config or dump)."""
    args = parse_args(argv)
    recipe_lib.setup_logging(args.verbose)
    from tensorflow_tts.utils import return_strategy

    strategy = return_strategy()
    try:
        dump_dir, train_split = recipe_lib.split_dir_parts(args.train_dir)
        recipe = recipe_lib.load_recipe(args.config, "fastspeech", outdir=args.outdir, dump_dir=dump_dir)
        recipe_lib.seed_run(recipe, args.seed)
        if recipe.use_griffin:
            logger.warning(
                "%s: use_griffin is ignored here; only train_fastspeech2.py writes Griffin-Lim audio "
                "(1.8 read the key only in its LibriTTS FastSpeech2 script)",
                args.config,
            )
        if not recipe_lib.has_durations(dump_dir, train_split):
            raise FileNotFoundError(
                f"{dump_dir / train_split / 'durations'}: FastSpeech needs durations in the dump; write them "
                "with examples/fastspeech2/extract_durations.py (or tensorflow-tts-textgrid-to-durations)"
            )
        train_batches, valid_batches, train_dataset = recipe_lib.build_train_valid(
            args.train_dir,
            args.dev_dir,
            recipe.data_config,
            use_norm=args.use_norm,
            with_durations=True,
            with_f0_energy=False,
            n_speakers=recipe.model_config.n_speakers,
            vocab_size=recipe.model_config.vocab_size,
            num_replicas=strategy.num_replicas_in_sync,
        )
        check_position_table(train_dataset, recipe.model_config)
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


main = train_main  # the name examples/fastspeech/train_fastspeech.py had


# ---------------------------------------------------------------------------- decoding


def parse_decode_args(argv=None, model_type="fastspeech"):
    """The decoding flags (`recipes.acoustic.decoding_parser`'s plus the prosody ratios)."""
    parser = recipe_lib.decoding_parser(f"Decode mels with a trained {model_type}.")
    parser.add_argument("--f0-stat", default=None, help="accepted for compatibility; predictions stay normalised")
    parser.add_argument("--energy-stat", default=None, help="accepted for compatibility")
    parser.add_argument("--speed-ratio", type=float, default=1.0, help="> 0; 2.0 = twice as fast")
    parser.add_argument("--f0-ratio", type=float, default=1.0)
    parser.add_argument("--energy-ratio", type=float, default=1.0)
    args = parser.parse_args(argv)
    if not args.speed_ratio > 0:
        parser.error(f"--speed-ratio {args.speed_ratio}: must be > 0 (1.0 = normal speed, 2.0 = twice as fast)")
    return args


def decode_main(argv=None, model_type="fastspeech"):
    """Write <utt>-{norm,raw}-feats.npy (the mel after the postnet, (frames, num_mels)) and <utt>.png
    for the utterances of a dump split, with predicted durations (and F0/energy for FastSpeech2),
    each with its own speaker or all with --speaker-id; speakers.tsv says which.

    model_type: one of `DECODABLE_MODEL_TYPES`. Returns the exit status (2: bad config or input).
    """
    from tensorflow_tts.utils.plotting import plot_mel_comparison  # matplotlib: only when decoding

    args = parse_decode_args(argv, model_type)
    recipe_lib.setup_logging(args.verbose)
    try:
        dump_dir, _ = recipe_lib.split_dir_parts(args.rootdir)
        recipe = recipe_lib.load_recipe(args.config, model_type, dump_dir=dump_dir)
        utterances = recipe_lib.read_utterances(args.rootdir, args.num_samples, recipe.model_config, args.speaker_id)
        model = MODEL_CLASSES[model_type](config=recipe.model_config, name=model_type)
        model.build_once()
        recipe_lib.restore_weights({"model": model}, args.checkpoint)
    except (ConfigError, layout.DumpError, FileNotFoundError, ValueError) as error:  # ValueError: another model's weights
        decode_logger.error("%s", error)
        return 2
    rootdir, outdir = Path(args.rootdir), Path(args.outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    mel_kind = layout.mel_kind(args.use_norm)
    written = 0
    for start in tqdm(range(0, len(utterances), args.batch_size), desc="[decode]"):
        batch_ids = utterances[start : start + args.batch_size]
        if not batch_ids:
            continue
        width = max(len(ids) for _, ids, _ in batch_ids)
        input_ids = np.zeros([len(batch_ids), width], np.int32)
        for row, (_, ids, _) in enumerate(batch_ids):
            input_ids[row, : len(ids)] = ids
        speakers = np.array([speaker for _, _, speaker in batch_ids], np.int32)
        ratios = lambda value: np.full([len(batch_ids)], value, np.float32)  # noqa: E731
        inputs = [input_ids, speakers, ratios(args.speed_ratio)]
        if model_type == "fastspeech2":
            inputs += [ratios(args.f0_ratio), ratios(args.energy_ratio)]
        outputs = model.inference(*[tf.constant(value) for value in inputs])
        mel_after, durations = outputs[1].numpy(), outputs[2].numpy()
        for row, (utt_id, _, _) in enumerate(batch_ids):
            length = int(durations[row].sum())
            mel = mel_after[row, :length].astype(np.float32)
            if not recipe_lib.finite_or_warn(mel, utt_id):
                continue
            np.save(outdir / f"{utt_id}{mel_kind.file_suffix}", mel, allow_pickle=False)
            reference_path = mel_kind.path(rootdir, utt_id)
            reference = np.load(reference_path) if reference_path.is_file() else None
            if length == 0:
                decode_logger.warning("%s: every predicted duration is 0; wrote an empty mel and no plot", utt_id)
            else:
                plot_mel_comparison(mel, reference, title=utt_id).savefig(outdir / f"{utt_id}.png")
            written += 1
    recipe_lib.write_decoded_speakers(outdir, utterances, rootdir)
    decode_logger.info("wrote %d mel(s) and plot(s) to %s (%d skipped), their speakers to speakers.tsv",
                       written, outdir, len(utterances) - written)
    return 0
