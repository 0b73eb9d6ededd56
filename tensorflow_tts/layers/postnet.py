"""Tacotron-style postnet: a conv stack predicting a residual added to the mel frames."""

import tensorflow as tf


class Postnet(tf.keras.layers.Layer):
    """``num_layers`` x (conv, batch norm, tanh, dropout); the last conv outputs ``num_mels``
    channels and has no tanh."""

    def __init__(self, num_mels, filters, kernel_size, num_layers, dropout_rate, **kwargs):
        super().__init__(**kwargs)
        self.num_mels = num_mels
        self.filters = filters
        self.kernel_size = kernel_size
        self.num_layers = num_layers
        self.dropout_rate = dropout_rate
        self.convs = [
            tf.keras.layers.Conv1D(
                filters if i < num_layers - 1 else num_mels, kernel_size, padding="same", name=f"conv_._{i}"
            )
            for i in range(num_layers)
        ]
        self.batch_norms = [tf.keras.layers.BatchNormalization(axis=-1, name=f"batch_norm_._{i}") for i in range(num_layers)]
        self.dropout = tf.keras.layers.Dropout(dropout_rate)

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
