"""Vocoder residual blocks: the inference form (``fused_conv1d``) gives what the Keras layers give."""

import tensorflow_tts  # noqa: F401

import numpy as np
import pytest
import tensorflow as tf

from tensorflow_tts.layers import kernels
from tensorflow_tts.layers.residual_stack import TFHifiResBlock, TFResidualStack, fused_conv1d
from tensorflow_tts.layers.weight_norm import conv1d


def graph_ops(function, *args):
    return function.get_concrete_function(*args).graph.get_operations()


BLOCKS = {  # the block, and the op of its activation
    "melgan_stack": (lambda: TFResidualStack(3, 16, 3, nonlinear_activation_params={"alpha": 0.2}, initializer_seed=5),
                     "LeakyRelu"),
    "melgan_stack_weight_norm": (lambda: TFResidualStack(3, 16, 9, is_weight_norm=True, initializer_seed=6), "LeakyRelu"),
    "melgan_stack_elu": (lambda: TFResidualStack(5, 16, 1, nonlinear_activation="ELU", initializer_seed=7), "Elu"),
    "hifigan_block": (lambda: TFHifiResBlock(3, 16, [1, 3, 5], initializer_seed=8), "LeakyRelu"),
}


@pytest.mark.parametrize("make,activation", BLOCKS.values(), ids=BLOCKS.keys())
def test_inference_equals_the_keras_layers(make, activation, monkeypatch):
    # The TensorFlow-ops form: what exports trace, and where the fused kernel is not used
    # (test_fused_kernels.py checks the kernel against it).
    monkeypatch.setenv(kernels.ENV_SWITCH, "0")
    block = make()
    x = tf.random.stateless_normal([2, 60, 16], seed=[3, 4]) * 3.0
    keras = block(x, training=True)  # training runs the convs as Keras layers; these blocks have no dropout
    inference = tf.function(lambda v: block(v, training=False))
    got = inference(x)
    scale = float(tf.reduce_max(tf.abs(keras)))
    np.testing.assert_allclose(got.numpy(), keras.numpy(), rtol=1e-5, atol=1e-6 * scale)
    ops = graph_ops(inference, x)
    assert "SpaceToBatchND" not in {op.type for op in ops}  # the dilation goes to the conv itself
    # Conv2D -> BiasAdd -> activation, and -> AddV2: the patterns TensorFlow fuses into the conv.
    assert all(op.inputs[0].op.type == "Conv2D" for op in ops if op.type == "BiasAdd")
    after_bias = {consumer.type for op in ops if op.type == "BiasAdd" for consumer in op.outputs[0].consumers()}
    assert {activation, "AddV2"} <= after_bias


@pytest.mark.parametrize("training", [False, True], ids=["inference", "training"])
@pytest.mark.parametrize("make,activation", BLOCKS.values(), ids=BLOCKS.keys())
def test_rows_give_the_values_of_the_signal_layout(make, activation, training):
    # Rows (B, 1, T, C) are what the generators pass in inference; Keras' own saving
    # (model.save) also traces the training form with them.
    block = make()
    x = tf.random.stateless_normal([2, 60, 16], seed=[3, 4]) * 3.0
    block(x)  # builds the weights
    expected = block(x, training=training)
    got = block(tf.expand_dims(x, 1), training=training)
    assert got.shape == (2, 1, 60, 16)
    scale = float(tf.reduce_max(tf.abs(expected)))
    np.testing.assert_allclose(got[:, 0].numpy(), expected.numpy(), rtol=1e-5, atol=1e-6 * scale)


def test_fused_conv1d_applies_the_activation_before_and_the_residual_after_the_bias():
    layer = conv1d(5, 3, dilation_rate=2, kernel_initializer="glorot_normal", bias_initializer="ones")
    x = tf.random.stateless_normal([1, 20, 4], seed=[1, 2])
    keras = layer(x)  # (1, 16, 5)
    residual = tf.random.stateless_normal(keras.shape, seed=[5, 6])
    relu = tf.keras.layers.ReLU()
    np.testing.assert_allclose(fused_conv1d(layer, x).numpy(), keras.numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(fused_conv1d(layer, x, activation=relu).numpy(), relu(keras).numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(
        fused_conv1d(layer, x, residual=residual).numpy(), (keras + residual).numpy(), rtol=1e-6, atol=1e-6
    )
    rows = fused_conv1d(layer, tf.expand_dims(x, 1), activation=relu, residual=tf.expand_dims(residual, 1))
    assert rows.shape == (1, 1, 16, 5)
    np.testing.assert_allclose(rows[:, 0].numpy(), (relu(keras) + residual).numpy(), rtol=1e-6, atol=1e-6)


def test_melgan_stack_runs_its_shortcut_before_the_main_branch_in_inference(monkeypatch):
    # Side by side (inter-op threads) the two branches' convs would compete for the same cores.
    monkeypatch.setenv(kernels.ENV_SWITCH, "0")  # the TensorFlow-ops form
    block = TFResidualStack(3, 16, 3, initializer_seed=5)
    x = tf.random.stateless_normal([1, 40, 16], seed=[1, 2])
    block(x)  # builds the weights
    graph = tf.function(lambda v: block(v, training=False)).get_concrete_function(x).graph
    first_activation = next(op for op in graph.get_operations() if op.type == "LeakyRelu")
    assert len(first_activation.control_inputs) == 1
    waited_for = first_activation.control_inputs[0]
    while waited_for.type != "Conv2D":  # back from the shortcut's bias and squeeze to its conv
        waited_for = waited_for.inputs[0].op
    assert waited_for.inputs[0].op.inputs[0] is graph.inputs[0]  # the conv of x (expanded to 4-D)
