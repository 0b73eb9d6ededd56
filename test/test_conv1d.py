"""layers.conv1d: the matmul kernel gradient equals TensorFlow's own conv gradient."""

import tensorflow_tts  # noqa: F401

import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from tensorflow_tts.layers import kernels
from tensorflow_tts.layers.conv1d import Conv1D


def gradients(layer, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.cast(layer(x), tf.float32)
        # a loss that weighs every output differently, so a wrong tap or shift shows
        loss = tf.reduce_sum(y * tf.reshape(tf.sin(tf.range(tf.size(y), dtype=tf.float32)), tf.shape(y)))
    return [y] + tape.gradient(loss, [x] + layer.trainable_variables)


@pytest.mark.parametrize(
    "kernel_size,padding,dilation",
    [(3, "same", 1), (5, "same", 1), (1, "valid", 1), (3, "valid", 1), (3, "valid", 3), (7, "causal", 2), (3, "same", 2)],
)
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "tf.function"])
@pytest.mark.parametrize("in_channels", [6, 256], ids=["narrow", "wide"])
def test_outputs_and_gradients_equal_keras_conv1d(kernel_size, padding, dilation, compiled, in_channels):
    x = tf.random.stateless_normal([2, 23, in_channels], seed=[1, 2])
    ours = Conv1D(5, kernel_size, padding=padding, dilation_rate=dilation)
    keras = tf.keras.layers.Conv1D(5, kernel_size, padding=padding, dilation_rate=dilation)
    ours.build(x.shape)
    keras.build(x.shape)
    keras.set_weights([np.random.default_rng(0).standard_normal(w.shape).astype(np.float32) for w in keras.weights])
    ours.set_weights(keras.get_weights())
    run = tf.function(gradients) if compiled else gradients
    expected, got = run(keras, x), run(ours, x)
    for name, a, b in zip(["output", "d_input", "d_kernel", "d_bias"], expected, got, strict=True):
        # Float32 sums of up to K * C_in = 1792 products, in a different order where oneDNN
        # runs Keras' dilated conv (AVX-512 CPUs): rounding grows ~ eps * sqrt(terms) * scale,
        # so the absolute tolerance follows the values' scale (seen: 5.1e-5 at |y| ~ 40).
        scale = max(1.0, float(np.abs(a.numpy()).max()))
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=4e-6 * scale, err_msg=name)


@pytest.mark.parametrize("dilation", [1, 3])
@pytest.mark.parametrize("in_channels", [4, 256])
def test_the_gradients_are_forward_convs_and_matmuls(in_channels, dilation, monkeypatch):
    """The custom gradient is what runs: no conv gradient op and no space-to-batch detour in
    the traced gradient, dilated or not (TensorFlow's ops: the compiled kernel gradient that
    narrow convs take where it is usable is tested in test_fused_kernels.py)."""
    monkeypatch.setenv(kernels.ENV_SWITCH, "0")
    x = tf.random.stateless_normal([2, 16, in_channels], seed=[3, 4])
    layer = Conv1D(3, 3, padding="same", dilation_rate=dilation)
    layer.build(x.shape)
    graph = tf.function(gradients).get_concrete_function(layer, x).graph
    op_types = {op.type for op in graph.get_operations()}
    assert not op_types & {"Conv2DBackpropFilter", "Conv2DBackpropInput", "SpaceToBatchND", "BatchToSpaceND"}
    assert "MatMul" in op_types


TWO_REPLICAS = """
import numpy as np
import tensorflow_tts
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
from tensorflow_tts.layers import kernels
from tensorflow_tts.layers.conv1d import Conv1D
strategy = tf.distribute.MirroredStrategy(tf.config.list_logical_devices("CPU"))
x = tf.random.stateless_normal([4, 12, 8], seed=[5, 6])


def reference(weights):
    # The float64 gradients of sum(y ** 2), y = conv(x) + b ("same", 3 taps, whole batch), and
    # the summed absolute terms behind each element: what their rounding scales with.
    windows = np.pad(x.numpy().astype(np.float64), [(0, 0), (1, 1), (0, 0)])
    windows = np.stack([windows[:, k : k + x.shape[1]] for k in range(3)], axis=2)  # [N, T, K, C]
    kernel, bias = (w.astype(np.float64) for w in weights)
    dy = 2 * (np.einsum("ntkc,kco->nto", windows, kernel) + bias)
    terms = 2 * (np.einsum("ntkc,kco->nto", np.abs(windows), np.abs(kernel)) + np.abs(bias))
    return (
        [np.einsum("ntkc,nto->kco", windows, dy), dy.sum((0, 1))],
        [np.einsum("ntkc,nto->kco", np.abs(windows), terms), terms.sum((0, 1))],
    )


for policy in ("float32", "mixed_bfloat16"):
    tf.keras.mixed_precision.set_global_policy(policy)
    with strategy.scope():  # built eagerly on distributed (and autocast) variables
        ours, keras = Conv1D(4, 3, padding="same"), tf.keras.layers.Conv1D(4, 3, padding="same")
        ours(x), keras(x)
    ours.set_weights(keras.get_weights())

    @tf.function
    def step(layer):
        def replica(xs):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.cast(layer(xs), tf.float32) ** 2)
            return tape.gradient(loss, layer.trainable_variables)
        grads = strategy.run(replica, args=(strategy.experimental_distribute_values_from_function(
            lambda context: x[2 * context.replica_id_in_sync_group:][:2]),))
        return [strategy.reduce("SUM", g, axis=None) for g in grads]

    # Each layer's summed replica gradients against the float64 ones, element by element, with
    # the tolerance a share of that element's summed absolute terms: a sum that cancels can sit
    # far below its terms, and its rounding error follows the terms (float32 keeps 24 bits,
    # bfloat16 8, rounded once for the inputs and weights, once for y and per partial sum).
    share = 1e-5 if policy == "float32" else 2e-2
    expected, terms = reference(keras.get_weights())
    for layer in (keras, ours):
        for name, a, b, t in zip(("d_kernel", "d_bias"), expected, step(layer), terms, strict=True):
            error = np.abs(b.numpy() - a)
            assert (error <= share * t).all(), f"{policy} {layer.name} {name}: {(error / t).max():.3g} of its terms"
    print(policy, "ok")
"""


def test_builds_and_trains_on_two_replicas_and_in_mixed_precision():
    """Keras hands the layer distributed (and autocast) variables: it builds eagerly and its
    replica gradients sum to Keras' (two logical CPUs need a fresh process)."""
    process = subprocess.run([sys.executable, "-c", TWO_REPLICAS], capture_output=True, text=True, timeout=120)
    assert process.returncode == 0, process.stderr[-3000:]
    assert process.stdout.split() == ["float32", "ok", "mixed_bfloat16", "ok"]
