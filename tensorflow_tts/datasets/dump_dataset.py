"""DumpDataset: the shared base of datasets that read one split of a dump.

It indexes the split once (utterance ids and mel lengths, from the `.npy` headers or
from the index of a sharded split), filters it, and builds tf.data pipelines:
`examples()` for single utterances and `create()` for padded batches (plain, length
buckets or a frame budget). Subclasses say which files make an example (`_features`)
and what to derive from them.
"""

import dataclasses
import logging
import os
from pathlib import Path

import numpy as np
import tensorflow as tf

from tensorflow_tts.datasets import batching as batching_lib
from tensorflow_tts.datasets.memory import check_cache_fits
from tensorflow_tts.datasets.npy_io import check_npy, load_npy, read_npy_header
from tensorflow_tts.datasets.shard_reader import read_shards
from tensorflow_tts.dump.layout import (
    DumpError,
    FeatureKind,
    is_sharded,
    read_utt_ids,
    utt_ids_path,
)
from tensorflow_tts.dump.shards import ShardIndex

AUTOTUNE = tf.data.AUTOTUNE
BATCHING_MODES = ("padded", "bucket", "frames")

logger = logging.getLogger(__name__)


def with_num_workers(dataset, num_workers):
    """`dataset` with its tf.data work (file reads, parallel maps) on `num_workers` threads.

    The YAML's `num_workers`; None leaves tf.data's default (a thread per core).
    """
    if num_workers is None:
        return dataset
    options = tf.data.Options()
    options.threading.private_threadpool_size = int(num_workers)
    return dataset.with_options(options)


@dataclasses.dataclass(frozen=True)
class DumpFeature:
    """One per-utterance file kind of the dump (`tensorflow_tts.dump.layout`) and the example key it is read into.

    The file of utterance `u` holds an array of the kind's dtype and shape `(N, *inner_shape)`,
    or a 0-D array for a scalar kind.
    """

    key: str
    kind: FeatureKind
    inner_shape: tuple = ()

    @property
    def folder(self):
        return self.kind.folder

    @property
    def suffix(self):
        """What follows the utterance id in a file name, e.g. `-ids.npy`."""
        return self.kind.file_suffix

    @property
    def dtype(self):
        return self.kind.dtype

    @property
    def scalar(self):
        return self.kind.scalar

    @property
    def rank(self):
        return 0 if self.scalar else 1 + len(self.inner_shape)


class DumpDataset:
    """Base of the dump datasets; see `AcousticDataset` and `AudioMelDataset`.

    Reads either layout of docs/dump_layout.md, whichever the split folder holds: `.npy`
    files (read in any order, by index) or TFRecord shards (read shard by shard; shuffling
    visits the shards in a new order every epoch, interleaves a few and shuffles examples
    in a buffer of `shard_shuffle_buffer`).

    Args:
        dump_dir: the dump root (holding `<split>/`, `<split>_utt_ids.npy`, `stats.npy`).
        split: `train` or `valid` (any folder name under `dump_dir` works).
        utt_ids: keep only these utterances: a `.npy` file of strings, a text file with one
            id per line, or a list. Ids not in the split are ignored with a warning.
        mel_length_threshold: drop utterances with `mel frames <= mel_length_threshold`.
        max_mel_length: drop utterances with more mel frames than this (None: keep all).
        allow_cache: keep decoded examples in memory after the first epoch.
        cache_max_ram_fraction: with `allow_cache`, refuse (CacheTooLargeError) when the
            decoded split, estimated from the indexed lengths, exceeds this share of RAM.
    """

    #: example key of the mel spectrogram, the time axis of length-aware batching
    frames_key = "mels"
    #: example key of the number of mel frames
    length_key = "mel_lengths"
    #: examples shuffled together when reading a sharded split (shards are shuffled too)
    shard_shuffle_buffer = 512

    def __init__(
        self,
        dump_dir,
        split="train",
        *,
        utt_ids=None,
        mel_length_threshold=0,
        max_mel_length=None,
        allow_cache=False,
        cache_max_ram_fraction=0.5,
    ):
        self.dump_dir = Path(dump_dir)
        self.split = split
        self.split_dir = self.dump_dir / split
        self.allow_cache = allow_cache
        self.cache_max_ram_fraction = cache_max_ram_fraction
        if not self.split_dir.is_dir():
            raise DumpError(
                f"{self.split_dir}: no such split folder; run tensorflow-tts-preprocess into {self.dump_dir}"
            )
        self.shard_index = None
        if is_sharded(self.split_dir):
            self.shard_index = ShardIndex.load(self.split_dir)
            self._shard_positions = {utt_id: number for number, utt_id in enumerate(self.shard_index.utt_ids)}
        self.features = self._features()
        mel_feature = self.features[0]

        all_ids = self._list_utt_ids(mel_feature)
        chosen = all_ids
        if utt_ids is not None:
            wanted = read_utt_ids(utt_ids)
            known = set(all_ids)
            unknown = [utt_id for utt_id in wanted if utt_id not in known]
            if unknown:
                logger.warning(
                    "%s: %d id(s) of the utt_ids filter are not in the split and are ignored (%s)",
                    self.split_dir,
                    len(unknown),
                    ", ".join(unknown[:5]),
                )
            wanted = set(wanted)
            chosen = [utt_id for utt_id in all_ids if utt_id in wanted]
        self._check_files(chosen)

        lengths = self._rows(mel_feature, chosen).astype(np.int32)
        keep = lengths > mel_length_threshold
        if max_mel_length is not None:
            keep &= lengths <= max_mel_length
        self.utt_ids = np.array(chosen, dtype=str)[keep]
        self.mel_lengths = lengths[keep]
        logger.info(
            "%s: %d utterance(s) (%d filtered out by length), %d mel frames",
            self.split_dir,
            len(self.utt_ids),
            int((~keep).sum()),
            int(self.mel_lengths.sum()),
        )
        if len(self.utt_ids) == 0:
            raise DumpError(
                f"{self.split_dir}: no utterance left after filtering ({len(all_ids)} in the split, "
                f"{len(chosen)} after utt_ids, none with mel_length_threshold < frames <= max_mel_length); "
                "check the filters"
            )

    # -- what subclasses provide ---------------------------------------------------------

    def _features(self):
        """The files of an example; the first is the mel spectrogram whose length is indexed."""
        raise NotImplementedError

    def _finish(self, example):
        """Derive keys (lengths, ...) from the decoded arrays of one example."""
        return example

    def _transform(self, examples, seed):
        """Per-epoch transformation of the example stream, after cache and shuffle."""
        return examples

    @property
    def padding_values(self):
        """Pad value per key for batching; keys not named pad with 0 or ""."""
        return {}

    def _example_lengths(self):
        """Lengths along `frames_key` of the examples `examples()` yields, per utterance."""
        return self.mel_lengths

    # -- index -------------------------------------------------------------------------

    def __len__(self):
        return len(self.utt_ids)

    def _path(self, feature, utt_id):
        return feature.kind.path(self.split_dir, utt_id)

    def _positions(self, utt_ids):
        """int64 `(len(utt_ids),)`: where the utterances are in the shard index."""
        return np.array([self._shard_positions[utt_id] for utt_id in utt_ids], np.int64)

    def _rows(self, feature, utt_ids):
        """First dimension of `feature` per utterance, from the shard index or the `.npy` headers
        (checked against the layout), so indexing reads no feature data."""
        if self.shard_index is not None:
            return self.shard_index.rows_of(feature.kind)[self._positions(utt_ids)]
        return np.array(
            [
                check_npy(self._path(feature, utt_id), feature.dtype, feature.rank, feature.inner_shape)[0]
                for utt_id in utt_ids
            ],
            dtype=np.int64,
        )

    def _has_files(self, kind):
        if self.shard_index is not None:
            return self.shard_index.has(kind)
        path = self.split_dir / kind.folder
        return path.is_dir() and any(path.iterdir())

    def _mel_channels(self, kind):
        """Mel bins of the split's `kind` features, from the shard index or the header of its first file."""
        if self.shard_index is not None and self.shard_index.has(kind):
            return self.shard_index.inner_shape(kind)[0]
        folder = self.split_dir / kind.folder
        first = next(iter(sorted(folder.glob(f"*{kind.file_suffix}"))), None) if folder.is_dir() else None
        if first is None:
            fix = "run tensorflow-tts-normalize or pass use_norm=False" if self.use_norm else "rerun preprocessing"
            raise DumpError(f"{folder}: no {kind.file_suffix} files; {fix}")
        shape, _ = read_npy_header(first)
        if len(shape) != 2:
            raise DumpError(f"{first}: expected shape (frames, num_mels), got {shape}")
        return int(shape[1])

    def _list_utt_ids(self, mel_feature):
        if self.shard_index is not None:
            return [str(utt_id) for utt_id in self.shard_index.utt_ids]
        listing = utt_ids_path(self.dump_dir, self.split)
        if listing.is_file():
            return read_utt_ids(listing)
        folder = self.split_dir / mel_feature.folder
        if not folder.is_dir():
            raise DumpError(
                f"{folder}: missing, and there is no {listing.name} either; rerun tensorflow-tts-preprocess"
            )
        return mel_feature.kind.utt_ids(self.split_dir)

    def _check_files(self, utt_ids):
        if self.shard_index is not None:
            return self._check_shards(utt_ids)
        for feature in self.features:
            folder = self.split_dir / feature.folder
            names = set(os.listdir(folder)) if folder.is_dir() else set()
            missing = [utt_id for utt_id in utt_ids if f"{utt_id}{feature.suffix}" not in names]
            if missing:
                raise DumpError(
                    f"{folder}: {len(missing)} utterance(s) have no {feature.suffix} file "
                    f"({', '.join(missing[:5])}); rerun preprocessing or filter them out with utt_ids"
                    + self._missing_hint(feature)
                )
            if utt_ids:
                check_npy(self._path(feature, utt_ids[0]), feature.dtype, feature.rank, feature.inner_shape)

    def _check_shards(self, utt_ids):
        for feature in self.features:
            rows = self._rows(feature, utt_ids)
            missing = [utt_id for utt_id, count in zip(utt_ids, rows) if count < 0]
            if missing:
                raise DumpError(
                    f"{self.split_dir}: {len(missing)} utterance(s) have no {feature.folder} in the shards "
                    f"({', '.join(missing[:5])}); convert a dump that has them or filter them out with utt_ids"
                    + self._missing_hint(feature)
                )
            if self.shard_index.inner_shape(feature.kind) != tuple(feature.inner_shape):
                raise DumpError(
                    f"{self.split_dir}: {feature.folder} in the shards has rows of shape "
                    f"{self.shard_index.inner_shape(feature.kind)}, expected {tuple(feature.inner_shape)}"
                )

    def _missing_hint(self, feature):
        return ""

    def _rows_per_frame(self, feature):
        """Rows of `feature` per mel frame, for the cache estimate of a `.npy` split (token
        kinds count as one per frame, an upper bound)."""
        return 1

    def cache_bytes(self):
        """Estimated bytes of the split's decoded features, from the indexed lengths."""
        total = 0
        for feature in self.features:
            if feature.scalar:
                rows = np.ones(len(self.utt_ids), np.int64)
            elif self.shard_index is not None:
                rows = self._rows(feature, self.utt_ids)
            else:
                rows = self.mel_lengths.astype(np.int64) * self._rows_per_frame(feature)
            total += int(rows.sum()) * np.dtype(feature.dtype).itemsize * int(np.prod(feature.inner_shape))
        return total

    # -- pipelines ---------------------------------------------------------------------

    def _load(self, paths):
        example = {"utt_ids": paths["utt_ids"]}
        for feature in self.features:
            value = load_npy(paths[feature.key], tf.as_dtype(feature.dtype), feature.inner_shape)
            example[feature.key] = tf.reshape(value, []) if feature.scalar else value
        return self._finish(example)

    def _indices(self, shuffle, seed):
        """Dataset of int64 utterance indices in the epoch's order."""
        indices = tf.data.Dataset.range(len(self.utt_ids))
        if shuffle:
            # Shuffling indices is free; shuffle before reading so nothing waits in a buffer.
            indices = indices.shuffle(len(self.utt_ids), seed=seed, reshuffle_each_iteration=True)
        return indices

    def _index_loader(self):
        """A function from an int64 utterance index to its decoded example."""
        utt_ids = tf.constant(self.utt_ids)
        # Paths are joined in the graph: one table of ids instead of one of paths per feature
        # keeps the index small for corpora of hundreds of thousands of utterances.
        affixes = {
            feature.key: (f"{self.split_dir / feature.folder}{os.sep}", feature.suffix) for feature in self.features
        }

        def load(index):
            utt_id = utt_ids[index]
            paths = {key: tf.strings.join([prefix, utt_id, suffix]) for key, (prefix, suffix) in affixes.items()}
            return self._load({"utt_ids": utt_id, **paths})

        return load

    def _read(self, shuffle, seed):
        """One pass of decoded examples: `.npy` files by index, or shard by shard."""
        if self.shard_index is not None:
            examples = read_shards(self.shard_index, self.features, self._positions(self.utt_ids), shuffle, seed)
            return examples.map(self._finish, num_parallel_calls=AUTOTUNE)
        return self._indices(shuffle, seed).map(self._index_loader(), num_parallel_calls=AUTOTUNE)

    def examples(self, shuffle=True, seed=0):
        """One epoch of single-utterance examples (dicts of unbatched tensors).

        With `shuffle`, the order is seeded, changes every epoch (every new iterator) and
        is the same for the same seed in every run: a permutation of the split for `.npy`
        files and with `allow_cache`, shuffled shards and a buffer of examples for shards.
        """
        if self.allow_cache:
            check_cache_fits(self.split_dir, self.cache_bytes(), self.cache_max_ram_fraction)
            examples = self._read(False, seed).cache()
            if shuffle:
                examples = examples.shuffle(len(self.utt_ids), seed=seed, reshuffle_each_iteration=True)
            return self._transform(examples, seed)
        examples = self._transform(self._read(shuffle, seed), seed)
        if shuffle and self.shard_index is not None:
            # Shards come in record order: a buffer mixes the few interleaved ones. It takes
            # the transformed (e.g. cropped, smaller) examples.
            examples = examples.shuffle(self.shard_shuffle_buffer, seed=seed, reshuffle_each_iteration=True)
        return examples

    def create(
        self,
        batch_size=None,
        *,
        batching="padded",
        batch_frames=None,
        bucket_boundaries=None,
        num_buckets=8,
        sort_window=2048,
        max_batch_size=None,
        num_replicas=1,
        drop_remainder=False,
        shuffle=True,
        seed=0,
        add_padding_ratio=True,
        prefetch=AUTOTUNE,
    ):
        """One epoch of padded batches (iterate again for the next, reshuffled epoch).

        Args:
            batch_size: the global batch size (per-replica size times `num_replicas`) for
                `padded`, and for `bucket` when `batch_frames` is not given.
            batching: `padded` (arrival order), `bucket` (length buckets, batch size per
                bucket from `batch_size` or `batch_frames`) or `frames` (sort windows of
                `sort_window` utterances by length and cut batches of at most
                `batch_frames` padded frames, then shuffle the batches).
            batch_frames: global budget of padded mel frames per batch, `B * T <= batch_frames`.
            bucket_boundaries: for `bucket`; default: `num_buckets` length quantiles.
            max_batch_size: upper bound on utterances per batch for `bucket`/`frames`.
            num_replicas: batch sizes are kept multiples of this (distributed training).
            drop_remainder: drop batches smaller than the batch size (`padded`, `bucket`)
                or not a multiple of `num_replicas` (`frames`).
            shuffle, seed: seeded shuffling, different every epoch, reproducible per seed.
            add_padding_ratio: add `padding_ratio`, float32 `(B,)` (see batching.with_padding_ratio).
            prefetch: batches to prefetch (None: no prefetch).

        Returns:
            tf.data.Dataset of dicts of batched tensors, padded with `padding_values`.
        """
        if batching not in BATCHING_MODES:
            raise ValueError(f"batching={batching!r}: expected one of {', '.join(BATCHING_MODES)}")
        if batch_size is not None and batch_size % num_replicas:
            raise ValueError(
                f"batch_size={batch_size} is not a multiple of num_replicas={num_replicas}; "
                "pass the per-replica batch size times num_replicas"
            )
        if max_batch_size is not None and max_batch_size < num_replicas:
            raise ValueError(f"max_batch_size={max_batch_size} is smaller than num_replicas={num_replicas}")
        if batching == "padded":
            if batch_size is None or batch_frames is not None:
                raise ValueError("batching='padded' takes batch_size and no batch_frames")
            examples = self.examples(shuffle=shuffle, seed=seed)
            batches = batching_lib.padded_batches(examples, batch_size, self.padding_values, drop_remainder)
            logger.info("%s: padded batches of %d", self.split_dir, batch_size)
        elif batching == "bucket":
            if (batch_size is None) == (batch_frames is None):
                raise ValueError("batching='bucket' takes exactly one of batch_size and batch_frames")
            if bucket_boundaries is None:
                bucket_boundaries = batching_lib.quantile_boundaries(self._example_lengths(), num_buckets)
            sizes = self._bucket_batch_sizes(bucket_boundaries, batch_size, batch_frames, max_batch_size, num_replicas)
            logger.info("%s: buckets below %s, batch sizes %s", self.split_dir, list(bucket_boundaries), sizes)
            batches = batching_lib.bucketed_batches(
                self.examples(shuffle=shuffle, seed=seed),
                bucket_boundaries,
                sizes,
                self.padding_values,
                drop_remainder,
                self.length_key,
            )
        else:
            if batch_frames is None or batch_size is not None:
                raise ValueError("batching='frames' takes batch_frames and no batch_size (see max_batch_size)")
            batches = self._frame_budget(
                batch_frames, sort_window, max_batch_size, num_replicas, drop_remainder, shuffle, seed
            )

        if add_padding_ratio:
            batches = batching_lib.with_padding_ratio(batches, self.length_key, self.frames_key)
        if prefetch is not None:
            batches = batches.prefetch(prefetch)
        return batches

    def _bucket_batch_sizes(self, bucket_boundaries, batch_size, batch_frames, max_batch_size, num_replicas):
        if batch_frames is None:
            return [batch_size] * (len(bucket_boundaries) + 1)
        lengths = self._example_lengths()
        too_long = int((lengths * num_replicas > batch_frames).sum())
        if too_long:
            raise ValueError(
                f"{too_long} utterance(s) are longer than batch_frames // num_replicas = "
                f"{batch_frames // num_replicas} frames; raise batch_frames or set max_mel_length"
            )
        return batching_lib.budget_bucket_batch_sizes(
            bucket_boundaries, int(lengths.max()), batch_frames, num_replicas, max_batch_size
        )

    def _frame_budget(self, batch_frames, sort_window, max_batch_size, num_replicas, drop_remainder, shuffle, seed):
        lengths = self._example_lengths()
        too_long = int((lengths * num_replicas > batch_frames).sum())
        if too_long:
            logger.warning(
                "%s: %d utterance(s) longer than batch_frames // num_replicas = %d frames are skipped",
                self.split_dir,
                too_long,
                batch_frames // num_replicas,
            )
        logger.info(
            "%s: batches of at most %d frames, sorted in windows of %d", self.split_dir, batch_frames, sort_window
        )
        options = dict(
            sort_window=sort_window,
            batch_multiple=num_replicas,
            max_batch_size=max_batch_size,
            drop_remainder=drop_remainder,
            seed=seed,
        )
        if self.allow_cache or self.shard_index is not None:
            # Cached examples and shards cannot be read in a planned order: sort windows of loaded ones.
            buffer = batching_lib.estimated_batches(min(sort_window, len(lengths)), lengths, batch_frames)
            return batching_lib.frame_budget_batches(
                self.examples(shuffle=shuffle, seed=seed),
                batch_frames,
                self.padding_values,
                batch_shuffle_buffer=buffer if shuffle else None,
                length_key=self.length_key,
                **options,
            )
        # Planned from the indexed lengths, reading nothing twice; a plan is a few integers,
        # so the batch shuffle buffer can hold a whole epoch's.
        buffer = batching_lib.estimated_batches(len(lengths), lengths, batch_frames)
        return batching_lib.planned_frame_budget_batches(
            self._indices(shuffle, seed),
            lengths,
            self._index_loader(),
            batch_frames,
            self.padding_values,
            batch_shuffle_buffer=buffer if shuffle else None,
            transform=lambda examples: self._transform(examples, seed),
            **options,
        )
