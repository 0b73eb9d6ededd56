"""1-D convolution whose kernel gradient is one matrix product.

TensorFlow computes a Conv1D as a Conv2D over ``(B, 1, T, C)``, and on the CPU the kernel
gradient of that form (``Conv2DBackpropFilter``) runs at well under half the speed of a
matmul with the same products (`benchmarks/roofline.py`: 38 % of the machine's fp32 matmul
speed in a FastSpeech2 training step, where the forward conv reaches 90 %). The kernel
gradient of a stride-1 conv is a matmul:

    dW[k] = sum over (b, t) of x_padded[b, t + k * dilation]^T dy[b, t]

so with the K shifted views of the input side by side (``(B * T, K * C_in)``, "im2col") it is
one ``(K * C_in, B * T) x (B * T, C_out)`` product, reshaped to ``(K, C_in, C_out)``, the
layout Keras stores. The forward conv and the input gradient stay TensorFlow's own. The
result equals TensorFlow's gradient up to float summation order.
"""

import tensorflow as tf


def _same_padding(kernel_size, dilation):
    """(before, after) padding of a stride-1 "SAME" conv, as TensorFlow pads."""
    total = dilation * (kernel_size - 1)
    return total // 2, total - total // 2


def conv1d(inputs, kernel, padding="VALID", dilation=1):
    """Stride-1 1-D convolution with a matmul kernel gradient.

    Args:
        inputs: (B, T, C_in).
        kernel: (K, C_in, C_out).
        padding: "VALID" or "SAME".
        dilation: int >= 1. A dilated conv goes through space-to-batch (as Keras does in
            training: TensorFlow's CPU gradient kernels without oneDNN have no dilated form),
            whose inner conv is an undilated one.

    Returns:
        (B, T_out, C_out): T_out = T for "SAME", T - dilation * (K - 1) for "VALID".
    """
    if dilation > 1:
        return tf.nn.with_space_to_batch(
            inputs, [dilation], padding, lambda x, _, inner_padding: conv1d(x, kernel, inner_padding),
            filter_shape=[kernel.shape[0]],
        )
    return _conv1d(inputs, kernel, padding)


def _conv1d(inputs, kernel, padding):
    @tf.custom_gradient
    def convolve(x, w):
        y = tf.nn.conv1d(x, w, stride=1, padding=padding)

        def gradient(dy):
            kernel_size, in_channels, out_channels = w.shape
            if padding == "SAME":
                x_padded = tf.pad(x, [[0, 0], _same_padding(kernel_size, 1), [0, 0]])
            else:
                x_padded = x
            steps = tf.shape(dy)[1]
            columns = x_padded if kernel_size == 1 else tf.concat(
                [x_padded[:, k : k + steps] for k in range(kernel_size)], axis=-1
            )
            dw = tf.matmul(
                tf.reshape(columns, [-1, kernel_size * in_channels]), tf.reshape(dy, [-1, out_channels]),
                transpose_a=True,
            )
            dx = tf.nn.conv1d_transpose(dy, w, tf.shape(x), strides=1, padding=padding)
            return dx, tf.reshape(dw, [kernel_size, in_channels, out_channels])

        return y, gradient

    return convolve(inputs, kernel)


class Conv1D(tf.keras.layers.Conv1D):
    """tf.keras Conv1D (same arguments, weights, names and results) with `conv1d`'s faster
    kernel gradient for stride-1, ungrouped convs; other convs are Keras' own."""

    def convolution_op(self, inputs, kernel):
        if self.groups != 1 or self.strides != (1,) or self.padding not in ("valid", "same", "causal"):
            return super().convolution_op(inputs, kernel)
        # "causal": Keras has already padded the inputs on the left.
        padding = "SAME" if self.padding == "same" else "VALID"
        return conv1d(inputs, kernel, padding, self.dilation_rate[0])
