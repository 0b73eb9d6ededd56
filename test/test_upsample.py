"""The polyphase transposed convolution equals TensorFlow's conv2d_transpose with "same" padding."""

import numpy as np
import pytest
import tensorflow_tts  # noqa: F401
import tensorflow as tf

from tensorflow_tts.layers.upsample import conv_transpose1d


def conv2d_transpose_same(x, kernel, strides):
    """conv2d_transpose over (B, T, 1, C) with "same" padding, the layout TensorFlowTTS used:
    x (B, T, C_in), kernel (K, C_out, C_in) -> (B, T * strides, C_out)."""
    batch, length, _ = x.shape
    return tf.nn.conv2d_transpose(
        x[:, :, tf.newaxis, :], kernel[:, tf.newaxis],
        [batch, length * strides, 1, kernel.shape[1]], strides=(strides, 1), padding="SAME",
    )[:, :, 0, :]


@pytest.mark.parametrize("taps,strides,length", [(16, 8, 7), (8, 4, 10), (4, 2, 1), (5, 2, 6), (3, 3, 4)])
def test_polyphase_form_matches_conv2d_transpose(taps, strides, length):
    x = tf.random.stateless_normal([2, length, 3], seed=[taps, strides])
    kernel = tf.random.stateless_normal([taps, 5, 3], seed=[strides, taps])
    bias = tf.random.stateless_normal([5], seed=[1, 1])
    reference = conv2d_transpose_same(x, kernel, strides) + bias
    pad_before = max(taps - strides, 0) // 2
    ours = conv_transpose1d(x, kernel, strides, pad_before, bias)
    assert ours.shape == reference.shape
    np.testing.assert_allclose(ours, reference, atol=1e-5)
    rows = conv_transpose1d(x[:, tf.newaxis], kernel, strides, pad_before, bias)  # the generators' inference layout
    assert rows.shape == (2, 1) + tuple(reference.shape[1:])
    np.testing.assert_allclose(rows[:, 0], reference, atol=1e-5)


@pytest.mark.parametrize("taps,strides,length", [(16, 8, 7), (4, 2, 5), (5, 2, 6)])
def test_gradients_match_conv2d_transpose(taps, strides, length):
    # The crop's gradient is a Pad written by hand (crop_time); conv1d's gradients are too.
    x = tf.random.stateless_normal([2, length, 3], seed=[taps, 1])
    kernel = tf.random.stateless_normal([taps, 5, 3], seed=[strides, 2])
    weights = tf.random.stateless_normal([2, length * strides, 5], seed=[3, 3])
    pad_before = max(taps - strides, 0) // 2
    gradients = []
    for function in (
        lambda x, kernel: conv2d_transpose_same(x, kernel, strides),
        lambda x, kernel: conv_transpose1d(x, kernel, strides, pad_before),
    ):
        with tf.GradientTape() as tape:
            tape.watch([x, kernel])
            loss = tf.reduce_sum(weights * function(x, kernel))
        gradients.append(tape.gradient(loss, [x, kernel]))
    for expected, ours in zip(*gradients):
        np.testing.assert_allclose(ours, expected, atol=1e-4)


@pytest.mark.parametrize("pad_before", [0, 1, 2, 3, 4])
def test_every_allowed_crop_follows_the_definition(pad_before):
    taps, strides, length = 5, 2, 6  # 3 blocks: crops 0 .. 4 are allowed
    x = np.random.RandomState(pad_before).randn(1, length, 3).astype("float32")
    kernel = np.random.RandomState(7).randn(taps, 4, 3).astype("float32")
    expected = np.zeros([1, length * strides, 4], "float32")
    for n in range(length * strides):  # y[n] = sum_i x[i] @ kernel[n + pad_before - i * strides]^T
        for i in range(length):
            k = n + pad_before - i * strides
            if 0 <= k < taps:
                expected[0, n] += x[0, i] @ kernel[k].T
    np.testing.assert_allclose(conv_transpose1d(x, kernel, strides, pad_before), expected, atol=1e-5)


def test_a_crop_beyond_the_computed_blocks_is_refused():
    with pytest.raises(ValueError, match=r"pad_before must lie in \[0, 4\]"):
        conv_transpose1d(tf.zeros([1, 6, 3]), tf.zeros([5, 4, 3]), 2, 5)
