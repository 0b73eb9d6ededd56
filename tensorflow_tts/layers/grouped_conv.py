"""Grouped 1-D convolution that runs fast on the CPU.

Keras runs a Conv1D with ``groups > 1`` through an XLA-compiled op on the CPU, whose
gradient is very slow there (a MelGAN discriminator step took ~30 s on 2 cores). Two
other forms give the same result with TensorFlow's ordinary CPU kernels:

* one depthwise convolution followed by a sum over each group's input channels
  (~30x faster than Keras' op, forward + backward);
* for small layers, an ordinary convolution with a block-diagonal kernel: `groups` times
  the multiplications, but the depthwise input gradient is so slow on the CPU (the
  `DepthwiseConv2dNativeBackpropInput` kernel took ~60 % of a tiny MB-MelGAN adversarial
  step) that the dense form is 2-5x faster up to C_in x C_out ~ 16k. For 256 x 1024 the
  depthwise form is 3x faster, so the choice is made per layer by `DENSE_MAX_CHANNEL_PRODUCT`.
"""

import numpy as np
import tensorflow as tf

from tensorflow_tts.layers.conv1d import Conv1D


def grouped_conv1d(inputs, kernel, groups, strides=1, padding="VALID"):
    """A grouped convolution through a depthwise one.

    Args:
        inputs: (B, T, C_in).
        kernel: (K, C_in / groups, C_out), as Keras stores a grouped Conv1D kernel.
        groups: number of groups; C_in and C_out are multiples of it.
        strides: int stride along time.
        padding: "VALID" or "SAME".

    Returns:
        (B, T_out, C_out); output channel o of group g = o // (C_out / groups) sees the
        input channels of group g only, the channel order Keras uses.
    """
    kernel_size, in_per_group, out_channels = kernel.shape
    out_per_group = out_channels // groups
    # Depthwise kernel (K, 1, C_in, C_out / groups): input channel c of group g feeds
    # multiplier j with the weight that links it to output g * out_per_group + j.
    depthwise = tf.reshape(kernel, [kernel_size, in_per_group, groups, out_per_group])
    depthwise = tf.transpose(depthwise, [0, 2, 1, 3])
    depthwise = tf.reshape(depthwise, [kernel_size, 1, groups * in_per_group, out_per_group])
    outputs = tf.nn.depthwise_conv2d(
        inputs[:, :, tf.newaxis, :], depthwise, strides=[1, strides, strides, 1], padding=padding
    )
    batch, steps = tf.shape(outputs)[0], tf.shape(outputs)[1]
    outputs = tf.reshape(outputs, [batch, steps, groups, in_per_group, out_per_group])
    return tf.reshape(tf.reduce_sum(outputs, axis=3), [batch, steps, out_channels])


# Largest C_in x C_out computed with a block-diagonal dense kernel (measured fwd + bwd on 2
# CPU cores, K = 41, stride 4: 64 x 256 dense 49 ms vs depthwise 88 ms; 256 x 1024 dense 260 ms
# vs depthwise 77 ms).
DENSE_MAX_CHANNEL_PRODUCT = 32768


def block_diagonal_kernel(kernel, groups):
    """(K, C_in / groups, C_out) grouped kernel -> (K, C_in, C_out) dense kernel, zero across groups."""
    kernel_size, in_per_group, out_channels = kernel.shape
    out_per_group = out_channels // groups
    in_group = np.arange(in_per_group * groups) // in_per_group
    out_group = np.arange(out_channels) // out_per_group
    mask = (in_group[:, np.newaxis] == out_group[np.newaxis, :]).astype(kernel.dtype.as_numpy_dtype)
    return tf.tile(kernel, [1, groups, 1]) * mask


class GroupedConv1D(Conv1D):
    """tf.keras Conv1D (same weights, names and results) whose grouped case uses `grouped_conv1d`
    (and whose ungrouped case has `layers.conv1d`'s fast kernel gradient)."""

    def _jit_compiled_convolution_op(self, inputs, kernel):
        # Keras sends grouped convs here, an XLA-compiled wrapper of convolution_op; call
        # convolution_op directly so the depthwise form runs with the ordinary CPU kernels.
        return self.convolution_op(inputs, kernel)

    def convolution_op(self, inputs, kernel):
        fast_path = self.groups > 1 and self.dilation_rate == (1,) and self.padding in ("valid", "same")
        if not fast_path:
            return super().convolution_op(inputs, kernel)
        in_channels = kernel.shape[1] * self.groups
        if in_channels * self.filters <= DENSE_MAX_CHANNEL_PRODUCT:
            dense = block_diagonal_kernel(kernel, self.groups)
            return tf.nn.conv1d(inputs, dense, stride=self.strides[0], padding=self.padding.upper())
        return grouped_conv1d(inputs, kernel, self.groups, strides=self.strides[0], padding=self.padding.upper())
