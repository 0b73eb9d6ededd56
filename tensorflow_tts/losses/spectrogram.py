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


def calculate_3d_loss(y_gt, y_pred, loss_fn):
    """TensorFlowTTS 1.8's helper: ``loss_fn`` on target and prediction cropped to the shorter length.

    Args:
        y_gt, y_pred: (B, L, C) (mels) or (B, L) (durations, F0, energy); lengths may differ.
        loss_fn: ``loss_fn(y_gt, y_pred)`` -> a tensor, or a tuple of tensors, batch first
            (e.g. a Keras loss built with ``reduction=NONE``).

    Returns:
        (B,): the loss averaged over every axis but the batch; a list of them for a tuple.
    """
    y_pred, y_gt, _ = _common_length(y_pred, y_gt)
    loss = loss_fn(y_gt, y_pred)

    def per_example(value):
        return tf.reduce_mean(value, axis=list(range(1, value.shape.rank)))

    return [per_example(value) for value in loss] if isinstance(loss, tuple) else per_example(loss)


calculate_2d_loss = calculate_3d_loss  # 1.8 had one copy per rank; the cropping is the same


class TFMelSpectrogram(tf.keras.layers.Layer):
    """TensorFlowTTS 1.8's mel-spectrogram loss: L1 between the natural-log mels of two waveforms.

    Its mel is TensorFlow's (`tf.signal.linear_to_mel_weight_matrix`, no centre padding), not
    the feature mel of `audio.mel`; our vocoder recipes compare feature mels instead. Kept so
    1.8 code that builds this loss runs unchanged.
    """

    def __init__(self, n_mels=80, f_min=80.0, f_max=7600, frame_length=1024, frame_step=256, fft_length=1024,
                 sample_rate=16000, **kwargs):
        super().__init__(**kwargs)
        self.frame_length = frame_length
        self.frame_step = frame_step
        self.fft_length = fft_length
        self.filterbank = tf.signal.linear_to_mel_weight_matrix(n_mels, fft_length // 2 + 1, sample_rate, f_min, f_max)

    def log_mel(self, signals):
        """signals (B, T) -> natural-log mel (B, frames, n_mels)."""
        magnitude = tf.abs(tf.signal.stft(signals, self.frame_length, self.frame_step, self.fft_length))
        return tf.math.log(tf.tensordot(magnitude, self.filterbank, 1) + 1e-6)

    def call(self, y, x):
        """y: target (B, T), x: prediction (B, T) -> (B,) mean absolute log-mel difference."""
        return tf.reduce_mean(tf.abs(self.log_mel(y) - self.log_mel(x)), axis=[1, 2])
