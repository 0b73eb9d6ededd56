"""Adding a bias along the last axis, with a bias gradient that bfloat16 does not ruin.

TensorFlow's CPU kernel for the bias gradient (``BiasAddGrad``) sums a bfloat16 gradient in
bfloat16. On the MB-MelGAN generator step's shapes (batch 8) its sums came out 61-79 % off
over the last stage's 16,384 rows (8 items of 2,048 samples), 17 % over 2,048 rows and 4-5 %
over 256-512 (largest error over the largest sum, against a float64 sum of the same
bfloat16 values), so under ``mixed_bfloat16`` the biases of the longest signals learnt
mostly from noise. ``tf.reduce_sum`` of the same values accumulates in float: 0.2-0.3 % off,
the rounding of its bfloat16 result, in 0.49-1.06 of ``BiasAddGrad``'s time on those shapes.
The harness's generator step under ``mixed_bfloat16`` took 0.918 (quartiles 0.864-1.010) of
the time with it (one process, 30 alternated steps, 2-core Intel Xeon with AMX).
"""

import tensorflow as tf


def bias_add(x, bias):
    """``tf.nn.bias_add(x, bias)``; for bfloat16 ``x`` its bias gradient is a ``tf.reduce_sum``.

    Other dtypes get TensorFlow's own op and gradient, unchanged.

    Args: x (..., C); bias (C,). Returns (..., C).
    """
    if x.dtype != tf.bfloat16:
        return tf.nn.bias_add(x, bias)

    @tf.custom_gradient
    def add(x, bias):
        def gradient(dy):
            return dy, tf.reduce_sum(dy, axis=list(range(len(dy.shape) - 1)))

        return tf.nn.bias_add(x, bias), gradient

    # A variable read inside a custom gradient would need its own gradient path: read it here.
    return add(x, tf.convert_to_tensor(bias))


class KerasConvBias:
    """Mixin for a tf.keras Conv layer (Conv1D, Conv2D, grouped or not): Keras' ``call``, with
    the bias added by `bias_add`. Channels-first layers and extra batch axes keep Keras' call."""

    def call(self, inputs):
        """Args: inputs (B, ..., C_in), channels last. Returns (B, ..., filters)."""
        input_shape = inputs.shape
        if not self.use_bias or self._channels_first or (input_shape.rank or 0) > 2 + self.rank:
            return super().call(inputs)
        if self._is_causal:
            inputs = tf.pad(inputs, self._compute_causal_padding(inputs))
        if self.groups > 1:
            outputs = self._jit_compiled_convolution_op(inputs, tf.convert_to_tensor(self.kernel))
        else:
            outputs = self.convolution_op(inputs, self.kernel)
        if not self.convolution_takes_bias(inputs):
            outputs = bias_add(outputs, self.bias)
        if not tf.executing_eagerly() and input_shape.rank:
            outputs.set_shape(self.compute_output_shape(input_shape))
        return outputs if self.activation is None else self.activation(outputs)

    def convolution_takes_bias(self, inputs):
        """Whether ``convolution_op(inputs, ...)`` adds the bias itself (a subclass whose conv takes
        the bias gradient with the kernel's, `layers.conv1d.Conv1D`); here it does not."""
        return False
