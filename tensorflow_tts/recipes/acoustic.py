"""Wiring shared by the acoustic-model scripts (FastSpeech, FastSpeech2, Tacotron2): YAML parts, dump checks, datasets, weights.

Nothing model-specific is computed here; it only connects package pieces the way the
train/decode/extract scripts all need them.
"""

import argparse
import dataclasses
import logging
import os
from pathlib import Path

import numpy as np
import yaml

from tensorflow_tts.configs.aligner import AlignerConfig
from tensorflow_tts.configs.base_config import ConfigError
from tensorflow_tts.configs.data import AcousticDataConfig
from tensorflow_tts.configs.preprocess import PreprocessConfig
from tensorflow_tts.configs.registry import (
    model_config_from_yaml,
    read_yaml,
    split_training_yaml,
)
from tensorflow_tts.configs.trainer import TrainerConfig
from tensorflow_tts.datasets import AcousticDataset, DumpFeature, with_num_workers
from tensorflow_tts.datasets.shard_reader import read_shards
from tensorflow_tts.datasets.batching import pad_to_lengths
from tensorflow_tts.dump import layout
from tensorflow_tts.dump.screening import screen_utterances
from tensorflow_tts.dump.shards import ShardIndex, split_has
from tensorflow_tts.dump.statistics import load_mel_statistics, read_stats
from tensorflow_tts.optimizers import pop_optimizer_params
from tensorflow_tts.utils.logs import setup_logging  # noqa: F401  (re-exported for the scripts)
from tensorflow_tts.utils.checkpoints import restore_weights  # noqa: F401  (used by the recipes)
from tensorflow_tts.utils.seeding import seed_everything

logger = logging.getLogger("tensorflow_tts.recipe")

# Keys that TensorFlowTTS 1.8 recipes set but that no 1.8 code ever read: accepted so the
# old files load unchanged, and (as in 1.8) without effect. Key -> why it is ignored.
IGNORED_1_8_KEYS = {
    "delay_f0_energy_steps": "1.8's FastSpeech2 v2 recipes set it, but 1.8's trainer never read it",
}


# What training adds to the config.yml it writes (see `write_config`), so the file can be
# read back as a recipe (decoding with the config a run used).
RECORDED_FLAGS = ("use_norm", "use_internal_aligner")


@dataclasses.dataclass
class Recipe:
    """A training YAML split into the configs that read it."""

    model_type: str
    model_config: object
    trainer_config: TrainerConfig
    data_config: AcousticDataConfig
    optimizer_params: dict
    aligner_config: AlignerConfig
    values: dict  # the whole YAML mapping, as read
    # 1.8 key (its LibriTTS FastSpeech2 recipe): at each evaluation, also write Griffin-Lim
    # audio of the predicted mels (see `eval_griffin_lim`). Read by recipes.fastspeech2.
    use_griffin: bool = False


def _pop_1_8_only_keys(values, source):
    """Remove the 1.8 keys that no config class holds; returns use_griffin."""
    for key in sorted(set(values) & set(IGNORED_1_8_KEYS)):
        values.pop(key)
        logger.warning("%s: %s is ignored (%s)", source, key, IGNORED_1_8_KEYS[key])
    use_griffin = values.pop("use_griffin", False)
    if not isinstance(use_griffin, bool):
        raise ConfigError(f"{source}: use_griffin: expected true or false, got {use_griffin!r}")
    return use_griffin


def read_recipe(path, model_types, outdir=None, dump_dir=None):
    """The part every acoustic training YAML shares, read and checked.

    Args:
        model_types: the `model_type` values this caller trains; with one, it is also the
            default when the YAML has no `model_type`.
        outdir: overrides the trainer's `outdir`.
        dump_dir: the dump the model trains on or decodes; its speakers size the model
            (see `size_speakers`).

    Returns: (values: the whole mapping as read, `n_speakers: null` filled in, model_type,
        model config, TrainerConfig, rest: the remaining top-level keys, for the caller's
        own config classes).
    """
    values = read_yaml(path)
    model_type = values.get("model_type", model_types[0] if len(model_types) == 1 else None)
    if model_type not in model_types:
        if len(model_types) == 1:
            raise ConfigError(f"{path}: model_type is {model_type!r}; this script trains {model_types[0]!r}")
        raise ConfigError(f"{path}: model_type {model_type!r}: expected {' or '.join(model_types)}")
    size_speakers(values, model_type, dump_dir, path)
    model_blocks, rest = split_training_yaml(values)
    model_config = model_config_from_yaml({**model_blocks, "model_type": model_type}, source=str(path))
    trainer_config, rest = TrainerConfig.split(rest, source=str(path))
    if outdir is not None:
        trainer_config = dataclasses.replace(trainer_config, outdir=str(outdir))
    return values, model_type, model_config, trainer_config, dict(rest)


def load_recipe(path, expected_model_type, outdir=None, dump_dir=None):
    """Read a FastSpeech(2) training YAML; unknown keys anywhere are errors that name the file.

    1.8's ``use_griffin`` is read into ``Recipe.use_griffin``; the 1.8 keys that nothing read
    (`IGNORED_1_8_KEYS`) are accepted with a warning.

    expected_model_type: the script's model ("fastspeech2"), or None for either FastSpeech.
    dump_dir: the dump whose speakers size `n_speakers` (`size_speakers`).
    """
    model_types = ("fastspeech", "fastspeech2") if expected_model_type is None else (expected_model_type,)
    values, model_type, model_config, trainer_config, rest = read_recipe(path, model_types, outdir, dump_dir)
    use_griffin = _pop_1_8_only_keys(rest, str(path))
    for key in RECORDED_FLAGS:  # in the config.yml a run wrote; the command's flags decide
        rest.pop(key, None)
    optimizer_params = pop_optimizer_params(rest, source=str(path))["optimizer_params"]
    aligner_config = AlignerConfig.from_dict(rest.pop("aligner_params", None) or {}, source=f"{path}: aligner_params")
    data_config = AcousticDataConfig.from_dict(rest, source=str(path))
    return Recipe(
        model_type, model_config, trainer_config, data_config, optimizer_params, aligner_config, values, use_griffin
    )


def size_speakers(values, model_type, dump_dir, source):
    """Fit the model block's `n_speakers` to the speakers of the dump (its mapper's speakers_map).

    `n_speakers: null` becomes the dump's number of speakers (the largest speaker id + 1),
    written into `values` so the config saved with the run has it. A number smaller than
    that is a ConfigError (the speaker embedding could not hold every speaker id); a larger
    one is kept. Without a dump, or a dump without a mapper, null is a ConfigError.
    """
    block = values.get(f"{model_type}_params")
    configured = block.get("n_speakers", 1) if isinstance(block, dict) else 1  # 1: the configs' default
    where = f"{source}: {model_type}_params: n_speakers"
    mapper, speakers_map = layout.read_speakers_map(dump_dir) if dump_dir is not None else (None, None)
    if not speakers_map:
        if configured is None:
            found = f"{dump_dir} has no {layout.MAPPER_GLOB} with speakers" if dump_dir is not None else "this command reads no dump"
            raise ConfigError(f"{where}: null takes the number of speakers from the dump, but {found}; set a number")
        return
    needed = max(int(index) for index in speakers_map.values()) + 1
    if configured is None:
        block["n_speakers"] = needed
        logger.info("n_speakers: %d, the speakers of %s", needed, mapper)
    elif isinstance(configured, int) and configured < needed:
        raise ConfigError(
            f"{where} is {configured}, but {mapper} has {len(speakers_map)} speakers (ids up to {needed - 1}); "
            f"set n_speakers: {needed}, or null to take it from the dump"
        )


def seed_run(recipe, seed=None):
    """Seed the process from the recipe's `seed` key, or from ``seed`` (--seed) when given, which
    is then also what config.yml records; op determinism with `deterministic: true`.

    Call before building datasets and models. Raises ValueError for determinism without a seed.
    """
    if seed is not None:
        recipe.data_config.seed = seed
        recipe.values["seed"] = seed
    seed_everything(recipe.data_config.seed, recipe.trainer_config.deterministic)


def eval_griffin_lim(recipe, preprocess_config_path, dump_dir, mel_stats_path, *, use_norm, num_mels):
    """The TFGriffinLim that turns the dump's mels back into audio, for ``use_griffin``.

    Args:
        recipe: the loaded Recipe (its hop_size must be the preprocessing's).
        preprocess_config_path: the dump's preprocess YAML (--dataset_config); default: the
            `preprocess_config.yml` that preprocessing writes into the dump.
        dump_dir: the dump folder.
        mel_stats_path: the dump's stats.npy, read when ``use_norm`` (normalised mels).
        num_mels: mel bins of the dump.

    Returns None (with a warning: training goes on without the audio) when no preprocessing
    settings are found; settings that disagree with the dump are a ConfigError naming them.
    """
    from tensorflow_tts.audio.griffin_lim import TFGriffinLim

    if not preprocess_config_path:
        recorded = Path(dump_dir) / layout.CONFIG_NAME
        if not recorded.is_file():
            logger.warning(
                "use_griffin: %s has no %s (dumps made before it was written) and no --dataset_config was given; "
                "evaluation writes no Griffin-Lim audio. Pass --dataset_config preprocess/<corpus>_preprocess.yaml "
                "to get it", dump_dir, layout.CONFIG_NAME,
            )
            return None
        preprocess_config_path = recorded
    preprocess_config = PreprocessConfig.from_yaml(preprocess_config_path)
    for key, expected, where in (
        ("hop_size", recipe.data_config.hop_size, "the training YAML"),
        ("num_mels", num_mels, "the dump's mels"),
    ):
        if getattr(preprocess_config, key) != expected:
            raise ConfigError(
                f"{preprocess_config_path}: {key} is {getattr(preprocess_config, key)} but {where} has {expected}; "
                "pass the preprocess YAML the dump was made with"
            )
    stats = load_mel_statistics(mel_stats_path, num_mels) if use_norm else None
    return TFGriffinLim(preprocess_config, stats)


def split_dir_parts(split_dir):
    """dump/train -> (dump, "train"): the AcousticDataset arguments of a --train-dir/--dev-dir."""
    split_dir = Path(split_dir).resolve()
    return split_dir.parent, split_dir.name


def has_durations(dump_dir, split):
    return split_has(Path(dump_dir) / split, layout.DURATIONS)


def stats_or_default(path, dump_dir, name):
    """[mean, std] from --f0-stat/--energy-stat, else from the dump's own file."""
    return read_stats(path if path else Path(dump_dir) / name)


def build_dataset(split_dir, data_config, *, use_norm, with_durations, n_speakers, vocab_size, num_replicas,
                  training, need_frames_per_token=False, with_f0_energy=True):
    """Screen a dump split and batch it with the global batch (per-replica size x replicas).

    Returns: (tf.data.Dataset of batches, AcousticDataset).
    """
    dump_dir, split = split_dir_parts(split_dir)
    report = screen_utterances(
        dump_dir,
        split,
        mel_folder=layout.mel_kind(use_norm).folder,
        with_durations=with_durations,
        n_speakers=n_speakers,
        vocab_size=vocab_size,
        max_fix_frames=data_config.max_duration_fix_frames,
        need_frames_per_token=need_frames_per_token,
    )
    dataset = AcousticDataset(
        dump_dir,
        split,
        use_norm=use_norm,
        with_durations=with_durations,
        with_f0_energy=with_f0_energy,
        normalize_f0_energy=False,
        utt_ids=report.kept,
        mel_length_threshold=data_config.length_threshold(),
        max_mel_length=data_config.max_mel_length,
        allow_cache=data_config.allow_cache,
        cache_max_ram_fraction=data_config.cache_max_ram_fraction,
    )
    per_replica = data_config.batch_size if training else (data_config.eval_batch_size or data_config.batch_size)
    global_batch = per_replica * num_replicas
    max_batch = data_config.max_batch_size * num_replicas if data_config.max_batch_size else None
    shuffle = training and data_config.is_shuffle
    seed = 0 if data_config.seed is None else data_config.seed
    if not training or data_config.batching == "padded":
        batches = dataset.create(
            batch_size=global_batch,
            batching="padded",
            num_replicas=num_replicas,
            drop_remainder=training and len(dataset) >= global_batch,
            shuffle=shuffle,
            seed=seed,
        )
    elif data_config.batching == "bucket":
        batches = dataset.create(
            batch_size=None if data_config.batch_frames else global_batch,
            batch_frames=data_config.batch_frames * num_replicas if data_config.batch_frames else None,
            batching="bucket",
            max_batch_size=max_batch,
            num_replicas=num_replicas,
            shuffle=shuffle,
            seed=seed,
        )
    else:
        batches = dataset.create(
            batching="frames",
            batch_frames=data_config.batch_frames * num_replicas,
            max_batch_size=max_batch,
            num_replicas=num_replicas,
            drop_remainder=True,
            shuffle=shuffle,
            seed=seed,
        )
    if data_config.use_fixed_shapes:
        batches = pad_to_lengths(batches, dataset.longest_lengths(), dataset.padding_values)
    return with_num_workers(batches, data_config.num_workers), dataset


def build_train_valid(train_dir, dev_dir, data_config, **common):
    """`build_dataset` of the train split and, when ``dev_dir`` is given, of the valid split.

    ``common``: `build_dataset`'s keyword arguments other than ``training``.
    Returns: (train batches, valid batches or None, the train AcousticDataset).
    """
    train_batches, train_dataset = build_dataset(train_dir, data_config, training=True, **common)
    valid_batches = None
    if dev_dir:
        valid_batches, _ = build_dataset(dev_dir, data_config, training=False, **common)
    return train_batches, valid_batches, train_dataset


def write_config(recipe, outdir, extra=None):
    """Save the YAML actually used (plus the flags) to outdir/config.yml, as 1.8 did."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    values = dict(recipe.values)
    values.update(extra or {})
    with open(outdir / "config.yml", "w", encoding="utf-8") as stream:
        yaml.safe_dump(values, stream, sort_keys=False)


def as_bool(text):
    """1.8 passed booleans as 0/1 (``--use-norm 1``); accept those and true/false."""
    value = str(text).strip().lower()
    if value in ("1", "true", "yes"):
        return True
    if value in ("0", "false", "no"):
        return False
    raise ValueError(f"expected 0/1 or true/false, got {text!r}")


def read_ids(path):
    return np.load(path).astype(np.int32)


def _at_least_one(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: must be >= 1")
    return value


def decoding_parser(description):
    """The flags every acoustic decode script takes (1.8's); each script adds its own."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--rootdir", required=True, help="a dump split folder (holding ids/)")
    parser.add_argument("--outdir", required=True)
    parser.add_argument("--checkpoint", required=True, help="model-N.h5 (also 1.8's), ckpt-N or a checkpoint folder")
    parser.add_argument("--config", required=True)
    parser.add_argument("--batch-size", type=_at_least_one, default=8)
    parser.add_argument("--use-norm", default="1", type=as_bool, help="name outputs norm-feats (1) or raw-feats (0)")
    parser.add_argument("--num-samples", type=int, default=None, help="decode only the first N utterances")
    parser.add_argument(
        "--speaker-id", type=int, default=None,
        help="decode every utterance with this speaker (an id of the dump's speakers_map); default: each its own",
    )
    parser.add_argument("--verbose", type=int, default=1, choices=(0, 1, 2))
    return parser


def training_parser(description, config_help, extra_flags=None):
    """The flags every acoustic training script takes (TensorFlowTTS spellings kept).

    ``extra_flags(parser)`` adds a script's own flags; `parse_training_args` then fills
    --train-dir/--dev-dir from --dump-dir.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--train-dir", default=None, help="dump/train (default: <dump-dir>/train)")
    parser.add_argument("--dev-dir", default=None, help="dump/valid (default: <dump-dir>/valid)")
    parser.add_argument("--dump-dir", default=None, help="convenience: sets --train-dir and --dev-dir (and stats)")
    parser.add_argument("--outdir", required=True, help="checkpoints, TensorBoard logs, predictions")
    parser.add_argument("--config", required=True, help=config_help)
    parser.add_argument("--use-norm", default="1", type=as_bool, help="1: norm-feats, 0: raw-feats")
    parser.add_argument("--mixed_precision", default="0", type=as_bool, help="1: mixed precision")
    parser.add_argument("--resume", default="", help="checkpoint (ckpt-N or folder) to continue from")
    parser.add_argument("--pretrained", default="", help="weights to start from (.h5, also 1.8's, or checkpoint)")
    parser.add_argument("--verbose", type=int, default=1, choices=(0, 1, 2))
    parser.add_argument("--seed", type=int, default=None, help="overrides the YAML's seed (see seed_run)")
    if extra_flags is not None:
        extra_flags(parser)
    return parser


def parse_training_args(parser, argv=None):
    args = parser.parse_args(argv)
    if args.dump_dir:
        args.train_dir = args.train_dir or os.path.join(args.dump_dir, "train")
        args.dev_dir = args.dev_dir or os.path.join(args.dump_dir, "valid")
    if not args.train_dir:
        parser.error("give --train-dir (and --dev-dir) or --dump-dir")
    return args


def _ids_and_speakers(split_dir, num_samples):
    """(utt_id, ids (T,) int32, speaker id or 0) of the first `num_samples` utterances (all when None), either layout."""
    if layout.is_sharded(split_dir):
        index = ShardIndex.load(split_dir)
        count = min(num_samples or len(index.utt_ids), len(index.utt_ids))
        records = read_shards(index, [DumpFeature("input_ids", layout.IDS)], np.arange(count))
        for position, example in enumerate(records.as_numpy_iterator()):
            yield example["utt_ids"].decode(), example["input_ids"], max(int(index.speaker_ids[position]), 0)
        return
    folder = split_dir / layout.IDS.folder
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder; --rootdir must be a dump split such as dump/valid")
    utt_ids = layout.IDS.utt_ids(split_dir)
    for utt_id in utt_ids[:num_samples] if num_samples else utt_ids:
        speaker_path = layout.SPEAKER_ID.path(split_dir, utt_id)
        speaker = int(np.load(speaker_path).reshape(-1)[0]) if speaker_path.is_file() else 0
        yield utt_id, read_ids(layout.IDS.path(split_dir, utt_id)), speaker


def read_utterances(rootdir, num_samples, config, speaker_id=None):
    """[(utt_id, ids (T,) int32, speaker)] of a dump split to decode (the first ``num_samples``; all when None).

    The speaker is each utterance's own (speaker-ids/), or ``speaker_id`` for all of them.
    Empty token sequences are skipped with a warning; a token or speaker id the config cannot
    embed is a ConfigError naming the utterance.
    """
    if speaker_id is not None and not 0 <= speaker_id < config.n_speakers:
        raise ConfigError(f"--speaker-id {speaker_id}: the model has n_speakers {config.n_speakers} (ids 0..{config.n_speakers - 1})")
    utterances = []
    for utt_id, ids, speaker in _ids_and_speakers(Path(rootdir), num_samples):
        if ids.size == 0:
            logger.warning("%s: empty token sequence, skipped", utt_id)
            continue
        if ids.max() >= config.vocab_size:
            raise ConfigError(f"{utt_id}: token id {ids.max()} >= vocab_size {config.vocab_size}; wrong config for this dump")
        speaker = speaker if speaker_id is None else speaker_id
        if config.n_speakers > 1 and not 0 <= speaker < config.n_speakers:
            raise ConfigError(f"{utt_id}: speaker id {speaker} outside [0, {config.n_speakers}) (n_speakers of the config)")
        utterances.append((utt_id, ids, speaker))
    return utterances


def write_decoded_speakers(outdir, utterances, rootdir):
    """`outdir/speakers.tsv`: `utt_id<TAB>speaker_id<TAB>speaker_name` for each decoded utterance.

    Names come from the speakers_map of the dump above ``rootdir`` (empty when it has none).
    """
    _, speakers_map = layout.read_speakers_map(Path(rootdir).resolve().parent)
    names = {int(index): name for name, index in (speakers_map or {}).items()}
    lines = ["utt_id\tspeaker_id\tspeaker_name\n"]
    lines += [f"{utt_id}\t{speaker}\t{names.get(speaker, '')}\n" for utt_id, _, speaker in utterances]
    (Path(outdir) / "speakers.tsv").write_text("".join(lines), encoding="utf-8")


def finite_or_warn(values, utt_id, what="mel"):
    """True when every value is finite; else log one line naming the utterance (it is skipped, not written)."""
    bad = int(np.size(values) - np.count_nonzero(np.isfinite(values)))
    if bad:
        logging.getLogger("tensorflow_tts.decode").warning(
            "%s: the predicted %s has %d NaN or inf values (non-finite weights?); skipped, nothing written",
            utt_id, what, bad,
        )
    return not bad
