"""1-D convolution whose gradients are computed by forward convolutions and matrix products.

TensorFlow computes a Conv1D as a Conv2D over ``(B, 1, T, C)``. On the CPU both gradient
kernels of that form run far below the forward conv's speed (`benchmarks/roofline.py`: the
kernel gradient at 38 % of the machine's fp32 matmul speed in a FastSpeech2 training step
where the forward conv reaches 90 %; the input gradient of the MB-MelGAN generator at 30 %
where its forward convs reach 67 %), and a dilated conv goes through space-to-batch, two
more copies of the signal each way. Both gradients of a stride-1 conv are cheaper forms:

    dx = conv(dy padded by dilation * (K - 1) on both sides, the kernel reversed along its
              taps with C_in and C_out swapped), a forward conv with the same dilation
    dW[k] = sum over (b, t) of x_padded[b, t + k * dilation]^T dy[b, t], matmuls

(`input_gradient`, `kernel_gradient`). The forward conv takes the dilation directly. The
results equal TensorFlow's up to float summation order.

Where oneDNN runs TensorFlow's conv kernels (on by default on AVX-512 CPUs), its own input
gradient is a little faster per op (0.85-0.91 of `input_gradient` on the MB-MelGAN
generator's shapes, AMD Zen 4) and its kernel gradient as fast for 3 taps, slower for 1; the
generator's gradients then took 0.978-0.988 of the time: too little to keep two code paths.
"""

import tensorflow as tf

from tensorflow_tts.layers import kernels
from tensorflow_tts.layers.bias import KerasConvBias

# Convs with at most this many C_in x C_out weights per tap take their kernel gradient from the
# compiled kernel (`layers.kernels`, kernel_gradient.cc) where it is usable. In four runs of
# `benchmarks/fused_kernels.py --parts gradients` (2 threads, 8 items) it took 0.61-0.72 of the
# per-tap matmuls' time at 48 channels over 2,048 rows, 0.82-0.97 at 96 over 256, 0.83-1.15 at
# 192 over 64, 0.47-0.51 for 48 -> 4 (7 taps), 0.24-0.26 for 1 -> 16 (15 taps), and 1.06-1.48x
# at 256 and 384 channels, which therefore keep the matmuls. In bfloat16 (`--dtype bfloat16`, one
# run, AMD Zen 4) it took 0.61-0.91 of the bfloat16 matmuls' time at the same shapes up to 192
# channels, 0.37 and 0.26 for the last two, 0.91 at 256 and 1.07 at 384: the same limit holds.
COMPILED_KERNEL_GRADIENT_MAX_WEIGHTS = 192 * 192


def _same_padding(kernel_size, dilation=1):
    """(before, after) padding of a stride-1 "SAME" conv, as TensorFlow pads."""
    total = dilation * (kernel_size - 1)
    return total // 2, total - total // 2


def conv1d(inputs, kernel, padding="VALID", dilation=1, bias=None):
    """Stride-1 1-D convolution with forward-conv and matmul gradients.

    Args:
        inputs: (B, T, C_in).
        kernel: (K, C_in, C_out).
        padding: "VALID" or "SAME".
        dilation: int >= 1, the spacing of the taps.
        bias: None, or (C_out,) added to the result; its gradient comes from `kernel_gradient`
            (with the compiled kernel, from the same pass over dy as the kernel's).

    Returns:
        (B, T_out, C_out): T_out = T for "SAME", T - dilation * (K - 1) for "VALID".
    """

    @tf.custom_gradient
    def convolve(x, w, *biases):
        y = tf.nn.conv1d(x, w, stride=1, padding=padding, dilations=dilation)
        if biases:
            y = tf.nn.bias_add(y, biases[0])

        def gradient(dy):
            before, after = _same_padding(w.shape[0], dilation) if padding == "SAME" else (0, 0)
            x_padded = tf.pad(x, [[0, 0], [before, after], [0, 0]]) if before or after else x
            weights = kernel_gradient(x_padded, dy, w.shape, dilation, with_bias=bool(biases))
            return (input_gradient(dy, w, before, after, dilation), *(weights if biases else (weights,)))

        return y, gradient

    # A variable read inside a custom gradient would need its own gradient path: read it here.
    biases = () if bias is None else (tf.convert_to_tensor(bias),)
    return convolve(tf.convert_to_tensor(inputs), tf.convert_to_tensor(kernel), *biases)


def input_gradient(dy, kernel, before, after, dilation=1):
    """d loss / d inputs of a stride-1 conv that padded its input by (before, after): dy
    (B, T_out, C_out), kernel (K, C_in, C_out) -> (B, T, C_in).

    Input position s received ``kernel[k]`` from output ``s + before - k * dilation``: a
    correlation of dy, padded to reach every such output, with the kernel reversed along
    its taps and transposed, which is a forward conv of the same dilation.
    """
    span = dilation * (kernel.shape[0] - 1)
    flipped = flipped_kernel(kernel)[tf.newaxis]  # (1, K, C_out, C_in)
    # The conv pads dy itself (explicit padding): no padded copy of dy is written first.
    dx = tf.nn.conv2d(
        dy[:, tf.newaxis], flipped, strides=1, dilations=[1, dilation],
        padding=[[0, 0], [0, 0], [span - before, span - after], [0, 0]],
    )
    return tf.squeeze(dx, 1)


def flipped_kernel(kernel):
    """``kernel`` (K, A, B) with its taps reversed and each tap transposed: (K, B, A),
    ``out[K - 1 - k] = kernel[k]^T``. One compiled op where one is usable (`layers.kernels`,
    flipped_kernel.cc), else TensorFlow's ReverseV2 and Transpose; the same values either way."""
    if kernels.usable(kernel, dtypes=(tf.float32, tf.bfloat16, tf.float16, tf.float64)):
        return kernels.ops().tts_flipped_kernel(kernel)
    return tf.transpose(tf.reverse(kernel, axis=[0]), [0, 2, 1])


@tf.RegisterGradient("TtsFlippedKernel")
def _flipped_kernel_gradient(op, upstream):
    """The flip permutes values: its adjoint is its inverse, the same flip of the (K, B, A) upstream."""
    return flipped_kernel(upstream)


def _compiled_kernel_gradient_applies(dy, in_channels, out_channels):
    """Whether the compiled kernel computes `kernel_gradient`: few channels, one side a multiple of
    16 (its vectors' width), float32 or bfloat16 where `kernels.usable`."""
    return (in_channels * out_channels <= COMPILED_KERNEL_GRADIENT_MAX_WEIGHTS
            and (in_channels % 16 == 0 or out_channels % 16 == 0)
            and kernels.usable(dy, dtypes=(tf.float32, tf.bfloat16)))


@tf.RegisterGradient("TtsConvKernelGradient")
def _compiled_kernel_gradient_gradient(op, upstream, bias_upstream):
    """The compiled kernel gradient is linear in each input: d/d dy is the VALID conv of x_padded
    with the upstream (K, C_in, C_out) plus the bias gradient's upstream (C_out) at every step,
    d/d x_padded the input gradient of that conv; so second derivatives (a gradient penalty)
    pass through it as through the matmuls and the sum."""
    x_padded, dy = op.inputs
    dilation = op.get_attr("dilation")
    d_dy = tf.nn.conv1d(x_padded, upstream, stride=1, padding="VALID", dilations=dilation)
    if bias_upstream is not None:
        d_dy = tf.nn.bias_add(d_dy, bias_upstream)
    return input_gradient(dy, upstream, 0, 0, dilation), d_dy


def kernel_gradient(x_padded, dy, kernel_shape, dilation=1, with_bias=False):
    """d loss / d kernel of a stride-1 conv: x_padded (B, T_out + dilation * (K - 1), C_in),
    dy (B, T_out, C_out) -> (K, C_in, C_out); ``with_bias``: also d loss / d bias (C_out,), dy
    summed over b and t, as the pair (kernel's, bias's).

    Both tensors are flattened to rows, dy with dilation * (K - 1) zero rows after each
    sequence, so row b * P + t of both is position t of sequence b and a shift by a tap
    never reaches the next sequence: tap k pairs dy's rows with x's rows shifted by
    k * dilation, a range of rows that TensorFlow slices without a copy, and is one
    (C_in, N) x (N, C_out) product.

    One product per tap at every width. Putting narrow inputs' K row ranges side by side
    first ("im2col", one (N, K * C_in) product) keeps the matmul wider but copies K times the
    input: with it the MB-MelGAN v1 generator step (C_in 48-192) took 1.10-1.13 times as
    long on two threads, and the same time on one (`benchmarks/HISTORY.md`).

    Narrow convs (`COMPILED_KERNEL_GRADIENT_MAX_WEIGHTS`) take the same sums from a compiled
    kernel where one is usable (`layers.kernels`): all taps of a chunk of rows while it is in
    cache, each thread into its own sums.
    """
    kernel_size, in_channels, out_channels = kernel_shape
    if _compiled_kernel_gradient_applies(dy, in_channels, out_channels):
        weights, bias = kernels.ops().tts_conv_kernel_gradient(x_padded, dy, taps=kernel_size, dilation=dilation)
        return (weights, bias) if with_bias else weights
    if with_bias:  # tf.reduce_sum sums bfloat16 in float32 (`layers.bias`)
        return kernel_gradient(x_padded, dy, kernel_shape, dilation), tf.reduce_sum(dy, axis=[0, 1])
    span = dilation * (kernel_size - 1)
    rows = tf.reshape(x_padded, [-1, in_channels])
    if span == 0:  # a 1-tap conv: the rows themselves
        return tf.matmul(rows, tf.reshape(dy, [-1, out_channels]), transpose_a=True)[tf.newaxis]
    count = tf.shape(rows)[0] - span
    dy_rows = tf.reshape(tf.pad(dy, [[0, 0], [0, span], [0, 0]]), [-1, out_channels])[:count]
    taps = [rows[k * dilation : k * dilation + count] for k in range(kernel_size)]
    return tf.stack([tf.matmul(tap, dy_rows, transpose_a=True) for tap in taps])


class Conv1D(KerasConvBias, tf.keras.layers.Conv1D):
    """tf.keras Conv1D (same arguments, weights, names and results) with `conv1d`'s faster
    gradients for stride-1, ungrouped convs; other convs are Keras' own. The bias is added by
    `layers.bias.bias_add`, whose bias gradient stays accurate in bfloat16, or, where the
    compiled kernel gradient runs, by `conv1d`, whose kernel gradient sums the bias's too."""

    def _fast_form(self):
        return self.groups == 1 and self.strides == (1,) and self.padding in ("valid", "same", "causal")

    def convolution_takes_bias(self, inputs):
        """Where the compiled kernel gradient runs, the bias goes into `conv1d`: its gradient then
        comes out of the kernel gradient's pass over dy, not out of a BiasAddGrad's own pass."""
        return (self.use_bias and self._fast_form()
                and _compiled_kernel_gradient_applies(inputs, self.kernel.shape[-2], self.filters))

    def convolution_op(self, inputs, kernel):
        """Keras' convolution of ``inputs`` with ``kernel``; where `convolution_takes_bias`, with the
        layer's bias added too (`call` then adds none)."""
        if not self._fast_form():
            return super().convolution_op(inputs, kernel)
        # "causal": Keras has already padded the inputs on the left.
        padding = "SAME" if self.padding == "same" else "VALID"
        bias = self.bias if self.convolution_takes_bias(inputs) else None
        return conv1d(inputs, kernel, padding, self.dilation_rate[0], bias=bias)
