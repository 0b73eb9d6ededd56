"""Batching of example datasets: plain padded batches, length buckets and frame budgets.

Every function takes an unbatched `tf.data.Dataset` of dict examples and returns a
dataset of padded dict batches. `padding_values` maps a key to its pad value; keys not
named pad with 0 (numbers) or "" (strings).
"""

import math

import numpy as np
import tensorflow as tf

AUTOTUNE = tf.data.AUTOTUNE


def full_padding_values(element_spec, padding_values=None):
    """Return a pad value for every key of `element_spec`, as tensors of the right dtype."""
    padding_values = padding_values or {}
    values = {}
    for key, spec in element_spec.items():
        default = "" if spec.dtype == tf.string else 0
        values[key] = tf.constant(padding_values.get(key, default), dtype=spec.dtype)
    return values


def padded_batches(examples, batch_size, padding_values=None, drop_remainder=False):
    """Batches of `batch_size` examples in arrival order, padded to the longest of each."""
    return examples.padded_batch(
        batch_size,
        padding_values=full_padding_values(examples.element_spec, padding_values),
        drop_remainder=drop_remainder,
    )


def pad_to_lengths(batches, lengths, padding_values=None):
    """Pad axis 1 of the keys in `lengths` ({key: length}) of every batch to that length.

    Fixed batch shapes let XLA (`jit_compile`) compile one program instead of one per
    padded length. A batch longer than its length is an error, not a silent cut.
    """
    pads = full_padding_values(batches.element_spec, padding_values)

    def pad(batch):
        batch = dict(batch)
        for key, length in lengths.items():
            value = batch[key]
            missing = length - tf.shape(value)[1]
            tf.debugging.assert_non_negative(missing, message=f"{key} is longer than its fixed length {length}")
            paddings = [[0, 0], [0, missing]] + [[0, 0]] * (value.shape.rank - 2)
            value = tf.pad(value, paddings, constant_values=pads[key])
            batch[key] = tf.ensure_shape(value, value.shape[:1].concatenate([length]).concatenate(value.shape[2:]))
        return batch

    return batches.map(pad, num_parallel_calls=AUTOTUNE, deterministic=True)


def quantile_boundaries(lengths, num_buckets):
    """Bucket boundaries that put about the same number of `lengths` in each bucket."""
    lengths = np.asarray(lengths)
    if num_buckets < 2 or lengths.size == 0:
        return []
    quantiles = np.quantile(lengths, np.linspace(0.0, 1.0, num_buckets + 1)[1:-1])
    # A boundary b means "length < b", so the quantile itself goes into the bucket below.
    return sorted({int(q) + 1 for q in quantiles if int(q) + 1 <= lengths.max()})


def budget_bucket_batch_sizes(bucket_boundaries, max_length, batch_frames, batch_multiple=1, max_batch_size=None):
    """Batch size of each bucket so that batch size times longest length fits `batch_frames`.

    Bucket i holds lengths in `[bucket_boundaries[i-1], bucket_boundaries[i])`; the last
    one holds everything from the last boundary up to `max_length`. Sizes are rounded
    down to a multiple of `batch_multiple`.
    """
    upper_lengths = [boundary - 1 for boundary in bucket_boundaries] + [max_length]
    sizes = []
    for upper in upper_lengths:
        size = batch_frames // max(int(upper), 1)
        if max_batch_size is not None:
            size = min(size, max_batch_size)
        size -= size % batch_multiple
        if size < batch_multiple:
            raise ValueError(
                f"batch_frames={batch_frames} cannot hold {batch_multiple} utterance(s) of {upper} frames; "
                f"raise batch_frames to at least {upper * batch_multiple} or set max_mel_length"
            )
        sizes.append(size)
    return sizes


def bucketed_batches(
    examples,
    bucket_boundaries,
    bucket_batch_sizes,
    padding_values=None,
    drop_remainder=False,
    length_key="mel_lengths",
):
    """Group examples into length buckets and batch each bucket on its own.

    `bucket_batch_sizes` has one entry more than `bucket_boundaries` (the last bucket
    holds lengths >= the last boundary). Batches pad to their own longest example.
    """
    if len(bucket_batch_sizes) != len(bucket_boundaries) + 1:
        raise ValueError(
            f"bucket_batch_sizes needs len(bucket_boundaries) + 1 = {len(bucket_boundaries) + 1} entries, "
            f"got {len(bucket_batch_sizes)}"
        )
    if not bucket_boundaries:
        return padded_batches(examples, bucket_batch_sizes[0], padding_values, drop_remainder)
    return examples.bucket_by_sequence_length(
        element_length_func=lambda example: example[length_key],
        bucket_boundaries=list(bucket_boundaries),
        bucket_batch_sizes=list(bucket_batch_sizes),
        padding_values=full_padding_values(examples.element_spec, padding_values),
        drop_remainder=drop_remainder,
    )


def frame_budget_batch_sizes(sorted_lengths, batch_frames, batch_multiple=1, max_batch_size=None):
    """Greedy sizes of consecutive batches over ascending lengths under a frame budget.

    Each batch takes as many of the next lengths as keep `size * longest <= batch_frames`,
    rounded down to a multiple of `batch_multiple`; only the last batch may be smaller
    (a remainder below `batch_multiple`). Lengths over `batch_frames // batch_multiple`
    should be filtered out beforehand; one that is left goes into a batch of its own.

    Args:
        sorted_lengths: int32 `(N,)`, ascending.
    Returns:
        int64 `(num_batches,)`, summing to N.
    """
    sorted_lengths = tf.cast(sorted_lengths, tf.int64)
    total = tf.size(sorted_lengths, out_type=tf.int64)
    cap = tf.constant(max_batch_size if max_batch_size is not None else np.iinfo(np.int64).max, tf.int64)

    def body(start, sizes):
        rest = sorted_lengths[start:]
        candidates = tf.range(1, tf.size(rest, out_type=tf.int64) + 1, dtype=tf.int64)
        # With ascending lengths `k * rest[k-1]` grows with k, so the sizes that fit
        # form a prefix and counting them gives the largest one.
        fits = tf.reduce_sum(tf.cast(candidates * rest <= batch_frames, tf.int64))
        fits = tf.minimum(fits, cap)
        size = fits - fits % batch_multiple
        # Fewer than a multiple fit: either the few left make the (short) last batch, or
        # a lone utterance over the budget, which goes alone rather than stalling.
        size = tf.where(size == 0, tf.maximum(fits, 1), size)
        return start + size, sizes.write(sizes.size(), size)

    _, sizes = tf.while_loop(
        lambda start, sizes: start < total,
        body,
        (tf.constant(0, tf.int64), tf.TensorArray(tf.int64, size=0, dynamic_size=True)),
    )
    return sizes.stack()


def frame_budget_batches(
    examples,
    batch_frames,
    padding_values=None,
    sort_window=2048,
    batch_multiple=1,
    max_batch_size=None,
    drop_remainder=False,
    batch_shuffle_buffer=None,
    seed=None,
    length_key="mel_lengths",
):
    """Batches of as many examples as fit `batch_frames` padded frames.

    Takes windows of `sort_window` consecutive (already shuffled) examples, sorts each
    window by length, cuts it greedily into batches with `batch_size * max_length <=
    batch_frames` (see `frame_budget_batch_sizes`), then shuffles the batches with a
    buffer of `batch_shuffle_buffer` batches (no shuffle when None). Examples longer than
    `batch_frames // batch_multiple` are dropped. With `drop_remainder`, batches whose
    size is not a multiple of `batch_multiple` (at most one per window) are dropped.

    Windows of loaded examples travel as ragged tensors, which costs about twice the
    time of `planned_frame_budget_batches`; use that one when lengths are known upfront.
    """
    limit = batch_frames // batch_multiple
    examples = examples.filter(lambda example: example[length_key] <= limit)
    pads = full_padding_values(examples.element_spec, padding_values)

    def split_window(window):
        order = tf.argsort(window[length_key], stable=True)
        window = {key: tf.gather(value, order) for key, value in window.items()}
        sizes = frame_budget_batch_sizes(window[length_key], batch_frames, batch_multiple, max_batch_size)
        return {key: tf.RaggedTensor.from_row_lengths(value, sizes) for key, value in window.items()}

    def pad_batch(batch):
        padded = {}
        for key, value in batch.items():
            if isinstance(value, tf.RaggedTensor):
                padded[key] = value.to_tensor(default_value=pads[key])
            else:
                padded[key] = value
        return padded

    batches = (
        examples.ragged_batch(sort_window)
        .map(split_window, num_parallel_calls=AUTOTUNE)
        .flat_map(tf.data.Dataset.from_tensor_slices)
        .map(pad_batch, num_parallel_calls=AUTOTUNE)
    )
    if drop_remainder and batch_multiple > 1:
        batches = batches.filter(lambda batch: tf.size(batch[length_key]) % batch_multiple == 0)
    if batch_shuffle_buffer:
        batches = batches.shuffle(batch_shuffle_buffer, seed=seed, reshuffle_each_iteration=True)
    return batches


_BATCH_KEY = "_batch_key"


def planned_frame_budget_batches(
    indices,
    lengths,
    load,
    batch_frames,
    padding_values=None,
    sort_window=2048,
    batch_multiple=1,
    max_batch_size=None,
    drop_remainder=False,
    batch_shuffle_buffer=None,
    seed=None,
    transform=None,
):
    """Frame-budget batches planned from known lengths before anything is read.

    The batches `frame_budget_batches` makes, but windows of `sort_window` *indices* are
    sorted by `lengths[index]` and cut, and the batches shuffled, before examples are
    loaded. Loading then runs in parallel in batch order, and consecutive examples are
    padded together (`group_by_window` keyed by a per-batch key that also encodes the
    batch size), so no window of loaded examples is ever buffered.

    Args:
        indices: dataset of int64 scalars, indices into `lengths`, in the epoch's order.
        lengths: int `(N,)` numpy array, the length each index's example will have.
        load: function from an int64 index to a dict example.
        transform: optional order-preserving function from a dataset of examples to a
            dataset of examples that keeps unknown keys (e.g. random cropping).
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    all_lengths = tf.constant(lengths)
    limit = batch_frames // batch_multiple
    # Batch sizes are at most a window, so `number * key_base + size` is unique and
    # `key % key_base` gives back the size.
    key_base = int(min(sort_window, len(lengths))) + 1

    def split_window(window):
        window_lengths = tf.gather(all_lengths, window)
        order = tf.argsort(window_lengths, stable=True)
        sizes = frame_budget_batch_sizes(tf.gather(window_lengths, order), batch_frames, batch_multiple, max_batch_size)
        return tf.RaggedTensor.from_row_lengths(tf.gather(window, order), sizes)

    plans = indices.filter(lambda index: all_lengths[index] <= limit).batch(sort_window).map(split_window).unbatch()
    if drop_remainder and batch_multiple > 1:
        plans = plans.filter(lambda plan: tf.size(plan) % batch_multiple == 0)
    if batch_shuffle_buffer:
        plans = plans.shuffle(batch_shuffle_buffer, seed=seed, reshuffle_each_iteration=True)

    def flatten(number, plan):
        size = tf.size(plan, out_type=tf.int64)
        return tf.data.Dataset.from_tensor_slices((plan, tf.fill([size], number * key_base + size)))

    def load_with_key(index, key):
        return {**load(index), _BATCH_KEY: key}

    examples = plans.enumerate().flat_map(flatten).map(load_with_key, num_parallel_calls=AUTOTUNE)
    if transform is not None:
        examples = transform(examples)
    pads = full_padding_values(examples.element_spec, padding_values)

    def pad_window(key, window):
        return window.padded_batch(key_base, padding_values=pads)

    batches = examples.group_by_window(
        key_func=lambda example: example[_BATCH_KEY],
        reduce_func=pad_window,
        window_size_func=lambda key: key % key_base,
    )
    return batches.map(lambda batch: {name: value for name, value in batch.items() if name != _BATCH_KEY})


def padding_ratio(batch, length_key="mel_lengths", frames_key="mel_gts"):
    """Padded frames over all frames of a batch: `(B * T - sum(lengths)) / (B * T)`.

    `T` is the padded time axis of `batch[frames_key]` (`(B, T, ...)`), so padding up to
    a bucket boundary counts too. Returns a float32 scalar (0 for an empty batch).
    """
    lengths = tf.cast(batch[length_key], tf.float32)
    shape = tf.shape(batch[frames_key])
    total = tf.cast(shape[0] * shape[1], tf.float32)
    return tf.math.divide_no_nan(total - tf.reduce_sum(lengths), total)


def with_padding_ratio(batches, length_key="mel_lengths", frames_key="mel_gts"):
    """Add `padding_ratio` to each batch: float32 `(B,)`, the batch's ratio in every row.

    One value per row (rather than a scalar) so the key survives a distribution
    strategy splitting the batch over replicas; read it with `batch["padding_ratio"][0]`
    or average it.
    """

    def add(batch):
        ratio = padding_ratio(batch, length_key, frames_key)
        return {**batch, "padding_ratio": tf.fill(tf.shape(batch[length_key])[:1], ratio)}

    return batches.map(add, num_parallel_calls=AUTOTUNE)


def estimated_batches(count, lengths, batch_frames):
    """A generous bound on the frame-budget batches `count` examples of `lengths` make."""
    mean_length = float(np.mean(lengths)) if len(lengths) else 0.0
    return max(1, math.ceil(2.0 * count * mean_length / batch_frames) + 2)
