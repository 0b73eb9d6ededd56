"""An LSTM cell with zoneout (Krueger et al., 2016), for step-by-step decoders such as Tacotron 2's."""

import tensorflow as tf

from tensorflow_tts.layers.bias import bias_add
from tensorflow_tts.utils import step_random


def lstm_gates(z, c_previous):
    """An LSTM's new ``(h, c)`` from its gate pre-activations ``z`` (B, 4u) in Keras' order (input,
    forget, cell, output; sigmoid gates, tanh cell) and the previous cell state (B, u)."""
    z_input, z_forget, z_cell, z_output = tf.split(z, 4, axis=-1)
    c = tf.sigmoid(z_forget) * c_previous + tf.sigmoid(z_input) * tf.tanh(z_cell)
    return tf.sigmoid(z_output) * tf.tanh(c), c


class ZoneoutLSTMCell(tf.keras.layers.Layer):
    """One LSTM step; with zoneout, each state unit keeps its previous value with probability ``zoneout_rate``.

    The weights and the gate math are those of Keras' ``LSTMCell`` (``kernel [in, 4u]``,
    ``recurrent_kernel [u, 4u]``, ``bias [4u]``, gate order input, forget, cell, output;
    sigmoid gates, tanh cell), so Keras LSTM weights load into it unchanged. With
    ``zoneout_rate`` 0 it *is* a Keras LSTM cell.

    In training each unit of ``h`` and ``c`` keeps its previous value where a Bernoulli
    mask says so; otherwise the new and previous states are mixed with the mask's
    expectation, ``rate * previous + (1 - rate) * new``, which needs no random op.
    """

    def __init__(self, units, zoneout_rate=0.0, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", **kwargs):
        super().__init__(**kwargs)
        if not 0.0 <= zoneout_rate < 1.0:
            raise ValueError(f"{self.name}: zoneout_rate must lie in [0, 1), got {zoneout_rate}")
        self.units = units
        self.zoneout_rate = zoneout_rate
        self.kernel_initializer = tf.keras.initializers.get(kernel_initializer)
        self.recurrent_initializer = tf.keras.initializers.get(recurrent_initializer)

    @property
    def state_size(self):
        return [self.units, self.units]

    def build(self, input_shape):
        input_dim = int(input_shape[-1])
        self.kernel = self.add_weight("kernel", shape=[input_dim, 4 * self.units], initializer=self.kernel_initializer)
        self.recurrent_kernel = self.add_weight(
            "recurrent_kernel", shape=[self.units, 4 * self.units], initializer=self.recurrent_initializer
        )

        def unit_forget_bias(shape, dtype=None, **kwargs):
            # Forget gates start open (bias 1), as Keras' LSTM does.
            return tf.concat([tf.zeros([self.units]), tf.ones([self.units]), tf.zeros([2 * self.units])], 0)

        self.bias = self.add_weight("bias", shape=[4 * self.units], initializer=unit_forget_bias)
        super().build(input_shape)

    def get_initial_state(self, batch_size, dtype=tf.float32):
        """Zero ``[h, c]``, each (B, units)."""
        return [tf.zeros([batch_size, self.units], dtype), tf.zeros([batch_size, self.units], dtype)]

    def call(self, inputs, states, training=False):
        """One step.

        Args:
            inputs: (B, D).
            states: ``[h, c]``, each (B, units).
            training: draws the zoneout masks (otherwise their expectation is used).

        Returns:
            ``(h, [h, c])``: the output (B, units) and the new states.
        """
        return self.step(tf.matmul(inputs, self.kernel), states, training)

    def step(self, input_product, states, training=False):
        """`call` from ``inputs @ kernel`` (B, 4 * units), computed by the caller (e.g. in parts).
        Called directly, outside Keras' ``__call__``, it reads the weights in the product's dtype."""
        h_previous, c_previous = states
        dtype = input_product.dtype
        z = input_product + tf.matmul(h_previous, tf.cast(self.recurrent_kernel, dtype))
        h, c = lstm_gates(bias_add(z, tf.cast(self.bias, dtype)), c_previous)
        if self.zoneout_rate > 0.0:
            h = self._zoneout(h_previous, h, training)
            c = self._zoneout(c_previous, c, training)
        return h, [h, c]

    def _zoneout(self, previous, new, training):
        if training:
            keep = tf.cast(step_random.uniform(tf.shape(new)) < self.zoneout_rate, new.dtype)
            return keep * previous + (1.0 - keep) * new
        return self.zoneout_rate * previous + (1.0 - self.zoneout_rate) * new

    def get_config(self):
        config = super().get_config()
        config.update(
            units=self.units,
            zoneout_rate=self.zoneout_rate,
            kernel_initializer=tf.keras.initializers.serialize(self.kernel_initializer),
            recurrent_initializer=tf.keras.initializers.serialize(self.recurrent_initializer),
        )
        return config
