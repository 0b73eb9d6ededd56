"""Variance predictors: convs over a hidden sequence predicting one value per step.

FastSpeech's duration predictor and FastSpeech2's duration, pitch and energy
predictors are this layer with different options.
"""

import tensorflow as tf

from tensorflow_tts.layers.conv1d import Conv1D
from tensorflow_tts.layers.dense import Dense
from tensorflow_tts.layers.dropout import Dropout
from tensorflow_tts.layers.embeddings import SpeakerEmbedding
from tensorflow_tts.layers.hyperparameters import HyperParameterConfig


class VariancePredictor(HyperParameterConfig, tf.keras.layers.Layer):
    """``num_conv_layers`` x (conv, activation and layer norm, dropout), then Dense(1).

    Args:
        filters, kernel_size, num_conv_layers, dropout_rate: the conv stack.
        layer_norm_eps: epsilon of the layer norms.
        activation: "relu" or "relu6", after each conv.
        norm_before_activation: False: conv, activation, norm (FastSpeech2);
            True: conv, norm, activation (FastSpeech's duration predictor).
        output_activation: None or "relu6", applied to the masked output (FastSpeech
            clips its log durations to [0, 6]).
        n_speakers, hidden_size: with ``n_speakers > 1`` a speaker embedding of
            ``hidden_size`` (the input width) is added to the input.
    """

    hyperparameters = ("filters", "kernel_size", "num_conv_layers", "dropout_rate", "layer_norm_eps",
        "activation", "norm_before_activation", "output_activation", "n_speakers", "hidden_size",
        "initializer_range")

    _ACTIVATIONS = {"relu": tf.nn.relu, "relu6": tf.nn.relu6}

    def __init__(
        self,
        filters,
        kernel_size,
        num_conv_layers,
        dropout_rate,
        layer_norm_eps=1e-5,
        activation="relu",
        norm_before_activation=False,
        output_activation=None,
        n_speakers=1,
        hidden_size=None,
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if activation not in self._ACTIVATIONS:
            raise ValueError(f"activation must be one of {', '.join(self._ACTIVATIONS)}, got {activation!r}")
        if output_activation not in (None, *self._ACTIVATIONS):
            raise ValueError(f"output_activation must be None or one of {', '.join(self._ACTIVATIONS)}")
        if n_speakers > 1 and hidden_size is None:
            raise ValueError("a speaker-conditioned VariancePredictor needs hidden_size (its input width)")
        self.filters = filters
        self.kernel_size = kernel_size
        self.num_conv_layers = num_conv_layers
        self.dropout_rate = dropout_rate
        self.layer_norm_eps = layer_norm_eps
        self.activation = activation
        self.norm_before_activation = norm_before_activation
        self.output_activation = output_activation
        self.n_speakers = n_speakers
        self.hidden_size = hidden_size
        self.initializer_range = initializer_range

        self.convs = [
            Conv1D(filters, kernel_size, padding="same", name=f"conv_._{i}")
            for i in range(num_conv_layers)
        ]
        self.norms = [
            tf.keras.layers.LayerNormalization(epsilon=layer_norm_eps, name=f"norm_._{i}")
            for i in range(num_conv_layers)
        ]
        self.dropouts = [Dropout(dropout_rate) for _ in range(num_conv_layers)]
        self.projection = Dense(1, name="projection")
        self.speaker_embedding = (
            SpeakerEmbedding(n_speakers, hidden_size, initializer_range, name="speaker_embedding")
            if n_speakers > 1
            else None
        )

    def call(self, hidden_states, mask, speaker_ids=None, training=False):
        """hidden_states (B, T, C), mask (B, T) bool, speaker_ids (B,) -> (B, T), 0 where masked."""
        step_mask = tf.cast(mask[:, :, tf.newaxis], hidden_states.dtype)
        if self.speaker_embedding is not None:
            hidden_states += self.speaker_embedding(speaker_ids)
        activation = self._ACTIVATIONS[self.activation]
        outputs = hidden_states * step_mask
        for conv, norm, dropout in zip(self.convs, self.norms, self.dropouts):
            outputs = conv(outputs)
            if self.norm_before_activation:
                outputs = activation(norm(outputs))
            else:
                outputs = norm(activation(outputs))
            # Re-mask so the next conv sees zeros at padding, as for an unpadded sequence.
            outputs = dropout(outputs, training=training) * step_mask
        outputs = self.projection(outputs) * step_mask
        if self.output_activation is not None:
            outputs = self._ACTIVATIONS[self.output_activation](outputs)
        return tf.squeeze(outputs, -1)
