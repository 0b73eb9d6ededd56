"""layers.residual_stack.reflect_pad: tf.pad's REFLECT values and gradient, cheaper."""

import tensorflow_tts  # noqa: F401

import shutil

import numpy as np
import pytest
import tensorflow as tf

from tensorflow_tts.configs import MultiBandMelGANGeneratorConfig
from tensorflow_tts.layers import kernels
from tensorflow_tts.layers.residual_stack import TFReflectionPad1d, reflect_pad
from tensorflow_tts.models import TFMBMelGANGenerator


def padded_and_gradient(pad, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = pad(x)
        loss = tf.reduce_sum(y * tf.reshape(tf.cos(tf.range(tf.size(y), dtype=tf.float32)), tf.shape(y)))
    return y, tape.gradient(loss, x)


@pytest.mark.parametrize("size,steps", [(1, 2), (3, 4), (3, 17), (27, 60)])
@pytest.mark.parametrize("training", [False, True], ids=["inference", "training"])
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "tf.function"])
@pytest.mark.parametrize("rows", [False, True], ids=["(B,T,C)", "rows (B,1,T,C)"])
def test_values_and_gradient_equal_tf_pad_reflect(size, steps, training, compiled, rows):
    shape = [2, 1, steps, 3] if rows else [2, steps, 3]
    x = tf.random.stateless_normal(shape, seed=[7, 8])
    run = tf.function(padded_and_gradient) if compiled else padded_and_gradient
    paddings = [[0, 0]] * (len(shape) - 2) + [[size, size], [0, 0]]
    expected = run(lambda v: tf.pad(v, paddings, mode="REFLECT"), x)
    got = run(lambda v: reflect_pad(v, size, training), x)
    for name, a, b in zip(["padded", "gradient"], expected, got, strict=True):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6, atol=1e-6, err_msg=name)


def traced_op_types(model, mels, training):
    @tf.function
    def run(mels):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(mels, training=training))
        return tape.gradient(loss, model.trainable_variables)

    return [(op.type, op.name) for op in run.get_concrete_function(mels).graph.get_operations()]


@pytest.mark.parametrize("fused", ["0", "1"], ids=["tensorflow-ops", "compiled-kernels"])
def test_a_generator_training_step_takes_each_pads_gradient_in_one_op(fused, monkeypatch):
    """The training flag reaches every pad of a vocoder, whose gradients are then one
    MirrorPadGrad each and no StridedSliceGrad (autodiff through the concat's slices); with the
    compiled kernels, each pad of an activated signal is one TtsLeakyReflectPadGrad instead,
    the activation's gradient included."""
    if fused == "1" and shutil.which("g++") is None:
        pytest.skip("no C++ compiler to build the kernels")
    monkeypatch.setenv(kernels.ENV_SWITCH, fused)
    config = MultiBandMelGANGeneratorConfig(filters=16, upsample_scales=[2, 2], stacks=2, subbands=4)
    model = TFMBMelGANGenerator(config)
    mels = tf.random.stateless_normal([1, 12, 80], seed=[1, 2])
    model(mels)
    pads = [layer for layer in model.submodules if isinstance(layer, TFReflectionPad1d) and layer.padding_size]
    traced = traced_op_types(model, mels, training=True)
    training = [op for op, _ in traced]
    fused_gradients = training.count("TtsLeakyReflectPadGrad")
    # every pad but the first, whose input is the mels (no gradient asked for); all of those
    # pad an activated signal
    assert training.count("MirrorPadGrad") + fused_gradients == len(pads) - 1 > 2
    assert fused_gradients == (len(pads) - 1 if fused == "1" else 0)
    assert not [name for op, name in traced if op == "StridedSliceGrad" and "reflect" in name]
    inference = [op for op, _ in traced_op_types(model, mels, training=False)]
    assert "MirrorPadGrad" not in inference and "TtsLeakyReflectPadGrad" not in inference
