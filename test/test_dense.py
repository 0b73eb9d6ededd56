"""layers.dense: Keras' Dense results and weights, one matmul per projection."""

import tensorflow_tts  # noqa: F401

import numpy as np
import pytest
import tensorflow as tf

from tensorflow_tts.inference.tflite import make_converter, operator_names
from tensorflow_tts.layers.dense import Dense


def twin_layers(input_shape, units=5, activation="tanh", use_bias=True, name="proj"):
    """Our Dense and Keras' with the same (random, non-zero-bias) weights."""
    ours = Dense(units, activation=activation, use_bias=use_bias, name=name)
    keras = tf.keras.layers.Dense(units, activation=activation, use_bias=use_bias, name=name)
    ours.build(input_shape)
    keras.build(input_shape)
    keras.set_weights([np.random.default_rng(0).standard_normal(w.shape).astype(np.float32) for w in keras.weights])
    ours.set_weights(keras.get_weights())
    return ours, keras


def outputs_and_gradients(layer, x, training):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.cast(layer(x, training=training), tf.float32)
        loss = tf.reduce_sum(y * tf.reshape(tf.sin(tf.range(tf.size(y), dtype=tf.float32)), tf.shape(y)))
    return [y] + tape.gradient(loss, [x] + layer.trainable_variables)


@pytest.mark.parametrize("shape", [(4, 7), (3, 11, 7), (2, 3, 5, 7)], ids=["rank2", "rank3", "rank4"])
@pytest.mark.parametrize("training", [False, True], ids=["inference", "training"])
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "tf.function"])
@pytest.mark.parametrize("use_bias", [True, False], ids=["bias", "no-bias"])
def test_outputs_and_gradients_equal_keras_dense(shape, training, compiled, use_bias):
    x = tf.random.stateless_normal(shape, seed=[5, 6])
    ours, keras = twin_layers(x.shape, use_bias=use_bias)
    run = tf.function(outputs_and_gradients) if compiled else outputs_and_gradients
    expected, got = run(keras, x, training), run(ours, x, training)
    names = ["output", "d_input", "d_kernel", "d_bias"][: len(expected)]
    for name, a, b in zip(names, expected, got, strict=True):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-5, err_msg=name)


def test_weights_are_named_as_keras_names_them():
    """Checkpoints written with Keras' Dense (and TensorFlowTTS 1.8's) load by these names."""
    ours, keras = twin_layers((None, None, 7))
    assert [w.name for w in ours.weights] == [w.name for w in keras.weights]
    assert [w.shape for w in ours.weights] == [w.shape for w in keras.weights]


def traced_op_types(layer, training, gradient=False):
    @tf.function(input_signature=[tf.TensorSpec([None, None, 7])])
    def run(x):
        with tf.GradientTape() as tape:
            y = layer(x, training=training)
        return tape.gradient(y, layer.kernel) if gradient else y

    return [op.type for op in run.get_concrete_function().graph.get_operations()]


def test_a_sequence_projection_is_one_matmul_without_tensordot():
    ours, _ = twin_layers((None, None, 7))
    inference = traced_op_types(ours, training=False)
    assert inference.count("BatchMatMulV2") == 1 and "MatMul" not in inference
    assert not {"GatherV2", "Prod", "Transpose"} & set(inference), inference
    # training folds the sequence into rows: the kernel gradient is one 2-D matmul, not a
    # batch of them summed over the batch
    gradient = traced_op_types(ours, training=True, gradient=True)
    assert "BatchMatMulV2" not in gradient and gradient.count("MatMul") >= 2, gradient


def test_the_training_flag_reaches_it_through_an_enclosing_layer():
    class Block(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.proj = Dense(3)

        def call(self, x, training=False):
            return self.proj(x)

    block = Block()
    block(tf.zeros([1, 2, 7]))
    assert "MatMul" in traced_op_types(block, training=True)
    assert "BatchMatMulV2" in traced_op_types(block, training=False)


def test_mixed_precision_computes_in_float16_with_float32_weights():
    x = tf.random.stateless_normal([2, 9, 7], seed=[1, 1])
    ours, keras = twin_layers(x.shape)
    half = Dense(5, activation="tanh", dtype="mixed_float16", name="proj")
    half.build(x.shape)
    half.set_weights(keras.get_weights())
    assert half.kernel.dtype == tf.float32
    for training in (False, True):
        y = half(x, training=training)
        assert y.dtype == tf.float16
        np.testing.assert_allclose(y.numpy().astype(np.float32), keras(x).numpy(), atol=2e-2)


def test_tflite_takes_it_as_one_fully_connected_op():
    """No run-time shape arithmetic (SHAPE, GATHER) around the product in the converted file."""
    from ai_edge_litert.interpreter import Interpreter

    ours, keras = twin_layers((1, None, 7))

    @tf.function(input_signature=[tf.TensorSpec([1, None, 7], tf.float32)])
    def project(x):
        return ours(x, training=False)

    flatbuffer = make_converter(project, ours).convert()
    names = operator_names(flatbuffer)
    assert "FULLY_CONNECTED" in names and not {"SHAPE", "GATHER", "BATCH_MATMUL"} & set(names), names
    x = np.random.default_rng(2).standard_normal((1, 13, 7)).astype(np.float32)
    interpreter = Interpreter(model_content=flatbuffer)
    interpreter.resize_tensor_input(interpreter.get_input_details()[0]["index"], x.shape)
    interpreter.allocate_tensors()
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], x)
    interpreter.invoke()
    got = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
    np.testing.assert_allclose(got, keras(x).numpy(), rtol=1e-5, atol=1e-5)
