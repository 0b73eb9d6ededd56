"""WaveNet's gated residual block with local conditioning, the building block of Parallel WaveGAN."""

import math

import tensorflow as tf

from tensorflow_tts.layers.conv1d import Conv1D
from tensorflow_tts.layers.dropout import Dropout
from tensorflow_tts.layers.hyperparameters import HyperParameterConfig


def he_normal(seed, offset=0):
    """He-normal kernel initializer (TensorFlowTTS 1.8's for WaveNet convs); ``seed + offset`` keeps layers distinct."""
    return tf.keras.initializers.HeNormal(seed=None if seed is None else int(seed) + offset)


class TFWaveNetResidualBlock(HyperParameterConfig, tf.keras.layers.Layer):
    """``z = tanh(a) * sigmoid(b)`` with ``[a, b] = dilated_conv(dropout(x)) + conv1x1_aux(c)``;
    returns ``((x + conv1x1_out(z)) * sqrt(0.5), conv1x1_skip(z))``.

    Weights: ``dilated_conv`` (K, residual, gate), ``conv1x1_aux`` (1, aux, gate; no bias),
    ``conv1x1_out`` (1, gate / 2, residual), ``conv1x1_skip`` (1, gate / 2, skip). Convs pad
    with zeros ("same"). TensorFlowTTS 1.8 called this block ``TFResidualBlock``.
    """

    hyperparameters = ("kernel_size", "residual_channels", "gate_channels", "skip_channels", "dilation_rate",
        "dropout_rate", "use_bias", "initializer_seed")

    def __init__(self, kernel_size=3, residual_channels=64, gate_channels=128, skip_channels=64, dilation_rate=1,
                 dropout_rate=0.0, use_bias=True, initializer_seed=42, **kwargs):
        super().__init__(**kwargs)
        self.kernel_size = kernel_size
        self.residual_channels = residual_channels
        self.gate_channels = gate_channels
        self.skip_channels = skip_channels
        self.dilation_rate = dilation_rate
        self.dropout_rate = dropout_rate
        self.use_bias = use_bias
        self.initializer_seed = initializer_seed
        self.dropout = Dropout(dropout_rate)
        self.dilated_conv = Conv1D(
            gate_channels, kernel_size, padding="same", dilation_rate=dilation_rate, use_bias=use_bias,
            kernel_initializer=he_normal(initializer_seed, 0), name="dilated_conv",
        )
        self.conv1x1_aux = Conv1D(
            gate_channels, 1, use_bias=False, kernel_initializer=he_normal(initializer_seed, 1), name="conv1x1_aux"
        )
        self.conv1x1_out = Conv1D(
            residual_channels, 1, use_bias=use_bias, kernel_initializer=he_normal(initializer_seed, 2), name="conv1x1_out"
        )
        self.conv1x1_skip = Conv1D(
            skip_channels, 1, use_bias=use_bias, kernel_initializer=he_normal(initializer_seed, 3), name="conv1x1_skip"
        )

    def call(self, x, conditioning, training=False):
        """Args: x ``(B, T, residual_channels)``, conditioning ``(B, T, aux_channels)``.

        Returns: (residual output ``(B, T, residual_channels)``, skip output ``(B, T, skip_channels)``).
        """
        gates = self.dilated_conv(self.dropout(x, training=training)) + self.conv1x1_aux(conditioning)
        tanh_half, sigmoid_half = tf.split(gates, 2, axis=-1)
        z = tf.math.tanh(tanh_half) * tf.math.sigmoid(sigmoid_half)
        return (x + self.conv1x1_out(z)) * math.sqrt(0.5), self.conv1x1_skip(z)
