"""GroupedConv1D gives Keras' grouped Conv1D results and gradients (depthwise or block-diagonal form)."""

import numpy as np
import pytest
import tensorflow_tts  # noqa: F401
import tensorflow as tf

from tensorflow_tts.layers import grouped_conv
from tensorflow_tts.layers.grouped_conv import GroupedConv1D


@pytest.mark.parametrize("form", ["depthwise", "block_diagonal"])
@pytest.mark.parametrize("strides,padding", [(1, "same"), (4, "same"), (2, "valid")])
def test_grouped_conv_matches_keras_values_and_gradients(strides, padding, form, monkeypatch):
    # 16 x 24 channels: below the dense threshold; lowering it to 0 forces the depthwise form.
    if form == "depthwise":
        monkeypatch.setattr(grouped_conv, "DENSE_MAX_CHANNEL_PRODUCT", 0)
    else:
        assert 16 * 24 <= grouped_conv.DENSE_MAX_CHANNEL_PRODUCT
    inputs = tf.random.stateless_normal([2, 37, 16], seed=[1, 2])
    ours = GroupedConv1D(24, 5, strides=strides, padding=padding, groups=4)
    reference = tf.keras.layers.Conv1D(24, 5, strides=strides, padding=padding, groups=4)
    ours.build(inputs.shape)
    reference.build(inputs.shape)
    reference.set_weights(ours.get_weights())

    def value_and_gradients(layer):
        with tf.GradientTape() as tape:
            tape.watch(inputs)
            outputs = layer(inputs)
            loss = tf.reduce_sum(tf.sin(outputs))
        return outputs, tape.gradient(loss, [inputs, *layer.trainable_variables])

    outputs, gradients = value_and_gradients(ours)
    expected_outputs, expected_gradients = value_and_gradients(reference)
    np.testing.assert_allclose(outputs, expected_outputs, atol=1e-5)
    for gradient, expected in zip(gradients, expected_gradients):
        np.testing.assert_allclose(gradient, expected, atol=1e-4)


def test_ungrouped_and_dilated_convs_take_the_keras_path():
    inputs = tf.random.stateless_normal([1, 20, 8], seed=[3, 4])
    layer = GroupedConv1D(8, 3, dilation_rate=2, padding="same", groups=2)
    reference = tf.keras.layers.Conv1D(8, 3, dilation_rate=2, padding="same", groups=2)
    layer.build(inputs.shape)
    reference.build(inputs.shape)
    reference.set_weights(layer.get_weights())
    np.testing.assert_allclose(layer(inputs), reference(inputs), atol=1e-6)
