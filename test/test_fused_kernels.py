"""The compiled kernels (`layers.kernels`): the residual stack's, the narrow convs' kernel
gradient and the activated reflect pad give the values of the TensorFlow ops they replace, are
used only where they can be, never in exported graphs, and fall back cleanly."""

import logging
import os
import shutil
import subprocess
import sys

import tensorflow_tts  # noqa: F401

import numpy as np
import pytest
import tensorflow as tf

from tensorflow_tts.configs import MultiBandMelGANGeneratorConfig
from tensorflow_tts.inference.export import export_saved_model
from tensorflow_tts.inference.tflite import convert_model, operator_names
from tensorflow_tts.layers import kernels
from tensorflow_tts.layers.conv1d import Conv1D, conv1d, flipped_kernel, kernel_gradient
from tensorflow_tts.layers.residual_stack import TFReflectionPad1d, TFResidualStack, pad_activated
from tensorflow_tts.models import TFMBMelGANGenerator

OP = "TtsResidualStack"
FLIP_OP = "TtsFlippedKernel"
GRADIENT_OP = "TtsConvKernelGradient"

needs_compiler = pytest.mark.skipif(shutil.which("g++") is None, reason="no C++ compiler to build the kernels")


def op_types(function, *args):
    graph = function.get_concrete_function(*args).graph
    types = {op.type for op in graph.get_operations()}
    for inner in graph.as_graph_def().library.function:
        types |= {node.op for node in inner.node_def}
    return types


def without_and_with(op, function, monkeypatch, *args):
    """``function(*args)``'s outputs as numpy arrays, traced with the compiled kernels switched off
    and then on, after checking that only the second trace holds ``op``."""
    results = []
    for switch in ("0", "1"):
        monkeypatch.setenv(kernels.ENV_SWITCH, switch)
        run = tf.function(function)
        assert (op in op_types(run, *args)) == (switch == "1")
        results.append([t.numpy() for t in run(*args)])
    return results


def both_forms(block, x, monkeypatch):
    """The block's inference output as TensorFlow ops and with the kernel, and the ops each traced."""
    outputs = []
    for switch in ("0", "1"):
        monkeypatch.setenv(kernels.ENV_SWITCH, switch)
        function = tf.function(lambda v: block(v, training=False))
        outputs.append((function(x).numpy(), op_types(function, x)))
    return outputs


@needs_compiler
@pytest.mark.parametrize(
    "kernel_size,channels,dilation,steps,weight_norm",
    [
        (3, 48, 1, 300, False),   # MB-MelGAN's last stage: one block of 48 columns
        (3, 64, 27, 28, False),   # 48 + 16 columns; the fewest steps reflect padding allows
        (5, 16, 3, 97, True),     # a wider kernel, weight norm, a tile not a multiple of 8 rows
        (3, 96, 9, 1000, False),  # several tiles
    ],
)
def test_the_kernel_gives_the_tensorflow_ops_values(kernel_size, channels, dilation, steps, weight_norm, monkeypatch):
    block = TFResidualStack(kernel_size, channels, dilation, is_weight_norm=weight_norm, initializer_seed=3)
    x = tf.random.stateless_normal([2, steps, channels], seed=[1, 2]) * 2.0
    block(x)  # builds the weights
    block.dilated_conv.bias.assign(tf.random.stateless_normal([channels], seed=[5, 6]))
    (reference, reference_ops), (fused, fused_ops) = both_forms(block, x, monkeypatch)
    assert OP not in reference_ops and OP in fused_ops
    assert "ConcatV2" not in fused_ops and "LeakyRelu" not in fused_ops  # one op instead of ~10 passes
    scale = float(np.abs(reference).max())
    np.testing.assert_allclose(fused, reference, rtol=1e-5, atol=2e-6 * scale)


@needs_compiler
def test_rows_layout_and_a_vocoder_give_the_same_audio(monkeypatch):
    config = MultiBandMelGANGeneratorConfig(filters=96, stacks=3, upsample_scales=[2, 4, 8])
    vocoder = TFMBMelGANGenerator(config=config)
    vocoder.build_once()
    mels = tf.random.stateless_normal([1, 40, 80], seed=[7, 8])
    (reference, _), (fused, fused_ops) = both_forms(vocoder, mels, monkeypatch)
    assert OP in fused_ops
    np.testing.assert_allclose(fused, reference, rtol=1e-4, atol=2e-6)


@needs_compiler
def test_exports_hold_only_tensorflow_and_tflite_builtin_ops(tmp_path):
    vocoder = TFMBMelGANGenerator(config=MultiBandMelGANGeneratorConfig(filters=64, stacks=2, upsample_scales=[2, 4, 8]))
    vocoder.build_once()
    mels = tf.zeros([1, 20, 80])
    assert {OP, FLIP_OP} <= op_types(vocoder.inference, mels)  # the model's own traces use the kernels
    export_saved_model(vocoder, tmp_path / "saved")
    tf.saved_model.save(vocoder, str(tmp_path / "keras"))
    for op in (OP, FLIP_OP):
        assert op.encode() not in (tmp_path / "saved" / "saved_model.pb").read_bytes()
        assert op.encode() not in (tmp_path / "keras" / "saved_model.pb").read_bytes()
        assert op not in op_types(vocoder.inference_tflite)
    assert "CONV_2D" in operator_names(convert_model(vocoder))  # converts with builtin ops only


@needs_compiler
def test_training_xla_and_low_precision_run_the_tensorflow_ops(monkeypatch):
    monkeypatch.setenv(kernels.ENV_SWITCH, "1")
    block = TFResidualStack(3, 16, 1, initializer_seed=4)
    x = tf.random.stateless_normal([1, 30, 16], seed=[1, 1])
    block(x)
    assert OP not in op_types(tf.function(lambda v: block(v, training=True)), x)
    compiled = tf.function(lambda v: block(v, training=False), jit_compile=True)
    np.testing.assert_allclose(compiled(x).numpy(), block(x, training=True).numpy(), rtol=1e-5, atol=1e-5)
    assert OP not in op_types(compiled, x)  # XLA compiles TensorFlow's own ops only
    tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        low = TFResidualStack(3, 16, 1, initializer_seed=4)
        low(tf.cast(x, tf.bfloat16))
        assert OP not in op_types(tf.function(lambda v: low(v, training=False)), tf.cast(x, tf.bfloat16))
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")


@pytest.mark.parametrize("compiler", ["no-such-compiler-xyz", "false"], ids=["missing", "failing"])
def test_without_a_working_compiler_the_blocks_fall_back_and_say_why(compiler, monkeypatch, tmp_path, caplog):
    monkeypatch.setenv("CXX", compiler)
    monkeypatch.setenv("TF_TTS_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(kernels, "_library", {})  # this process has not tried yet
    block = TFResidualStack(3, 16, 3, initializer_seed=2)
    x = tf.random.stateless_normal([1, 30, 16], seed=[4, 4])
    block(x)
    with caplog.at_level(logging.WARNING, logger="tensorflow_tts.layers.kernels"):
        function = tf.function(lambda v: block(v, training=False))
        got = function(x)
    assert OP not in op_types(function, x)
    assert "fused CPU kernels unavailable" in caplog.text and compiler in caplog.text
    np.testing.assert_allclose(got.numpy(), block(x, training=True).numpy(), rtol=1e-5, atol=1e-5)
    assert list(tmp_path.rglob("*.so")) == []  # no half-written library left behind


def test_a_failed_build_is_remembered_and_not_retried_by_later_processes(monkeypatch, tmp_path, caplog):
    calls = tmp_path / "calls"
    compiler = tmp_path / "broken-cxx"
    compiler.write_text(f"#!/bin/sh\necho run >> {calls}\necho 'error: no such intrinsic' >&2\nexit 1\n")
    compiler.chmod(0o755)
    monkeypatch.setenv("CXX", str(compiler))
    monkeypatch.setenv("TF_TTS_KERNEL_CACHE", str(tmp_path / "cache"))
    for _ in range(2):  # two processes, each trying once
        monkeypatch.setattr(kernels, "_library", {})
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="tensorflow_tts.layers.kernels"):
            assert kernels.ops() is None
        assert "no such intrinsic" in caplog.text  # the compiler's own words, both times
    assert calls.read_text().splitlines() == ["run"]
    record = kernels.failure_record(kernels.library_path())
    assert "earlier build failed" in caplog.text and str(record) in caplog.text
    record.unlink()  # asks for a new try
    monkeypatch.setattr(kernels, "_library", {})
    assert kernels.ops() is None
    assert calls.read_text().splitlines() == ["run", "run"]


def test_the_cache_key_follows_sources_tensorflow_and_compiler(monkeypatch, tmp_path):
    monkeypatch.setenv("TF_TTS_KERNEL_CACHE", str(tmp_path))
    first = kernels.library_path()
    assert first.parent.parent == tmp_path
    assert {path.name for path in kernels.SOURCES} >= {"residual_stack.cc", "kernel_gradient.cc"}
    header = tmp_path / "vectors.h"
    header.write_text(kernels.HEADERS[0].read_text() + "// changed\n")
    monkeypatch.setattr(kernels, "HEADERS", [header])
    assert kernels.library_path() != first  # a header both sources include is part of the key
    monkeypatch.undo()
    monkeypatch.setenv("TF_TTS_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setenv("CXX", "clang++")
    assert kernels.library_path() != first


def kernel_gradients(switch, monkeypatch, x_padded, dy, kernel_shape, dilation):
    """`kernel_gradient` with the bias's, traced with the compiled kernels switched on ("1") or
    off ("0"): the kernel's and the bias's values and whether the trace holds the compiled op."""
    monkeypatch.setenv(kernels.ENV_SWITCH, switch)
    function = tf.function(lambda x, d: kernel_gradient(x, d, kernel_shape, dilation, with_bias=True))
    weights, bias = function(x_padded, dy)
    return weights.numpy(), bias.numpy(), GRADIENT_OP in op_types(function, x_padded, dy)


@needs_compiler
@pytest.mark.parametrize(
    "batch,steps,in_channels,out_channels,taps,dilation",
    [
        (8, 300, 48, 48, 3, 9),    # MB-MelGAN's last stage; 300 rows: two chunks and part of one
        (2, 40, 20, 32, 7, 1),     # C_in not a multiple of the 8-row register block; under a chunk
        (3, 129, 48, 4, 7, 1),     # C_out 4 (the last conv): vectors along C_in, transposed at the end
        (1, 64, 192, 192, 1, 1),   # one tap, the widest that qualifies
    ],
)
def test_the_compiled_kernel_gradient_gives_the_matmuls_values(batch, steps, in_channels, out_channels, taps,
                                                               dilation, monkeypatch):
    x_padded = tf.random.stateless_normal([batch, steps + dilation * (taps - 1), in_channels], seed=[3, 1])
    dy = tf.random.stateless_normal([batch, steps, out_channels], seed=[3, 2])
    shape = (taps, in_channels, out_channels)
    reference, reference_bias, reference_compiled = kernel_gradients("0", monkeypatch, x_padded, dy, shape, dilation)
    compiled, compiled_bias, used = kernel_gradients("1", monkeypatch, x_padded, dy, shape, dilation)
    assert used and not reference_compiled
    assert compiled.shape == reference.shape == shape
    np.testing.assert_allclose(compiled, reference, rtol=1e-5, atol=1e-5 * float(np.abs(reference).max()))
    exact_bias = dy.numpy().astype(np.float64).sum(axis=(0, 1))
    assert compiled_bias.shape == reference_bias.shape == (out_channels,)
    for bias in (reference_bias, compiled_bias):
        np.testing.assert_allclose(bias, exact_bias, rtol=1e-5, atol=1e-5 * float(np.abs(exact_bias).max()))
    again, again_bias, _ = kernel_gradients("1", monkeypatch, x_padded, dy, shape, dilation)
    np.testing.assert_array_equal(again, compiled)  # the threads' sums are added in a fixed order
    np.testing.assert_array_equal(again_bias, compiled_bias)


def exact_kernel_gradient(x_padded, dy, taps, dilation):
    """The kernel gradient's sums in float64 from the inputs' own values (K, C_in, C_out)."""
    x, d = (np.asarray(t, dtype=np.float64) for t in (x_padded, dy))
    steps = d.shape[1]
    return np.stack([np.einsum("bti,btj->ij", x[:, k * dilation : k * dilation + steps], d) for k in range(taps)])


def assert_within_one_bfloat16_rounding(got, exact):
    """Each value within one bfloat16 rounding (8 significant bits) of the exact sum, plus float32
    summation error."""
    error = np.abs(np.asarray(got, dtype=np.float64) - exact)
    assert np.all(error <= 2.0**-8 * np.abs(exact) + 1e-5 * np.abs(exact).max())


@needs_compiler
@pytest.mark.parametrize(
    "batch,steps,in_channels,out_channels,taps,dilation",
    [
        (8, 300, 48, 48, 3, 9),    # odd dilation: shifts of both parities; 300 rows, two chunks and part of one
        (2, 129, 20, 32, 4, 2),    # even dilation; an odd last chunk; C_in not a multiple of 16
        (3, 127, 48, 4, 7, 1),     # C_out 4: summed transposed
        (1, 64, 192, 192, 1, 1),   # one tap
    ],
)
def test_the_compiled_kernel_gradient_sums_bfloat16_in_float32_and_rounds_once(
        batch, steps, in_channels, out_channels, taps, dilation, monkeypatch):
    x_padded = tf.random.stateless_normal([batch, steps + dilation * (taps - 1), in_channels], seed=[7, 1],
                                          dtype=tf.bfloat16)
    dy = tf.random.stateless_normal([batch, steps, out_channels], seed=[7, 2], dtype=tf.bfloat16)
    shape = (taps, in_channels, out_channels)
    compiled, compiled_bias, used = kernel_gradients("1", monkeypatch, x_padded, dy, shape, dilation)
    matmuls, _, matmuls_used = kernel_gradients("0", monkeypatch, x_padded, dy, shape, dilation)
    assert used and not matmuls_used
    assert compiled.dtype == matmuls.dtype and compiled.shape == shape
    exact = exact_kernel_gradient(x_padded.numpy(), dy.numpy(), taps, dilation)
    assert_within_one_bfloat16_rounding(compiled, exact)
    np.testing.assert_allclose(compiled.astype(np.float32), matmuls.astype(np.float32), rtol=2.0**-7,
                               atol=1e-5 * float(np.abs(exact).max()))
    assert compiled_bias.dtype == compiled.dtype
    assert_within_one_bfloat16_rounding(compiled_bias, dy.numpy().astype(np.float64).sum(axis=(0, 1)))
    again, again_bias, _ = kernel_gradients("1", monkeypatch, x_padded, dy, shape, dilation)
    np.testing.assert_array_equal(again, compiled)
    np.testing.assert_array_equal(again_bias, compiled_bias)


def compiler_has_bfloat16_instructions():
    """Whether the kernels are built here with AVX512-BF16 (what -march=native turns on)."""
    if shutil.which("g++") is None:
        return False
    defines = subprocess.run(["g++", "-march=native", "-dM", "-E", "-x", "c++", os.devnull],
                             capture_output=True, text=True).stdout
    return "__AVX512BF16__" in defines


WIDENED_CHECK = """
import sys
import numpy as np
import tensorflow_tts
import tensorflow as tf
from tensorflow_tts.layers import kernels
x = tf.random.stateless_normal([3, 131 + 2 * 3, 48], seed=[9, 1], dtype=tf.bfloat16)
dy = tf.random.stateless_normal([3, 131, 32], seed=[9, 2], dtype=tf.bfloat16)
out, bias = kernels.ops().tts_conv_kernel_gradient(x, dy, taps=3, dilation=3)
for path, value in zip(sys.argv[1:], (out, bias, x, dy)):
    np.save(path, value.numpy().astype(np.float32))
"""


@pytest.mark.skipif(not compiler_has_bfloat16_instructions(),
                    reason="built here without AVX512-BF16: the other tests already run the widened path")
def test_without_bfloat16_instructions_the_kernel_gradient_widens_bfloat16_to_float32(tmp_path):
    """The path CPUs without AVX512-BF16 take, built here by turning the instructions off."""
    calls = tmp_path / "calls"
    compiler = tmp_path / "cxx-without-bf16"
    compiler.write_text(f'#!/bin/sh\necho run >> {calls}\nexec g++ "$@" -mno-avx512bf16\n')
    compiler.chmod(0o755)
    script = tmp_path / "check.py"
    script.write_text(WIDENED_CHECK)
    files = [tmp_path / f"{name}.npy" for name in ("out", "bias", "x", "dy")]
    env = {**os.environ, "CXX": str(compiler), "TF_TTS_KERNEL_CACHE": str(tmp_path / "cache")}
    result = subprocess.run([sys.executable, str(script), *map(str, files)], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert calls.read_text().splitlines() == ["run"]  # built by the compiler without the instructions
    out, bias, x, dy = (np.load(path) for path in files)
    assert out.shape == (3, 48, 32) and bias.shape == (32,)
    assert_within_one_bfloat16_rounding(out, exact_kernel_gradient(x, dy, 3, 3))
    assert_within_one_bfloat16_rounding(bias, dy.astype(np.float64).sum(axis=(0, 1)))


@needs_compiler
def test_the_compiled_kernel_gradient_has_the_matmuls_gradients(monkeypatch):
    """Second derivatives (a gradient penalty) pass through the compiled op, its bias gradient
    included, as through the matmuls and the sum."""
    x_padded = tf.random.stateless_normal([2, 50 + 2 * 3, 16], seed=[6, 1])
    dy = tf.random.stateless_normal([2, 50, 32], seed=[6, 2])
    weights = tf.random.stateless_normal([3, 16, 32], seed=[6, 3])
    bias_weights = tf.random.stateless_normal([32], seed=[6, 4])
    def second(x, d):
        with tf.GradientTape() as tape:
            tape.watch([x, d])
            kernel, bias = kernel_gradient(x, d, (3, 16, 32), 3, with_bias=True)
            value = tf.reduce_sum(weights * kernel) + tf.reduce_sum(bias_weights * bias)
        return tape.gradient(value, [x, d])

    for reference, compiled in zip(*without_and_with(GRADIENT_OP, second, monkeypatch, x_padded, dy)):
        np.testing.assert_allclose(compiled, reference, rtol=1e-5, atol=1e-5 * float(np.abs(reference).max()))


@needs_compiler
def test_narrow_convs_train_with_the_compiled_kernel_gradient_and_wide_ones_without(monkeypatch):
    monkeypatch.setenv(kernels.ENV_SWITCH, "1")
    x = tf.random.stateless_normal([2, 50, 48], seed=[4, 1])

    def gradients(layer):
        layer(x)  # builds the weights

        @tf.function
        def step(v):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.square(layer(v)))
            return tape.gradient(loss, layer.kernel)

        return step, step(x).numpy()

    narrow = Conv1D(48, 3, dilation_rate=3, padding="same", kernel_initializer=tf.keras.initializers.GlorotNormal(5))
    step, compiled = gradients(narrow)
    assert GRADIENT_OP in op_types(step, x)
    monkeypatch.setenv(kernels.ENV_SWITCH, "0")
    step, reference = gradients(narrow)
    assert GRADIENT_OP not in op_types(step, x)
    np.testing.assert_allclose(compiled, reference, rtol=1e-5, atol=1e-5 * float(np.abs(reference).max()))
    monkeypatch.setenv(kernels.ENV_SWITCH, "1")
    step, _ = gradients(Conv1D(256, 3, padding="same"))  # 48 x 256 weights per tap: within the limit
    assert GRADIENT_OP in op_types(step, x)
    step, _ = gradients(Conv1D(1024, 3, padding="same"))  # 48 x 1024: TensorFlow's matmuls are faster
    assert GRADIENT_OP not in op_types(step, x)
    compiled_xla = tf.function(lambda v: tf.gradients(tf.reduce_sum(tf.square(narrow(v))), narrow.kernel)[0],
                               jit_compile=True)
    np.testing.assert_allclose(compiled_xla(x).numpy(), reference, rtol=1e-4, atol=1e-4 * float(np.abs(reference).max()))
    assert GRADIENT_OP not in op_types(compiled_xla, x)  # XLA compiles TensorFlow's own ops only


@needs_compiler
@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
def test_narrow_convs_train_with_the_compiled_kernel_and_bias_gradients(policy, monkeypatch):
    """Where the compiled kernel gradient runs, `conv1d` adds the bias and the same op sums its
    gradient: no pass of its own over dy; the outputs are Keras' bias_add's, bit for bit, and
    under mixed_bfloat16 the kernel gradient is bfloat16's too."""
    x = tf.random.stateless_normal([2, 70, 48], seed=[11, 1])
    weights = tf.random.stateless_normal([2, 70, 48], seed=[11, 2])
    tf.keras.mixed_precision.set_global_policy(policy)
    try:
        layer = Conv1D(48, 3, dilation_rate=3, padding="same", kernel_initializer=tf.keras.initializers.GlorotNormal(7),
                       bias_initializer=tf.keras.initializers.RandomNormal(seed=8))
        layer(x)
        results = {}
        for switch in ("1", "0"):
            monkeypatch.setenv(kernels.ENV_SWITCH, switch)

            @tf.function
            def step(v):
                with tf.GradientTape() as tape:
                    y = tf.cast(layer(v), tf.float32)
                    loss = tf.reduce_sum(weights * y)
                return (y, *tape.gradient(loss, [layer.kernel, layer.bias]))

            types = op_types(step, x)
            assert (GRADIENT_OP in types) == (switch == "1")
            # TensorFlow's form: BiasAddGrad in float32, a reduce_sum in bfloat16 (`layers.bias`)
            assert ("BiasAddGrad" in types) == (switch == "0" and policy == "float32")
            results[switch] = [t.numpy() for t in step(x)]
    finally:
        tf.keras.mixed_precision.set_global_policy("float32")
    (outputs, compiled_kernel, compiled_bias), (reference_outputs, reference_kernel, _) = results["1"], results["0"]
    np.testing.assert_array_equal(outputs, reference_outputs)
    assert compiled_kernel.dtype == compiled_bias.dtype == np.float32  # the float32 variables' gradients
    scale = float(np.abs(reference_kernel).max())
    if policy == "float32":
        np.testing.assert_allclose(compiled_kernel, reference_kernel, rtol=1e-5, atol=1e-5 * scale)
    else:
        np.testing.assert_allclose(compiled_kernel, reference_kernel, rtol=2.0**-7, atol=1e-3 * scale)
    dy = tf.cast(tf.cast(weights, tf.bfloat16), tf.float32) if policy == "mixed_bfloat16" else weights
    exact = dy.numpy().astype(np.float64).sum(axis=(0, 1))
    for switch, (_, _, bias) in results.items():
        if policy == "float32":
            np.testing.assert_allclose(bias, exact, rtol=1e-5, atol=1e-5 * float(np.abs(exact).max()), err_msg=switch)
        else:
            assert_within_one_bfloat16_rounding(bias, exact)


@needs_compiler
def test_a_narrow_conv_traced_for_any_channel_count_takes_its_bias_the_same_way(monkeypatch):
    """An input signature may leave the channels unknown; the conv's channels come from its kernel."""
    monkeypatch.setenv(kernels.ENV_SWITCH, "1")
    layer = Conv1D(48, 3, padding="same", bias_initializer=tf.keras.initializers.RandomNormal(seed=12))
    x = tf.random.stateless_normal([2, 30, 48], seed=[12, 1])
    expected = layer(x)
    assert layer.convolution_takes_bias(x)

    @tf.function(input_signature=[tf.TensorSpec([None, None, None], tf.float32)])
    def step(v):
        with tf.GradientTape() as tape:
            y = layer(v)
            loss = tf.reduce_sum(tf.square(y))
        return y, tape.gradient(loss, layer.bias)

    y, bias_gradient = step(x)
    np.testing.assert_array_equal(y.numpy(), expected.numpy())
    assert "BiasAddGrad" not in op_types(step, x)
    np.testing.assert_allclose(bias_gradient.numpy(), (2 * expected).numpy().sum(axis=(0, 1)), rtol=1e-5, atol=1e-4)


PAD_OP, PAD_GRADIENT_OP = "TtsLeakyReflectPad", "TtsLeakyReflectPadGrad"


def activated_pad_and_gradients(x, size, alpha, upstream, second):
    """y = pad(LeakyReLU(x)) in training; its gradient dx for `upstream`; and the gradient of
    sum(second * dx) with respect to the upstream (what a gradient penalty differentiates)."""
    pad, activation = TFReflectionPad1d(size), tf.keras.layers.LeakyReLU(alpha)
    with tf.GradientTape() as outer:
        outer.watch(upstream)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = pad_activated(pad, activation, x, training=True)
        dx = inner.gradient(y, x, output_gradients=upstream)
        penalty = tf.reduce_sum(second * dx)
    return y, dx, outer.gradient(penalty, upstream)


@needs_compiler
@pytest.mark.parametrize("batch,steps,channels,size,alpha", [
    (2, 2, 5, 1, 0.2),     # the shortest signal a pad allows
    (2, 3, 5, 2, 0.2),     # both edges reflect the same steps
    (1, 5, 16, 4, 0.1),
    (3, 60, 48, 27, 0.2),  # MB-MelGAN's widest dilation
    (2, 300, 48, 9, 0.1),
])
def test_the_compiled_activated_pad_gives_tensorflows_values_and_gradients_bit_for_bit(
        batch, steps, channels, size, alpha, monkeypatch):
    x = tf.random.stateless_normal([batch, steps, channels], seed=[9, steps])
    upstream = tf.random.stateless_normal([batch, steps + 2 * size, channels], seed=[9, 2])
    second = tf.random.stateless_normal([batch, steps, channels], seed=[9, 3])
    results = without_and_with(PAD_GRADIENT_OP, activated_pad_and_gradients, monkeypatch, x, size, alpha, upstream,
                               second)
    for name, reference, compiled in zip(["padded", "gradient", "second derivative"], *results):
        np.testing.assert_array_equal(compiled, reference, err_msg=name)


@needs_compiler
def test_the_activated_pad_runs_tensorflows_ops_where_the_kernel_does_not_apply(monkeypatch):
    monkeypatch.setenv(kernels.ENV_SWITCH, "1")
    x = tf.random.stateless_normal([2, 30, 16], seed=[10, 1])

    def traced(activation, v, training=True, size=3):
        return op_types(tf.function(lambda u: pad_activated(TFReflectionPad1d(size), activation, u, training)), v)

    leaky = tf.keras.layers.LeakyReLU(0.2)
    assert PAD_OP in traced(leaky, x)
    assert PAD_OP not in traced(leaky, x, training=False)  # inference graphs stay TensorFlow's
    assert PAD_OP not in traced(leaky, tf.expand_dims(x, 1))  # rows (B, 1, T, C)
    assert PAD_OP not in traced(tf.keras.layers.ReLU(), x)
    assert PAD_OP not in traced(leaky, tf.cast(x, tf.bfloat16))
    with pytest.raises(tf.errors.InvalidArgumentError, match="more time steps than the padding"):
        kernels.ops().tts_leaky_reflect_pad(x[:, :3], size=3, alpha=0.2)


@needs_compiler
@pytest.mark.parametrize("shape", [(3, 192, 192), (7, 80, 384), (1, 48, 4), (2, 17, 33), (1, 1, 1), (0, 3, 4), (2, 0, 5)])
@pytest.mark.parametrize("dtype", [tf.float32, tf.bfloat16, tf.float16, tf.float64])
def test_the_compiled_flip_gives_tensorflows_values_and_gradient_bit_for_bit(shape, dtype, monkeypatch):
    kernel = tf.cast(tf.random.stateless_normal(shape, seed=[11, shape[1]]), dtype)
    upstream = tf.cast(tf.random.stateless_normal([shape[0], shape[2], shape[1]], seed=[11, 2]), dtype)

    def flip_and_gradient(k):
        with tf.GradientTape() as tape:
            tape.watch(k)
            flipped = flipped_kernel(k)
        return flipped, tape.gradient(flipped, k, output_gradients=upstream)

    tensorflow_ops, compiled_op = without_and_with(FLIP_OP, flip_and_gradient, monkeypatch, kernel)
    np.testing.assert_array_equal(compiled_op[0], np.transpose(kernel.numpy()[::-1], [0, 2, 1]))
    for reference, compiled in zip(tensorflow_ops, compiled_op):
        np.testing.assert_array_equal(compiled, reference)


@needs_compiler
def test_conv_input_gradients_and_the_upsamplers_kernels_flip_with_one_op(monkeypatch):
    from tensorflow_tts.layers.upsample import TFConvTranspose1d

    monkeypatch.setenv(kernels.ENV_SWITCH, "1")
    x = tf.random.stateless_normal([2, 20, 16], seed=[12, 1])
    kernel = tf.random.stateless_normal([3, 16, 8], seed=[12, 2])

    def input_gradient(v):
        with tf.GradientTape() as tape:
            tape.watch(v)
            y = conv1d(v, kernel, "SAME", dilation=2)
        return tape.gradient(y, v)

    def kernel_moves(function, *args):
        """The op types that flip or transpose float tensors (not shapes) in function's graph."""
        graph = tf.function(function).get_concrete_function(*args).graph
        return {op.type for op in graph.get_operations()
                if op.type in (FLIP_OP, "ReverseV2", "Transpose", "StridedSliceGrad") and op.outputs[0].dtype.is_floating}

    assert kernel_moves(input_gradient, x) == {FLIP_OP}
    upsampler = TFConvTranspose1d(8, 8, 4, initializer_seed=1)
    upsampler(x)

    def upsampler_step(v):
        with tf.GradientTape() as tape:
            y = upsampler(v)
        return tape.gradient(y, upsampler.kernel)

    assert kernel_moves(upsampler_step, x) == {FLIP_OP}  # the kernel's flip and its gradient's
