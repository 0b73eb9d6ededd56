"""The bias gradient under mixed_bfloat16 (`layers.bias`): summed in float, not in bfloat16."""

import tensorflow_tts  # noqa: F401  (selects Keras 2 before tensorflow is imported)

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import tensorflow as tf  # noqa: E402

from tensorflow_tts.layers.bias import bias_add  # noqa: E402
from tensorflow_tts.layers.conv1d import Conv1D  # noqa: E402
from tensorflow_tts.layers.dense import Dense  # noqa: E402
from tensorflow_tts.layers.upsample import TFConvTranspose1d  # noqa: E402
from tensorflow_tts.layers.weight_norm import conv1d, conv2d  # noqa: E402
from tensorflow_tts.layers.zoneout_lstm import ZoneoutLSTMCell  # noqa: E402

ROWS, CHANNELS = (8, 8192), 16


@pytest.mark.parametrize("make", [
    lambda: Conv1D(CHANNELS, 3, padding="same", dtype="mixed_bfloat16"),
    lambda: Dense(CHANNELS, dtype="mixed_bfloat16"),
    lambda: TFConvTranspose1d(CHANNELS, 4, 2, dtype="mixed_bfloat16"),
    lambda: conv1d(CHANNELS, 3, padding="same", groups=2, dtype="mixed_bfloat16"),
    lambda: conv1d(CHANNELS, 3, weight_norm=True, padding="same", dtype="mixed_bfloat16"),
    lambda: conv2d(CHANNELS, (3, 1), padding="same", dtype="mixed_bfloat16"),
    lambda: conv2d(CHANNELS, (3, 1), weight_norm=True, padding="same", dtype="mixed_bfloat16"),
], ids=["Conv1D", "Dense", "TFConvTranspose1d", "grouped Conv1D", "weight-normalised Conv1D", "Conv2D",
        "weight-normalised Conv2D"])
def test_a_bfloat16_layers_bias_gradient_is_the_float_sum_of_its_output_gradient(make):
    layer = make()
    strides = layer.strides if isinstance(layer, TFConvTranspose1d) else 1
    x = tf.random.stateless_normal((ROWS[0], ROWS[1] // strides, 4), seed=[1, 2])
    if isinstance(layer, tf.keras.layers.Conv2D):
        x = x[:, :, tf.newaxis]  # (B, T, 1, C): a period discriminator's layout
    upstream = tf.random.stateless_normal(ROWS + (CHANNELS,), seed=[3, 4]) + 0.5
    with tf.GradientTape() as tape:
        y = layer(x, training=True)
        loss = tf.reduce_sum(tf.reshape(tf.cast(y, tf.float32), upstream.shape) * upstream)
    assert y.dtype == tf.bfloat16
    gradient = tape.gradient(loss, layer.bias).numpy()
    # d loss / d y reaches the layer as bfloat16; its exact sum over the 65,536 rows:
    expected = tf.reduce_sum(tf.cast(tf.cast(upstream, tf.bfloat16), tf.float64), axis=[0, 1]).numpy()
    np.testing.assert_allclose(gradient, expected, rtol=1e-2)


def test_a_bfloat16_lstm_steps_bias_gradient_is_float32s_to_rounding():
    """Tacotron 2's decoder LSTM cells (one step over 65,536 rows): TensorFlow's bfloat16 bias
    gradient put this one 92 % off the float32 cell's; summed in float, 0.24 %."""
    rows = ROWS[0] * ROWS[1]
    inputs = tf.random.stateless_normal([rows, 4], seed=[1, 2])
    state = tf.random.stateless_normal([rows, CHANNELS], seed=[3, 4]) * 0.5
    upstream = tf.random.stateless_normal([rows, CHANNELS], seed=[5, 6]) + 0.5

    def bias_gradient(cell):
        cell_state = tf.cast(state, cell.compute_dtype)
        with tf.GradientTape() as tape:
            h, _ = cell(tf.cast(inputs, cell.compute_dtype), [cell_state, cell_state])
            loss = tf.reduce_sum(tf.cast(h, tf.float32) * upstream)
        return tape.gradient(loss, cell.bias).numpy()

    reference = ZoneoutLSTMCell(CHANNELS)
    reference.build([None, 4])
    cell = ZoneoutLSTMCell(CHANNELS, dtype="mixed_bfloat16")
    cell.build([None, 4])
    cell.set_weights(reference.get_weights())
    expected = bias_gradient(reference)
    assert np.abs(bias_gradient(cell) - expected).max() < 1e-2 * np.abs(expected).max()


def test_bias_add_adds_the_bias_and_keeps_the_input_gradient():
    x = tf.cast(tf.random.stateless_normal([2, 5, 3], seed=[5, 6]), tf.bfloat16)
    bias = tf.constant([1.0, -2.0, 0.5], tf.bfloat16)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = bias_add(x, bias)
        loss = tf.reduce_sum(tf.cast(y, tf.float32) * np.arange(30, dtype=np.float32).reshape(2, 5, 3))
    np.testing.assert_array_equal(tf.cast(y, tf.float32), tf.cast(tf.nn.bias_add(x, bias), tf.float32))
    np.testing.assert_array_equal(tf.cast(tape.gradient(loss, x), tf.float32), np.arange(30).reshape(2, 5, 3))


def test_float32_keeps_tensorflows_own_bias_add():
    x = tf.zeros([1, 2, 3])
    graph = tf.function(lambda x: bias_add(x, tf.ones([3]))).get_concrete_function(x).graph
    assert [op.type for op in graph.get_operations() if op.type in ("BiasAdd", "IdentityN")] == ["BiasAdd"]
