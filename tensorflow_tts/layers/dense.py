"""A Dense layer that projects a (B, T, C) sequence with one matrix product.

Keras' Dense applies its kernel to an input of rank > 2 through ``tf.tensordot``: a shape
read, two gathers, two products, two concats, a transpose and two reshapes around the
matmul, 17 ops where one does. Every FastSpeech2 layer has four such projections, so
they were a fifth of the traced FastSpeech2 + MB-MelGAN graph: more to trace and
optimise at start-up, more small ops per call, and in a TFLite file run-time shape
arithmetic that XNNPACK does not take, which split the graph into many partitions.
"""

import tensorflow as tf

from tensorflow_tts.layers.bias import bias_add


class Dense(tf.keras.layers.Dense):
    """tf.keras Dense (same arguments, weights, names and results) that projects the last
    axis of a dense (B, T, C) input without Keras' tensordot detour.

    Outside training the projection is one broadcast matmul ``(B, T, C) x (C, units)``
    (one op here, FULLY_CONNECTED in a TFLite file). In training the sequence is folded
    into rows, ``(B * T, C) x (C, units)``, so the kernel's gradient is one matmul over
    all rows, not one per sequence summed afterwards.
    """

    def call(self, inputs, training=None):
        """Args: inputs (..., C). Returns (..., units)."""
        if not isinstance(inputs, tf.Tensor) or inputs.shape.rank is None or inputs.shape.rank <= 2:
            return super().call(inputs)
        if inputs.dtype.base_dtype != self._compute_dtype_object.base_dtype:
            inputs = tf.cast(inputs, self._compute_dtype_object)
        kernel = tf.convert_to_tensor(self.kernel)
        if training:
            rows = tf.matmul(tf.reshape(inputs, [-1, inputs.shape[-1]]), kernel)
            outputs = tf.reshape(rows, tf.concat([tf.shape(inputs)[:-1], [self.units]], 0))
        else:
            outputs = tf.matmul(inputs, kernel)
        if self.use_bias:
            outputs = bias_add(outputs, self.bias)
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs
