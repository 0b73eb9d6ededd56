"""The dump layout, defined once (docs/dump_layout.md): split names, per-utterance file kinds, listing files.

Every reader and writer of a dump (preprocessing, datasets, extraction and decode
scripts, benchmarks) names its folders and files through these definitions.
"""

import dataclasses
import json
import os
import re
from pathlib import Path

import numpy as np

SPLITS = ("train", "valid")
REPORT_NAME = "preprocess_report.json"
# The preprocessing settings the dump was made with, so later stages can invert or check
# its features (e.g. Griffin-Lim audio at evaluation) without being told the YAML again.
CONFIG_NAME = "preprocess_config.yml"
# The processor's symbol table and speakers, `<dataset>_mapper.json` (processor.save_mapper).
MAPPER_GLOB = "*_mapper.json"
STATS_NAME = "stats.npy"
F0_STATS_NAME = "stats_f0.npy"
ENERGY_STATS_NAME = "stats_energy.npy"


class DumpError(ValueError):
    """A dump directory that does not follow docs/dump_layout.md, or options that do not fit it."""


@dataclasses.dataclass(frozen=True)
class FeatureKind:
    """One kind of per-utterance file: `<split>/<folder>/<utt><file_suffix>` holding `dtype`.

    `scalar` kinds hold a 0-D array (a speaker id); the others `(N, ...)`.
    """

    folder: str
    suffix: str
    dtype: str
    scalar: bool = False

    @property
    def file_suffix(self):
        """`-raw-feats.npy` for the mel kind: what follows the utterance id in a file name."""
        return f"-{self.suffix}.npy"

    def path(self, split_dir, utt_id):
        return Path(split_dir) / self.folder / f"{utt_id}{self.file_suffix}"

    def utt_id_of(self, file_name):
        """`LJ001-0001-raw-feats.npy` -> `LJ001-0001`; None for a file of another kind."""
        name = Path(file_name).name
        return name[: -len(self.file_suffix)] if name.endswith(self.file_suffix) else None

    def utt_ids(self, split_dir):
        """Sorted ids of the utterances that have this kind of file in `split_dir`."""
        folder = Path(split_dir) / self.folder
        if not folder.is_dir():
            return []
        return sorted(utt_id for utt_id in map(self.utt_id_of, os.listdir(folder)) if utt_id is not None)


IDS = FeatureKind("ids", "ids", "int32")
MEL = FeatureKind("raw-feats", "raw-feats", "float32")
NORM_MEL = FeatureKind("norm-feats", "norm-feats", "float32")
F0 = FeatureKind("raw-f0", "raw-f0", "float32")
ENERGY = FeatureKind("raw-energies", "raw-energy", "float32")
WAVE = FeatureKind("wavs", "wave", "float32")
SPEAKER_ID = FeatureKind("speaker-ids", "speaker-ids", "int32", scalar=True)
DURATIONS = FeatureKind("durations", "durations", "int32")
POSTNET = FeatureKind("postnets", "postnet", "float32")
# What preprocessing writes per utterance (durations come later, from an aligner).
PREPROCESS_KINDS = (IDS, MEL, NORM_MEL, F0, ENERGY, WAVE, SPEAKER_ID)
KINDS = PREPROCESS_KINDS + (DURATIONS, POSTNET)
# The two mel kinds by folder name (`--mel-folder` flags).
MEL_KINDS = {kind.folder: kind for kind in (MEL, NORM_MEL)}


def read_speakers_map(dump_dir):
    """(mapper path, its speakers_map {name: id}) of the mapper preprocessing saved in `dump_dir`;
    (None, None) when the dump has none. Two mappers, or one without a speakers_map, are a DumpError."""
    mappers = sorted(Path(dump_dir).glob(MAPPER_GLOB))
    if not mappers:
        return None, None
    if len(mappers) > 1:
        raise DumpError(f"{dump_dir}: several mappers ({', '.join(path.name for path in mappers)}); keep the one preprocessing wrote")
    try:
        speakers_map = json.loads(mappers[0].read_text(encoding="utf-8-sig"))["speakers_map"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise DumpError(f"{mappers[0]}: cannot read its speakers_map ({type(error).__name__}: {error})") from error
    if not isinstance(speakers_map, dict):
        raise DumpError(f"{mappers[0]}: speakers_map is not a mapping of speaker names to ids")
    return mappers[0], speakers_map


def mel_kind(use_norm):
    """The mel features a model trains on: normalised (`norm-feats`) or raw (`raw-feats`)."""
    return NORM_MEL if use_norm else MEL


_SAFE_UTT_ID = re.compile(r"^\w[\w.\-]*$")


def is_safe_utt_id(utt_id):
    """True for ids usable as a file-name stem: word characters, '.', '-'; no separators."""
    return isinstance(utt_id, str) and bool(_SAFE_UTT_ID.match(utt_id)) and ".." not in utt_id


def save_feature(kind, split_dir, utt_id, value):
    path = kind.path(split_dir, utt_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, np.asarray(value, dtype=kind.dtype), allow_pickle=False)
    return path


def load_feature(kind, split_dir, utt_id):
    return np.load(kind.path(split_dir, utt_id), allow_pickle=False)


def utt_ids_path(dump_dir, split):
    """`DUMP/<split>_utt_ids.npy`: the ids of one split."""
    return Path(dump_dir) / f"{split}_utt_ids.npy"


def save_utt_ids(dump_dir, split, utt_ids):
    np.save(utt_ids_path(dump_dir, split), np.asarray(sorted(utt_ids), dtype=str))


def load_utt_ids(dump_dir, split):
    return read_utt_ids(utt_ids_path(dump_dir, split))


def split_utt_ids(dump_dir, split, kind=IDS):
    """The ids of a split: its listing file when there is one, else the files of `kind`."""
    listing = utt_ids_path(dump_dir, split)
    if listing.is_file():
        return read_utt_ids(listing)
    return kind.utt_ids(Path(dump_dir) / split)


def read_utt_ids(source):
    """Utterance ids from a `.npy` array of strings, a text file (one per line) or a list."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.suffix == ".npy":
            try:
                return [str(utt_id) for utt_id in np.load(path, allow_pickle=False).reshape(-1)]
            except ValueError as error:
                raise DumpError(
                    f"{path}: cannot read utterance ids ({error}); save them with np.save(path, np.array(ids))"
                ) from error
        lines = path.read_text(encoding="utf-8").splitlines()
        return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    return [str(utt_id) for utt_id in source]


# -- the sharded layout (docs/dump_layout.md, "Sharded dumps") --------------------------

SHARDS_FOLDER = "shards"
SHARD_INDEX_NAME = "index.npz"


def shard_index_path(split_dir):
    """`DUMP/<split>/shards/index.npz`: ids, lengths, speakers and shard ranges of a sharded split."""
    return Path(split_dir) / SHARDS_FOLDER / SHARD_INDEX_NAME


def shard_path(split_dir, kind, shard, num_shards):
    """`DUMP/<split>/shards/raw-feats-00003-of-00020.tfrecord`: shard `shard` of one feature kind."""
    return Path(split_dir) / SHARDS_FOLDER / f"{kind.folder}-{shard:05d}-of-{num_shards:05d}.tfrecord"


def is_sharded(split_dir):
    """True when the split is stored as TFRecord shards (it has a shard index)."""
    return shard_index_path(split_dir).is_file()
