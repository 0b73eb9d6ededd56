"""Token durations: repairing their totals and per-token averages (and normalisation) of frame values.

Durations are int frames per token; for an utterance they must sum to its mel length
(docs/dump_layout.md). Aligners, TextGrids and old teachers sometimes miss by a frame or
two; `fix_durations` repairs that by moving the end of the last tokens.
"""

import logging

import numpy as np
import tensorflow as tf

logger = logging.getLogger(__name__)






# ----------------------------------------------------------------------------- totals


def fix_durations(durations, mel_length):
    """Make one utterance's durations sum to ``mel_length`` (numpy).

    Token ends past the mel length are cut to it, and the last token is stretched to end
    exactly on it, so a total that is too long shortens the last tokens and a total that
    is too short lengthens the last one. Every duration stays >= 0.

    Args: durations (T,) int, T >= 1; mel_length: int >= 0. Returns (T,) int32.
    """
    durations = np.maximum(np.asarray(durations, dtype=np.int64), 0)
    if durations.size == 0:
        raise ValueError("cannot fix the durations of an empty token sequence")
    ends = np.minimum(np.cumsum(durations), mel_length)
    ends[-1] = mel_length
    return np.diff(ends, prepend=0).astype(np.int32)


def fix_batch_durations(durations, input_lengths, mel_lengths):
    """`fix_durations` for a padded batch in TensorFlow.

    Args: durations (B, T) int, input_lengths (B,), mel_lengths (B,).
    Returns: (B, T) int32 summing to mel_lengths, 0 at padded tokens.
    """
    durations = tf.maximum(tf.cast(durations, tf.int32), 0)
    mel_lengths = tf.cast(mel_lengths, tf.int32)
    input_lengths = tf.cast(input_lengths, tf.int32)
    num_tokens = tf.shape(durations)[1]
    token_mask = tf.sequence_mask(input_lengths, num_tokens)
    durations = tf.where(token_mask, durations, 0)
    ends = tf.minimum(tf.cumsum(durations, axis=1), mel_lengths[:, tf.newaxis])
    is_last = tf.range(num_tokens)[tf.newaxis, :] >= (input_lengths - 1)[:, tf.newaxis]
    ends = tf.where(is_last, mel_lengths[:, tf.newaxis], ends)
    fixed = ends - tf.pad(ends[:, :-1], [[0, 0], [1, 0]])
    return tf.where(token_mask, fixed, 0)


# ----------------------------------------------------------------------------- per-token values


def average_by_durations(values, durations):
    """Mean of the non-zero frame values over each token's frames (TensorFlow).

    Zeros mark unvoiced (F0) or silent (energy) frames and are left out of the mean; a
    token without a non-zero frame gets 0, as those frames do.

    Args:
        values: (B, F) float, one value per mel frame (0 past each item's end).
        durations: (B, T) int, frames per token.

    Returns:
        (B, T) float32 per-token means.
    """
    values = tf.cast(values, tf.float32)
    durations = tf.maximum(tf.cast(durations, tf.int32), 0)
    num_frames = tf.shape(values)[1]
    num_tokens = tf.shape(durations)[1]
    ends = tf.cumsum(durations, axis=1)
    frames = tf.range(num_frames)
    token_index = tf.reduce_sum(tf.cast(ends[:, tf.newaxis, :] <= frames[tf.newaxis, :, tf.newaxis], tf.int32), axis=2)
    # Frames past the total get index T: one_hot gives them an all-zero row.
    membership = tf.one_hot(token_index, num_tokens, dtype=tf.float32)  # (B, F, T)
    voiced = tf.cast(tf.not_equal(values, 0.0), tf.float32)
    sums = tf.einsum("bf,bft->bt", values * voiced, membership)
    counts = tf.einsum("bf,bft->bt", voiced, membership)
    return tf.math.divide_no_nan(sums, counts)


def average_by_durations_numpy(values, durations):
    """`average_by_durations` for one utterance in numpy: values (F,), durations (T,) -> (T,)."""
    values = np.asarray(values, dtype=np.float64)
    result = np.zeros(len(durations), np.float32)
    start = 0
    for index, duration in enumerate(np.asarray(durations, dtype=np.int64)):
        segment = values[start : start + max(int(duration), 0)]
        voiced = segment[segment != 0.0]
        result[index] = voiced.mean() if voiced.size else 0.0
        start += max(int(duration), 0)
    return result








def normalize_nonzero(values, stats):
    """(value - mean) / std where value != 0; zeros stay 0. stats: [mean, std] (2,) or None."""
    if stats is None:
        return tf.cast(values, tf.float32)
    values = tf.cast(values, tf.float32)
    mean, std = float(stats[0]), float(stats[1])
    return tf.where(tf.not_equal(values, 0.0), (values - mean) / std, 0.0)
