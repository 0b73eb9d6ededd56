"""Location-sensitive attention (Chorowski et al., 2015), the attention of Tacotron 2.

Additive (Bahdanau) attention whose energies also see convolutional features of the
cumulative alignment, which pushes the attention forward monotonically.
"""

import tensorflow as tf

from tensorflow_tts.layers.conv1d import Conv1D
from tensorflow_tts.layers.dense import Dense


def window_mask(previous_peaks, memory_length, win_front, win_back):
    """Positions an inference step may attend to: ``peak - win_front <= i <= peak + win_back``.

    Args:
        previous_peaks: (B,) int32, argmax of the previous step's alignment.
        memory_length: scalar int32, T.
        win_front, win_back: how far behind and ahead of the previous peak to look.

    Returns:
        (B, T) bool.
    """
    positions = tf.range(memory_length)[tf.newaxis, :]
    peaks = previous_peaks[:, tf.newaxis]
    return tf.logical_and(positions >= peaks - win_front, positions <= peaks + win_back)


def _over_last_axis(dense, inputs):
    """``dense`` applied to a (B, T, C) tensor as one broadcast matmul. Keras computes it with
    tensordot, whose gradient inside the decoder loop needs shapes XLA cannot know when
    compiling (``jit_compile``); the weights are the layer's own."""
    outputs = tf.matmul(inputs, dense.kernel)
    return outputs if dense.bias is None else outputs + dense.bias


def attention_context(alignments, values):
    """alignments (B, T), values (B, T, M) -> the weighted sum (B, M)."""
    return tf.reduce_sum(alignments[:, :, tf.newaxis] * values, axis=1)


class LocationSensitiveAttention(tf.keras.layers.Layer):
    """energy_i = v . tanh(W_m m_i + W_q q + W_l conv(cumulative alignment)_i) + b.

    Sub-layers: ``query_layer``, ``memory_layer`` and ``location_layer`` (Dense to ``units``,
    no bias), ``location_conv`` (Conv1D over the cumulative alignment, no bias) and
    ``scores`` (Dense to 1, with bias).

    Use: ``keys, values = attention.process_memory(memory, memory_mask)`` once per
    utterance, then ``attention(query, cumulative_alignments, keys, values, memory_mask)``
    per decoder step.
    """

    def __init__(self, units, filters, kernel_size, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.filters = filters
        self.kernel_size = kernel_size
        self.query_layer = Dense(units, use_bias=False, name="query_layer")
        self.memory_layer = Dense(units, use_bias=False, name="memory_layer")
        self.location_conv = Conv1D(
            filters, kernel_size, padding="same", use_bias=False, name="location_conv"
        )
        self.location_layer = Dense(units, use_bias=False, name="location_layer")
        self.scores = Dense(1, name="scores")

    def build(self, input_shape):
        """input_shape: ``(query_shape, memory_shape)``, i.e. ((B, Q), (B, T, M))."""
        query_shape, memory_shape = input_shape
        for layer, shape in (
            (self.query_layer, [None, query_shape[-1]]),
            (self.memory_layer, [None, None, memory_shape[-1]]),
            (self.location_conv, [None, None, 1]),
            (self.location_layer, [None, None, self.filters]),
            (self.scores, [None, None, self.units]),
        ):
            with tf.name_scope(layer.name):
                layer.build(tf.TensorShape(shape))
        super().build(input_shape)

    def process_memory(self, memory, memory_mask):
        """memory (B, T, M), memory_mask (B, T) bool -> keys (B, T, units), values (B, T, M).

        Values are the memory with padded steps zeroed.
        """
        values = memory * tf.cast(memory_mask, memory.dtype)[:, :, tf.newaxis]
        return self.memory_layer(values), values

    def energies(self, query, cumulative_alignments, keys):
        """query (B, Q), cumulative_alignments (B, T), keys (B, T, units) -> energies (B, T)."""
        processed_query = self.query_layer(query)[:, tf.newaxis, :]
        location = _over_last_axis(self.location_layer, self.location_conv(cumulative_alignments[:, :, tf.newaxis]))
        return tf.squeeze(_over_last_axis(self.scores, tf.tanh(keys + processed_query + location)), -1)

    def call(self, query, previous_alignments, cumulative_alignments, keys, values, memory_mask, allowed=None,
             training=False, hard=False):
        """One attention step.

        Args:
            query: (B, Q), the attention LSTM output.
            previous_alignments: (B, T), the last step's alignments; not used here (the
                stepwise monotonic attention, which shares this call, moves them on).
            cumulative_alignments: (B, T), the sum of the previous alignments.
            keys, values: (B, T, units), (B, T, M) from `process_memory`.
            memory_mask: (B, T) bool, False at padding.
            allowed: optional (B, T) bool, further positions allowed (e.g. `window_mask`).
            training, hard: not used here (the stepwise monotonic attention's noise and
                hard decisions).

        Returns:
            context (B, M) and alignments (B, T), which sum to 1 over valid positions.
        """
        energy = self.energies(query, cumulative_alignments, keys)
        valid = memory_mask if allowed is None else tf.logical_and(memory_mask, allowed)
        energy = tf.where(valid, energy, tf.cast(energy.dtype.min, energy.dtype))
        alignments = tf.nn.softmax(energy, axis=-1)
        return attention_context(alignments, values), alignments

    def get_config(self):
        config = super().get_config()
        config.update(units=self.units, filters=self.filters, kernel_size=self.kernel_size)
        return config
