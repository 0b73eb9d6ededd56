"""1-D convolution whose kernel gradient is computed by matrix products.

TensorFlow computes a Conv1D as a Conv2D over ``(B, 1, T, C)``, and on the CPU the kernel
gradient of that form (``Conv2DBackpropFilter``) runs at well under half the speed of a
matmul with the same products (`benchmarks/roofline.py`: 38 % of the machine's fp32 matmul
speed in a FastSpeech2 training step, where the forward conv reaches 90 %). The kernel
gradient of a stride-1 conv is a matmul:

    dW[k] = sum over (b, t) of x_padded[b, t + k * dilation]^T dy[b, t]

computed with matmuls (`kernel_gradient`). The forward conv and the input gradient stay
TensorFlow's own, and the result equals TensorFlow's gradient up to float summation order.
"""

import tensorflow as tf


def _same_padding(kernel_size):
    """(before, after) padding of a stride-1, undilated "SAME" conv, as TensorFlow pads."""
    total = kernel_size - 1
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
            before, after = _same_padding(w.shape[0]) if padding == "SAME" else (0, 0)
            x_padded = tf.pad(x, [[0, 0], [before, after], [0, 0]]) if before or after else x
            dx = tf.nn.conv1d_transpose(dy, w, tf.shape(x), strides=1, padding=padding)
            return dx, kernel_gradient(x_padded, dy, w.shape)

        return y, gradient

    # A variable read inside a custom gradient would need its own gradient path: read it here.
    return convolve(tf.convert_to_tensor(inputs), tf.convert_to_tensor(kernel))


# Input channels from which the per-tap form of the kernel gradient is used (below it, im2col).
# Chosen from single-thread CPU time of the `benchmarks/roofline.py` training steps against
# Keras' Conv2DBackpropFilter: FastSpeech2 v1 (C_in 256-1024) gains most per tap (~12 % less;
# im2col everywhere ~5 %); MB-MelGAN v1 (C_in 48-384, long sequences) gains with im2col (~7 %)
# and loses per tap (~10 % more). The side-by-side figures are in benchmarks/README.md.
PER_TAP_MIN_CHANNELS = 256


def kernel_gradient(x_padded, dy, kernel_shape):
    """d loss / d kernel of a stride-1 conv: x_padded (B, T_out + K - 1, C_in), dy (B, T_out, C_out)
    -> (K, C_in, C_out).

    Wide inputs: per tap, with both tensors flattened to rows (dy with K - 1 zero rows after
    each sequence, so row b * P + t of both is position t of sequence b and a shift never
    reaches the next sequence), tap k is one (C_in, N) x (N, C_out) product of two row ranges
    (no K shifted copies of the input side by side). Narrow inputs: the K shifted views side by side
    ("im2col", (B * T_out, K * C_in)) and one product, which keeps the matmul wide.
    """
    kernel_size, in_channels, out_channels = kernel_shape
    if kernel_size > 1 and in_channels >= PER_TAP_MIN_CHANNELS:
        rows = tf.reshape(x_padded, [-1, in_channels])
        dy_rows = tf.reshape(tf.pad(dy, [[0, 0], [0, kernel_size - 1], [0, 0]]), [-1, out_channels])
        count = tf.shape(rows)[0]
        return tf.stack([tf.matmul(rows[k:], dy_rows[: count - k], transpose_a=True) for k in range(kernel_size)])
    steps = tf.shape(dy)[1]
    columns = x_padded if kernel_size == 1 else tf.concat([x_padded[:, k : k + steps] for k in range(kernel_size)], -1)
    dw = tf.matmul(tf.reshape(columns, [-1, kernel_size * in_channels]), tf.reshape(dy, [-1, out_channels]), transpose_a=True)
    return tf.reshape(dw, kernel_shape)


class Conv1D(tf.keras.layers.Conv1D):
    """tf.keras Conv1D (same arguments, weights, names and results) with `conv1d`'s faster
    kernel gradient for stride-1, ungrouped convs; other convs are Keras' own."""

    def convolution_op(self, inputs, kernel):
        if self.groups != 1 or self.strides != (1,) or self.padding not in ("valid", "same", "causal"):
            return super().convolution_op(inputs, kernel)
        # "causal": Keras has already padded the inputs on the left.
        padding = "SAME" if self.padding == "same" else "VALID"
        return conv1d(inputs, kernel, padding, self.dilation_rate[0])
