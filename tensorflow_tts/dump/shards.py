"""Sharded dumps: the per-utterance `.npy` features of a split packed into TFRecord shards, plus one index.

Each feature kind gets its own shard files, and shard `s` of every kind holds the same
utterances in the same order (one record per utterance: the array's raw little-endian
bytes), so a reader opens only the kinds it needs. The index (`shards/index.npz`) holds
the ids, the first-dimension length of every kind, speaker ids and the shard ranges,
so a dataset starts from that one file. docs/dump_layout.md describes the format.
"""

import dataclasses
import logging
import os
import shutil
from pathlib import Path

import numpy as np
from tqdm import tqdm

from tensorflow_tts.dump.layout import (
    DURATIONS,
    IDS,
    KINDS,
    SHARDS_FOLDER,
    SPEAKER_ID,
    DumpError,
    is_sharded,
    shard_index_path,
    shard_path,
    split_utt_ids,
)

logger = logging.getLogger(__name__)

DEFAULT_SHARD_MB = 128
# Size-based cutting makes at least this many shards (when there are as many utterances),
# so a small split such as valid still gives every worker of a multi-worker run its own.
MIN_SHARDS = 16


@dataclasses.dataclass
class ShardIndex:
    """The index of one sharded split (`DUMP/<split>/shards/index.npz`).

    Attributes:
        split_dir: the split folder the shards live in.
        utt_ids: str `(N,)`, the utterances in record order.
        shard_starts: int64 `(S + 1,)`: shard `s` holds utterances `shard_starts[s]:shard_starts[s + 1]`.
        kinds: str `(K,)`, the folder names of the kinds stored (`raw-feats`, `ids`, ...).
        rows: int64 `(K, N)`: first dimension of each kind's array per utterance (1 for a
            scalar), -1 where the utterance has no file of that kind.
        inner_dims: int64 `(K,)`: the second dimension (num_mels) of 2-D kinds, 0 for 1-D and scalars.
        speaker_ids: int32 `(N,)`, -1 where there is none.
        max_token_ids: int32 `(N,)`: the largest token id of each utterance (-1 if it has no tokens).
        duration_totals: int64 `(N,)`: sum of the positive durations, -1 without durations.
    """

    split_dir: Path
    utt_ids: np.ndarray
    shard_starts: np.ndarray
    kinds: np.ndarray
    rows: np.ndarray
    inner_dims: np.ndarray
    speaker_ids: np.ndarray
    max_token_ids: np.ndarray
    duration_totals: np.ndarray

    _ARRAYS = ("utt_ids", "shard_starts", "kinds", "rows", "inner_dims", "speaker_ids", "max_token_ids",
               "duration_totals")

    @classmethod
    def load(cls, split_dir):
        path = shard_index_path(split_dir)
        try:
            with np.load(path, allow_pickle=False) as stored:
                return cls(Path(split_dir), **{name: stored[name] for name in cls._ARRAYS})
        except (OSError, KeyError, ValueError) as error:
            raise DumpError(f"{path}: not a readable shard index ({error}); rerun tensorflow-tts-shard-dump") from error

    def save(self):
        path = shard_index_path(self.split_dir)
        np.savez(path, **{name: getattr(self, name) for name in self._ARRAYS})
        return path

    @property
    def num_shards(self):
        return len(self.shard_starts) - 1

    def has(self, kind):
        """True when some utterance of the split has this kind."""
        return kind.folder in self.kinds and bool((self.rows_of(kind) >= 0).any())

    def rows_of(self, kind):
        """int64 `(N,)`: first dimension of `kind` per utterance, -1 where absent."""
        matches = np.flatnonzero(self.kinds == kind.folder)
        if not len(matches):
            return np.full(len(self.utt_ids), -1, np.int64)
        return self.rows[matches[0]]

    def inner_shape(self, kind):
        """`(num_mels,)` for 2-D kinds, `()` otherwise."""
        dim = int(self.inner_dims[np.flatnonzero(self.kinds == kind.folder)[0]])
        return (dim,) if dim else ()

    def shard_paths(self, kind):
        return [shard_path(self.split_dir, kind, shard, self.num_shards) for shard in range(self.num_shards)]


def split_has(split_dir, kind):
    """True when a split, in either layout, holds `kind` for at least one utterance."""
    if is_sharded(split_dir):
        return ShardIndex.load(split_dir).has(kind)
    return bool(kind.utt_ids(split_dir))


def _shard_ranges(sizes, shard_bytes, utterances_per_shard):
    """Start offsets `(S + 1,)` cutting consecutive utterances into shards of about
    `shard_bytes` bytes, or of `utterances_per_shard` utterances when that is given."""
    starts, total = [0], 0
    for position, size in enumerate(sizes):
        count = position - starts[-1]
        full = count >= utterances_per_shard if utterances_per_shard else (count and total + size > shard_bytes)
        if full:
            starts.append(position)
            total = 0
        total += size
    starts.append(len(sizes))
    return np.array(starts, np.int64)


def _read(kind, split_dir, utt_id, inner):
    """The array of one utterance's file, checked against the layout; None when missing."""
    path = kind.path(split_dir, utt_id)
    if not path.is_file():
        return None
    try:
        value = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as error:
        raise DumpError(f"{path}: not a readable .npy file ({error}); rerun preprocessing") from error
    if value.dtype != np.dtype(kind.dtype):
        raise DumpError(f"{path}: expected {kind.dtype}, got {value.dtype}; rerun preprocessing")
    if kind.scalar != (value.ndim == 0) or value.ndim > 2 or (inner.get(kind) not in (None, value.shape[1:])):
        raise DumpError(f"{path}: shape {value.shape} does not match the other {kind.folder} files")
    inner.setdefault(kind, value.shape[1:])
    return value


def write_split_shards(split_dir, out_split_dir, utt_ids, shard_bytes=DEFAULT_SHARD_MB << 20,
                       utterances_per_shard=None):
    """Pack the `.npy` files of `utt_ids` in `split_dir` into shards and an index in `out_split_dir`.

    Shards hold about `shard_bytes` (at least MIN_SHARDS shards when there are as many
    utterances), or `utterances_per_shard` utterances when that is given.

    Every kind of docs/dump_layout.md with at least one file in the split is stored.
    Returns the ShardIndex written.
    """
    import tensorflow as tf  # here only: reading an index (screening, recipes) needs no TensorFlow

    split_dir, out_split_dir = Path(split_dir), Path(out_split_dir)
    kinds = [kind for kind in KINDS if (split_dir / kind.folder).is_dir() and any((split_dir / kind.folder).iterdir())]
    if not kinds or not utt_ids:
        raise DumpError(f"{split_dir}: no .npy features to shard; run tensorflow-tts-preprocess first")
    sizes = [
        sum(os.path.getsize(path) for kind in kinds if (path := kind.path(split_dir, utt_id)).is_file())
        for utt_id in utt_ids
    ]
    starts = _shard_ranges(sizes, min(shard_bytes, sum(sizes) // MIN_SHARDS), utterances_per_shard)
    shards_dir = out_split_dir / SHARDS_FOLDER
    shutil.rmtree(shards_dir, ignore_errors=True)
    shards_dir.mkdir(parents=True)

    count = len(utt_ids)
    rows = np.full((len(kinds), count), -1, np.int64)
    speaker_ids = np.full(count, -1, np.int32)
    max_token_ids = np.full(count, -1, np.int32)
    duration_totals = np.full(count, -1, np.int64)
    inner = {}
    progress = tqdm(total=count, desc=f"shard {split_dir.name}", unit="utt", disable=None)
    for shard in range(len(starts) - 1):
        writers = [tf.io.TFRecordWriter(str(shard_path(out_split_dir, kind, shard, len(starts) - 1))) for kind in kinds]
        for position in range(starts[shard], starts[shard + 1]):
            for row, (kind, writer) in enumerate(zip(kinds, writers)):
                value = _read(kind, split_dir, utt_ids[position], inner)
                # A missing file is an empty record, so every kind keeps the same record order.
                writer.write(b"" if value is None else value.astype(np.dtype(kind.dtype).newbyteorder("<")).tobytes())
                if value is None:
                    continue
                rows[row, position] = value.shape[0] if value.ndim else 1
                if kind is SPEAKER_ID:
                    speaker_ids[position] = int(value)
                elif kind is IDS and value.size:
                    max_token_ids[position] = int(value.max())
                elif kind is DURATIONS:
                    duration_totals[position] = int(np.maximum(value, 0).sum())
            progress.update()
        for writer in writers:
            writer.close()
    progress.close()
    index = ShardIndex(
        split_dir=out_split_dir,
        utt_ids=np.asarray(utt_ids, dtype=str),
        shard_starts=starts,
        kinds=np.array([kind.folder for kind in kinds]),
        rows=rows,
        inner_dims=np.array([inner.get(kind, ())[0] if inner.get(kind) else 0 for kind in kinds], np.int64),
        speaker_ids=speaker_ids,
        max_token_ids=max_token_ids,
        duration_totals=duration_totals,
    )
    # Written last: a split counts as sharded only once all its shards are complete.
    index.save()
    return index


def shard_dump(rootdir, outdir=None, *, shard_bytes=DEFAULT_SHARD_MB << 20, utterances_per_shard=None,
               remove_npy=False):
    """Convert every split of a `.npy` dump in `rootdir` to shards in `outdir` (default: in place).

    The top-level files (utterance lists, statistics, mapper, config, report) are copied
    to `outdir`. With `remove_npy`, the per-utterance folders of `rootdir` are deleted
    once their split is sharded. Returns {split: ShardIndex}.
    """
    rootdir = Path(rootdir)
    outdir = Path(outdir) if outdir is not None else rootdir
    splits = sorted(path.name for path in rootdir.iterdir() if path.is_dir() and not path.name.startswith("."))
    splits = [split for split in splits if any((rootdir / split / kind.folder).is_dir() for kind in KINDS)]
    if not splits:
        raise DumpError(f"{rootdir}: no split folder with .npy features; run tensorflow-tts-preprocess first")
    outdir.mkdir(parents=True, exist_ok=True)
    if outdir.resolve() != rootdir.resolve():
        for path in rootdir.iterdir():
            if path.is_file():
                shutil.copy2(path, outdir / path.name)
    indexes = {}
    for split in splits:
        utt_ids = split_utt_ids(rootdir, split)
        indexes[split] = write_split_shards(rootdir / split, outdir / split, utt_ids, shard_bytes, utterances_per_shard)
        logger.info("%s: %d utterance(s) in %d shard(s)", outdir / split, len(utt_ids), indexes[split].num_shards)
        if remove_npy:
            for folder in indexes[split].kinds:
                shutil.rmtree(rootdir / split / str(folder))
    return indexes


__all__ = ["DEFAULT_SHARD_MB", "ShardIndex", "is_sharded", "shard_dump", "split_has", "write_split_shards"]
