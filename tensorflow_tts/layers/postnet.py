"""Postnets: conv stacks over the decoder's mel frames whose output is a residual that refines
them (TFTacotron2 first projects its postnet's output to ``n_mels``).

FastSpeech's `Postnet` and Tacotron2's `Tacotron2Postnet` stay two classes: each keeps
TensorFlowTTS 1.8's variable names (``conv_._i``, ``batch_norm_._i`` against
``conv_batch_norm_._i/conv``, ``.../batch_norm``), which old checkpoints are loaded by, and
its numerics (initialiser, output width, masking).
"""

import tensorflow as tf

from tensorflow_tts.layers.checkpointing import run_block
from tensorflow_tts.layers.conv1d import Conv1D
from tensorflow_tts.layers.dropout import Dropout
from tensorflow_tts.layers.embeddings import truncated_normal


def keras_activation(name):
    """A Keras activation by name; 1.8's ``identity`` is Keras' ``linear``."""
    return tf.keras.activations.get("linear" if name == "identity" else name)


class Postnet(tf.keras.layers.Layer):
    """``num_layers`` x (conv, batch norm synchronised across replicas, tanh, dropout); the
    last conv outputs ``num_mels`` channels and has no tanh."""

    def __init__(self, num_mels, filters, kernel_size, num_layers, dropout_rate, **kwargs):
        super().__init__(**kwargs)
        self.num_mels = num_mels
        self.filters = filters
        self.kernel_size = kernel_size
        self.num_layers = num_layers
        self.dropout_rate = dropout_rate
        self.convs = [
            Conv1D(
                filters if i < num_layers - 1 else num_mels, kernel_size, padding="same", name=f"conv_._{i}"
            )
            for i in range(num_layers)
        ]
        # Synchronised: in training the statistics span every replica's batch, so N replicas
        # x B train as one replica x N*B (per-replica statistics would differ from the global
        # ones). Inference uses the moving statistics, as in 1.8; the variables are the same.
        self.batch_norms = [
            tf.keras.layers.BatchNormalization(axis=-1, synchronized=True, name=f"batch_norm_._{i}")
            for i in range(num_layers)
        ]
        self.dropout = Dropout(dropout_rate)

    def call(self, mels, mask, training=False):
        """mels (B, F, num_mels), mask (B, F) bool -> residual (B, F, num_mels), 0 where masked."""
        step_mask = tf.cast(mask[:, :, tf.newaxis], mels.dtype)
        outputs = mels
        for i, (conv, batch_norm) in enumerate(zip(self.convs, self.batch_norms)):
            # Zeros at padding for every conv, as for an unpadded sequence.
            outputs = batch_norm(conv(outputs * step_mask), training=training)
            if i < self.num_layers - 1:
                outputs = tf.math.tanh(outputs)
            outputs = self.dropout(outputs, training=training)
        return outputs * step_mask

    def get_config(self):
        config = super().get_config()
        config.update(
            num_mels=self.num_mels,
            filters=self.filters,
            kernel_size=self.kernel_size,
            num_layers=self.num_layers,
            dropout_rate=self.dropout_rate,
        )
        return config


class ConvBatchNorm(tf.keras.layers.Layer):
    """Conv1D ("same" padding) -> batch norm (synchronised across replicas) -> activation -> dropout.

    The unit of `Tacotron2Postnet` and of the Tacotron2 encoder's conv stack.
    """

    def __init__(self, filters, kernel_size, activation, dropout_rate, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.filters = filters
        self.kernel_size = kernel_size
        self.activation = activation
        self.dropout_rate = dropout_rate
        self.initializer_range = initializer_range
        self.conv = Conv1D(
            filters,
            kernel_size,
            padding="same",
            kernel_initializer=truncated_normal(initializer_range),
            name="conv",
        )
        # 1.8 used SyncBatchNormalization (= synchronized=True): in training, the statistics
        # span every replica's batch and the variance is E[x^2] - E[x]^2, not the two-pass
        # variance of plain batch norm. The postnet amplifies that rounding difference to
        # ~1e-5 with a 20-frame batch, so we compute it the same way.
        self.batch_norm = tf.keras.layers.BatchNormalization(axis=-1, synchronized=True, name="batch_norm")
        self.dropout = Dropout(dropout_rate)
        self._activation_fn = keras_activation(activation)

    def call(self, inputs, step_mask=None, training=False):
        """inputs (B, T, C), step_mask optional (B, T) bool -> (B, T, filters).

        With a mask, padded steps are zeroed before the conv, so a padded sequence sees
        the same zeros at its end as an unpadded one.
        """
        if step_mask is not None:
            inputs = inputs * tf.cast(step_mask, inputs.dtype)[:, :, tf.newaxis]
        outputs = self.batch_norm(self.conv(inputs), training=training)
        return self.dropout(self._activation_fn(outputs), training=training)

    def get_config(self):
        config = super().get_config()
        config.update(
            filters=self.filters,
            kernel_size=self.kernel_size,
            activation=self.activation,
            dropout_rate=self.dropout_rate,
            initializer_range=self.initializer_range,
        )
        return config


class Tacotron2Postnet(tf.keras.layers.Layer):
    """``n_conv_postnet`` x ConvBatchNorm (tanh, the last one linear), all ``postnet_conv_filters`` wide.

    With ``gradient_checkpointing``, training recomputes each unit's activations in the
    backward pass (`layers.checkpointing`).
    """

    gradient_checkpointing = False

    def __init__(self, config, **kwargs):
        super().__init__(**kwargs)
        self.config = config
        self.convs = [
            ConvBatchNorm(
                config.postnet_conv_filters,
                config.postnet_conv_kernel_sizes,
                "tanh" if i < config.n_conv_postnet - 1 else "identity",
                config.postnet_dropout_rate,
                config.initializer_range,
                name=f"conv_batch_norm_._{i}",
            )
            for i in range(config.n_conv_postnet)
        ]

    def call(self, mels, step_mask=None, training=False):
        """mels (B, F, n_mels), step_mask optional (B, F) bool -> (B, F, postnet_conv_filters)."""
        outputs = mels
        for conv in self.convs:
            outputs = run_block(conv, outputs, step_mask, training=training, recompute=self.gradient_checkpointing)
        return outputs

    def get_config(self):
        config = super().get_config()
        config.update(config=self.config.to_dict())
        return config
