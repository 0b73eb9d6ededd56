"""Monotonic alignment search (Glow-TTS): the most likely monotonic token path through a soft alignment.

Given log-probabilities ``log_p[f, t]`` of mel frame ``f`` belonging to token ``t``, find
the path that starts at (frame 0, token 0), ends at (last frame, last token), and at every
frame either stays on its token or moves to the next one, maximising ``sum_f log_p[f, path(f)]``.
Every token then gets at least one frame (when there are at least as many frames as
tokens) and the durations sum exactly to the number of frames.

Two implementations with the same result: `monotonic_alignment_search` (numpy, one
utterance, a reference for tests and tools) and `batch_monotonic_alignment_search` (TF,
a padded batch, runs inside the training step on any device and under any strategy).
"""

import numpy as np
import tensorflow as tf

# A finite "minus infinity": sums of it over thousands of frames stay finite in float32,
# so comparisons never see inf - inf.
_NEG = -1e9


def uniform_durations(num_tokens, num_frames):
    """Spread ``num_frames`` over ``num_tokens`` as evenly as possible (int32, sums to num_frames).

    The fallback when there are fewer frames than tokens and no monotonic path can give
    every token a frame: some tokens get 0 frames.
    """
    if num_tokens <= 0:
        return np.zeros([0], np.int32)
    bounds = np.floor(np.arange(num_tokens + 1) * num_frames / num_tokens).astype(np.int64)
    return np.diff(bounds).astype(np.int32)


def monotonic_alignment_search(log_probs):
    """Hard durations of one utterance.

    Args:
        log_probs: (F, T) float array, log-probability of frame f belonging to token t.

    Returns:
        durations (T,) int32, frames per token: >= 1 each when F >= T, summing to F. With
        F < T no monotonic path covers every token; `uniform_durations` is returned.
    """
    log_probs = np.asarray(log_probs, dtype=np.float64)
    num_frames, num_tokens = log_probs.shape
    if num_tokens == 0:
        return np.zeros([0], np.int32)
    if num_frames < num_tokens:
        return uniform_durations(num_tokens, num_frames)
    value = np.full(num_tokens, _NEG)
    value[0] = log_probs[0, 0]
    from_previous = np.zeros((num_frames, num_tokens), dtype=bool)  # came from token t - 1
    for frame in range(1, num_frames):
        shifted = np.concatenate([[_NEG], value[:-1]])
        from_previous[frame] = shifted >= value
        # Token t can only be reached by frame t: keep the unreachable ones at _NEG.
        value = np.maximum(value, shifted) + log_probs[frame]
        value[frame + 1 :] = _NEG
    durations = np.zeros(num_tokens, np.int32)
    token = num_tokens - 1
    for frame in range(num_frames - 1, -1, -1):
        durations[token] += 1
        if frame > 0 and token > 0 and (token == frame or from_previous[frame, token]):
            token -= 1
    return durations


def batch_monotonic_alignment_search(log_probs, input_lengths, mel_lengths):
    """Hard alignment of a padded batch, in TensorFlow (no gradient flows through it).

    Args:
        log_probs: (B, F, T) float, log-probability of frame f belonging to token t;
            values at padded frames or tokens are ignored.
        input_lengths: (B,) int, real tokens per item.
        mel_lengths: (B,) int, real frames per item.

    Returns:
        durations (B, T) int32, summing to ``mel_lengths`` (0 at padded tokens), and
        path (B, F) int32, the token of every frame (0 at padded frames). Items with fewer
        frames than tokens get `uniform_durations` (and the matching path).
    """
    log_probs = tf.stop_gradient(tf.cast(log_probs, tf.float32))
    input_lengths = tf.cast(input_lengths, tf.int32)
    mel_lengths = tf.cast(mel_lengths, tf.int32)
    # An empty share of a distributed batch can have 0 frames or tokens: search a 1 x 1
    # padded problem and cut the result back.
    given_frames = tf.shape(log_probs)[1]
    given_tokens = tf.shape(log_probs)[2]
    log_probs = tf.pad(
        log_probs, [[0, 0], [0, tf.maximum(1 - given_frames, 0)], [0, tf.maximum(1 - given_tokens, 0)]]
    )
    batch_size = tf.shape(log_probs)[0]
    num_frames = tf.shape(log_probs)[1]
    num_tokens = tf.shape(log_probs)[2]
    tokens = tf.range(num_tokens)

    # Forward pass: best score of every (frame, token), remembering where it came from.
    initial = tf.where(tokens[tf.newaxis, :] == 0, log_probs[:, 0, :], _NEG)
    initial = tf.reshape(initial, [batch_size, num_tokens])
    neg_column = tf.fill([batch_size, 1], tf.constant(_NEG, tf.float32))
    decisions = tf.TensorArray(tf.bool, size=num_frames, element_shape=None)
    decisions = decisions.write(0, tf.zeros([batch_size, num_tokens], tf.bool))

    def forward(frame, value, decisions):
        shifted = tf.concat([neg_column, value[:, :-1]], axis=1)
        decisions = decisions.write(frame, shifted >= value)
        value = tf.maximum(value, shifted) + log_probs[:, frame, :]
        value = tf.where(tokens[tf.newaxis, :] > frame, _NEG, value)
        return frame + 1, value, decisions

    _, _, decisions = tf.while_loop(
        lambda frame, *_: frame < num_frames, forward, (tf.constant(1), initial, decisions)
    )
    from_previous = decisions.stack()  # (F, B, T)

    # Backtrack from (mel_length - 1, input_length - 1) of every item.
    def backward(frame, token, path):
        active = frame < mel_lengths  # frames past an item's end keep its last token
        path = path.write(frame, tf.where(active, token, 0))
        came_from_previous = tf.gather(from_previous[frame], token[:, tf.newaxis], batch_dims=1)[:, 0]
        move = active & (frame > 0) & (token > 0) & ((token == frame) | came_from_previous)
        return frame - 1, token - tf.cast(move, tf.int32), path

    path = tf.TensorArray(tf.int32, size=num_frames, element_shape=None)
    start_token = tf.maximum(input_lengths - 1, 0)
    _, _, path = tf.while_loop(
        lambda frame, *_: frame >= 0, backward, (num_frames - 1, start_token, path)
    )
    path = tf.transpose(tf.reshape(path.stack(), [num_frames, batch_size]))  # (B, F)
    frame_mask = tf.sequence_mask(mel_lengths, num_frames)
    searched = tf.reduce_sum(
        tf.one_hot(path, num_tokens, dtype=tf.int32) * tf.cast(frame_mask[:, :, tf.newaxis], tf.int32), axis=1
    )

    # Too few frames for a monotonic path through every token: spread them evenly.
    bounds = tf.cast(
        tf.math.floor(
            tf.cast(tf.range(num_tokens + 1)[tf.newaxis, :], tf.float64)
            * tf.cast(mel_lengths[:, tf.newaxis], tf.float64)
            / tf.cast(tf.maximum(input_lengths, 1)[:, tf.newaxis], tf.float64)
        ),
        tf.int32,
    )
    uniform = bounds[:, 1:] - bounds[:, :-1]
    token_mask = tf.sequence_mask(input_lengths, num_tokens)
    uniform = tf.where(token_mask, uniform, 0)
    too_short = mel_lengths < input_lengths
    durations = tf.where(too_short[:, tf.newaxis], uniform, searched)
    durations = tf.where(token_mask, durations, 0)
    path = tf.where(too_short[:, tf.newaxis], _path_from_durations(durations, num_frames), path)
    return durations[:, :given_tokens], path[:, :given_frames]


def _path_from_durations(durations, num_frames):
    """durations (B, T) -> the token of each of num_frames frames (B, F); 0 past the total."""
    ends = tf.cumsum(durations, axis=1)
    frames = tf.range(num_frames)
    index = tf.reduce_sum(tf.cast(ends[:, tf.newaxis, :] <= frames[tf.newaxis, :, tf.newaxis], tf.int32), axis=2)
    index = tf.minimum(index, tf.shape(durations)[1] - 1)
    return tf.where(frames[tf.newaxis, :] < ends[:, -1:], index, 0)
