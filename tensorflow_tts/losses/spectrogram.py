"""Per-example masked losses of acoustic models: mel L1/MSE, log-duration MSE, F0/energy MSE.

Every function returns one float32 value per example (shape (B,)): the mean over that
example's real (unpadded) elements, so trainers can sum and average over the global batch.
"""

import tensorflow as tf


def _lengths_mask(lengths, max_length, dtype=tf.float32):
    return tf.sequence_mask(lengths, max_length, dtype=dtype)


def _common_length(prediction, target):
    """Crop both (B, L, ...) tensors to the shorter L (a model may emit a frame more or less)."""
    length = tf.minimum(tf.shape(prediction)[1], tf.shape(target)[1])
    return prediction[:, :length], target[:, :length], length


def _masked_mean(error, mask):
    """error (B, L) or (B, L, C) and mask (B, L) -> (B,): mean over the masked elements."""
    error = tf.cast(error, tf.float32)
    if error.shape.rank == 3:
        channels = tf.cast(tf.shape(error)[2], tf.float32)
        error = tf.reduce_sum(error, axis=2)
    else:
        channels = 1.0
    total = tf.reduce_sum(error * mask, axis=1)
    return tf.math.divide_no_nan(total, tf.reduce_sum(mask, axis=1) * channels)


def masked_mel_mae(target, prediction, lengths):
    """Mean absolute error of mel spectrograms over the real frames.

    Args: target, prediction (B, F, num_mels) (cropped to the shorter F); lengths (B,) frames.
    Returns: (B,) float32.
    """
    prediction, target, length = _common_length(tf.cast(prediction, tf.float32), tf.cast(target, tf.float32))
    return _masked_mean(tf.abs(prediction - target), _lengths_mask(lengths, length))


def masked_mel_mse(target, prediction, lengths):
    """Mean squared error of mel spectrograms over the real frames. Shapes as `masked_mel_mae`."""
    prediction, target, length = _common_length(tf.cast(prediction, tf.float32), tf.cast(target, tf.float32))
    return _masked_mean(tf.square(prediction - target), _lengths_mask(lengths, length))


def masked_mse(target, prediction, lengths):
    """Mean squared error of (B, L) sequences (F0, energy per token or frame) over real steps.

    Args: target, prediction (B, L); lengths (B,). Returns: (B,) float32.
    """
    prediction, target, length = _common_length(tf.cast(prediction, tf.float32), tf.cast(target, tf.float32))
    return _masked_mean(tf.square(prediction - target), _lengths_mask(lengths, length))


def log_duration_loss(duration_targets, log_duration_predictions, input_lengths):
    """MSE between log(1 + target frames) and the predicted log(1 + frames), over real tokens.

    Args:
        duration_targets: (B, T) int frames per token.
        log_duration_predictions: (B, T) float, the duration predictor's output.
        input_lengths: (B,) tokens per item.

    Returns: (B,) float32.
    """
    log_targets = tf.math.log1p(tf.cast(tf.maximum(duration_targets, 0), tf.float32))
    return masked_mse(log_targets, log_duration_predictions, input_lengths)
