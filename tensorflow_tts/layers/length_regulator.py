"""FastSpeech's length regulator: repeat each token's vector for its duration in frames."""

import tensorflow as tf


def frame_token_indices(durations, num_frames=None):
    """Which token each output frame copies.

    Built from a cumulative sum and comparisons only (no loops, no ragged shapes), so it
    converts to builtin TFLite ops with a dynamic number of frames.

    Args:
        durations: (B, T) int, frames per token (negative counts as 0).
        num_frames: F when the caller knows it (the padded target length in training;
            frames past it are dropped). Given as the shape of a tensor, it keeps the output
            shape static for XLA, which cannot size a tensor by a data-dependent maximum.

    Returns:
        token_index (B, F) int32, in [0, T - 1]; frame_mask (B, F) bool, True for the
        ``sum(durations[b])`` real frames of item b. F is the largest total in the batch
        unless `num_frames` is given.
    """
    durations = tf.maximum(tf.cast(durations, tf.int32), 0)
    ends = tf.cumsum(durations, axis=1)  # (B, T): first frame after each token
    totals = ends[:, -1]
    frames = tf.range(tf.reduce_max(totals) if num_frames is None else num_frames, dtype=tf.int32)  # (F,)
    # Frame f belongs to the first token whose end is after f: count the ends <= f.
    ended_before = tf.cast(ends[:, tf.newaxis, :] <= frames[tf.newaxis, :, tf.newaxis], tf.int32)
    token_index = tf.reduce_sum(ended_before, axis=2)  # (B, F)
    token_index = tf.minimum(token_index, tf.shape(durations)[1] - 1)
    frame_mask = frames[tf.newaxis, :] < totals[:, tf.newaxis]
    return token_index, frame_mask


class LengthRegulator(tf.keras.layers.Layer):
    """Expand token vectors to frame vectors; frames past an item's total are zero."""

    def call(self, hidden_states, durations, num_frames=None):
        """Args: hidden_states (B, T, C); durations (B, T) int; num_frames: see `frame_token_indices`.

        Returns: (B, F, C) frame vectors and their (B, F) bool mask, F = max total duration
        or `num_frames`.
        """
        token_index, frame_mask = frame_token_indices(durations, num_frames)
        batch_size = tf.shape(hidden_states)[0]
        num_tokens = tf.shape(hidden_states)[1]
        # Index the flattened (B * T, C) rows: a plain gather, no batch_dims needed.
        flat_index = token_index + num_tokens * tf.range(batch_size, dtype=tf.int32)[:, tf.newaxis]
        channels = hidden_states.shape[-1] or tf.shape(hidden_states)[-1]  # keep it static when known
        flat_states = tf.reshape(hidden_states, [batch_size * num_tokens, channels])
        frames = tf.gather(flat_states, flat_index)  # (B, F, C)
        frames = frames * tf.cast(frame_mask[:, :, tf.newaxis], frames.dtype)
        return frames, frame_mask
