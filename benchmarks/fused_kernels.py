"""The compiled kernels (`tensorflow_tts.layers.kernels`) against the TensorFlow ops they replace.

Ours against ours, in one process: each figure traces the same model or block twice, with
``TF_TTS_FUSED_KERNELS=0`` (TensorFlow ops) and ``=1`` (the kernel), and alternates their
calls pair by pair, so both see the same phases of the machine. Printed per figure: the
median time of each form, the median of the per-pair ratios kernel / TensorFlow ops with
their quartiles (`alternation.paired_ratios`), and the largest difference between the two outputs.

* ``blocks``: one residual stack at the shapes of the MB-MelGAN v1 vocoder's three stages on
  10 s of mel (192, 96 and 48 channels), with each form's GFLOP/s and its fraction of the
  2048 x 2048 float32 matmul's, timed in the same process;
* ``vocoders``: Keras vocoders on ``--seconds`` of mel, as the model's own ``inference``
  runs them: those of `inference_rtf.py` (examples/*/conf, random weights) and
  ``mb_melgan_2_4_8``, the side-by-side comparison's headline MB-MelGAN (`roofline.py`'s);
* ``gradients``: the kernel and bias gradients of a conv (`layers.conv1d.kernel_gradient`:
  per-tap matmuls and a sum) against the compiled op, which gives both, at the MB-MelGAN generator step's shapes (8 items), its
  last conv's, the MelGAN discriminator's first conv's, and two wider convs that keep the
  matmuls (`COMPILED_KERNEL_GRADIENT_MAX_WEIGHTS`), with each form's GFLOP/s;
* ``generator_step``: the side-by-side comparison's MB-MelGAN generator step (8 x 32 frames, L1
  on the wave, Adam), one model traced with the kernels off and on;
* ``flips``: a conv kernel's flip (`layers.conv1d.flipped_kernel`: taps reversed, each tap
  transposed; every conv's input gradient and the upsamplers' polyphase kernels) against
  TensorFlow's ReverseV2 + Transpose, ``FLIPS_PER_CALL`` flips per call (the call's own cost
  spread over them), at the generator step's kernel shapes and FastSpeech2's widest.

``--dtype bfloat16`` times the last two in bfloat16: the gradients' inputs cast to it, the
generator step under a global ``mixed_bfloat16`` policy (the trainers' ``--mixed_precision 1``
on CPUs with bfloat16 instructions).

    python benchmarks/fused_kernels.py                       # about a minute on 2 cores
    python benchmarks/fused_kernels.py --parts vocoders --models mb_melgan_2_4_8 melgan_v1 --pairs 20
    python benchmarks/fused_kernels.py --parts gradients generator_step --pairs 40
    python benchmarks/fused_kernels.py --parts gradients generator_step --pairs 40 --dtype bfloat16
    python benchmarks/fused_kernels.py --parts flips --pairs 30
"""

import argparse
import os
import statistics

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)

import numpy as np
import tensorflow as tf

from inference_rtf import VOCODERS, build_vocoder
from alternation import alternated_times, paired_ratios
from measure import print_machine
from roofline import build_mb_melgan
from tensorflow_tts.layers import kernels
from tensorflow_tts.layers.conv1d import flipped_kernel, kernel_gradient
from tensorflow_tts.layers.residual_stack import TFResidualStack

FORMS = {"tensorflow ops": "0", "kernel": "1"}
# (steps, channels): the MB-MelGAN v1 stages' signals on 862 mel frames (10 s at hop 256).
STAGES = ((1724, 192), (6896, 96), (55168, 48))
COMPARISON_VOCODER = "mb_melgan_2_4_8"
# (rows per item, C_in, C_out, taps, dilation) of 8 items: the generator step's stages and last
# conv, the MelGAN discriminator's first conv, and two convs wider than the compiled gradient's limit.
GRADIENT_SHAPES = ((2048, 48, 48, 3, 1), (2048, 48, 48, 3, 27), (256, 96, 96, 3, 9), (64, 192, 192, 3, 3),
                   (2048, 48, 48, 1, 1), (2048, 48, 4, 7, 1), (8192, 1, 16, 15, 1), (128, 256, 256, 3, 3),
                   (64, 384, 384, 3, 1))
# (K, A, B) kernels: the generator step's 3-tap and 1x1 convs at 192 and 48 channels, its first conv,
# an upsampler's polyphase kernel, and FastSpeech2's FFN conv (384 -> 1536, 3 taps).
FLIP_SHAPES = ((3, 192, 192), (1, 192, 192), (3, 48, 48), (7, 80, 384), (8, 384, 192), (3, 384, 1536))
FLIPS_PER_CALL = 20


def traced_forms(call, x):
    """{form: tf.function of ``call``} traced with the kernel switched off and on."""
    functions = {}
    for form, switch in FORMS.items():
        os.environ[kernels.ENV_SWITCH] = switch
        functions[form] = tf.function(call)
        functions[form].get_concrete_function(x)
    os.environ.pop(kernels.ENV_SWITCH)
    return functions


def alternate(functions, x, pairs):
    """Per form, the call times over ``pairs`` alternated pairs (after one call each), and the
    largest absolute difference between the two forms' outputs."""
    outputs = {form: function(x).numpy() for form, function in functions.items()}
    baseline, candidate = outputs.values()
    calls = {form: (lambda function=function: function(x).numpy()) for form, function in functions.items()}
    return alternated_times(calls, pairs), float(np.abs(candidate - baseline).max())


def report(name, times, difference, flop=None, peak=None):
    ratio, first, third = paired_ratios(times["tensorflow ops"], times["kernel"])
    parts = []
    for form, samples in times.items():
        seconds = statistics.median(samples)
        rate = f", {flop / seconds / 1e9:.0f} GFLOP/s = {flop / seconds / 1e9 / peak:.2f} of the matmul" if flop else ""
        parts.append(f"{form} {seconds * 1e3:.2f} ms{rate}")
    print(f"{name}: " + "; ".join(parts), flush=True)
    print(f"    kernel / tensorflow ops: median {ratio:.3f} (quartiles {first:.3f}-{third:.3f}, "
          f"{len(times['kernel'])} pairs); max |difference| {difference:.2e}", flush=True)


def run_blocks(args, peak):
    for steps, channels in STAGES:
        for dilation in (1, 27):
            block = TFResidualStack(3, channels, dilation, initializer_seed=1)
            x = tf.random.stateless_normal([1, steps, channels], seed=[1, 2])
            block(x)
            functions = traced_forms(lambda v, block=block: block(v, training=False), x)
            times, difference = alternate(functions, x, args.pairs)
            flop = 2 * steps * channels * channels * 5  # a 3-tap conv and two 1x1 convs
            report(f"residual stack, {steps} x {channels}, dilation {dilation}", times, difference, flop, peak)


def run_vocoders(args):
    for name in args.models:
        if name == COMPARISON_VOCODER:
            generator, sampling_rate = build_mb_melgan([2, 4, 8]), 22050
        else:
            generator, sampling_rate = build_vocoder(name)
        frames = int(round(args.seconds * sampling_rate / generator.hop_size))
        mels = tf.random.stateless_normal([1, frames, 80], seed=[3, 4])
        functions = traced_forms(lambda m, generator=generator: generator(m, training=False), mels)
        times, difference = alternate(functions, mels, args.pairs)
        report(f"{name}, {args.seconds:g} s of mel", times, difference)


def flat(weights, bias):
    """The kernel's and the bias's gradients as one vector (for `alternate`'s difference)."""
    return tf.concat([tf.reshape(weights, [-1]), bias], 0)


def run_gradients(args, peak):
    for steps, in_channels, out_channels, taps, dilation in GRADIENT_SHAPES:
        shape = (taps, in_channels, out_channels)
        inputs = (tf.random.stateless_normal([8, steps + dilation * (taps - 1), in_channels], seed=[5, 6],
                                             dtype=args.dtype),
                  tf.random.stateless_normal([8, steps, out_channels], seed=[5, 7], dtype=args.dtype))
        os.environ[kernels.ENV_SWITCH] = "0"
        functions = {"tensorflow ops": tf.function(
            lambda xs, shape=shape, d=dilation: flat(*kernel_gradient(*xs, shape, d, with_bias=True)))}
        functions["tensorflow ops"].get_concrete_function(inputs)
        os.environ.pop(kernels.ENV_SWITCH)
        functions["kernel"] = tf.function(
            lambda xs, taps=taps, d=dilation: flat(*kernels.ops().tts_conv_kernel_gradient(*xs, taps=taps, dilation=d)))
        times, difference = alternate(functions, inputs, args.pairs)
        flop = 2 * 8 * steps * in_channels * out_channels * taps
        report(f"{args.dtype} kernel gradient, 8 x {steps} rows, {in_channels} -> {out_channels}, {taps} taps, "
               f"dilation {dilation}",
               times, difference, flop, peak)


def run_generator_step(args):
    policy = tf.keras.mixed_precision.global_policy()
    tf.keras.mixed_precision.set_global_policy("mixed_bfloat16" if args.dtype == "bfloat16" else "float32")
    try:
        time_generator_step(args)
    finally:
        tf.keras.mixed_precision.set_global_policy(policy)


def time_generator_step(args):
    mels = tf.random.stateless_normal([8, 32, 80], seed=[8, 1])
    waves = tf.random.stateless_uniform([8, 32 * 256, 1], seed=[8, 2], minval=-0.5, maxval=0.5)
    model = build_mb_melgan([2, 4, 8])
    optimizer = tf.keras.optimizers.Adam(1e-4)

    def loss_gradients(batch):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.abs(batch[1] - model(batch[0], training=True)))
        return loss, tape.gradient(loss, model.trainable_variables)

    def step(batch):
        loss, grads = loss_gradients(batch)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    # Both forms' gradients before any step moves the weights; then the steps, alternated.
    gradients = [function((mels, waves))[1] for function in traced_forms(loss_gradients, (mels, waves)).values()]
    relative = max(float(tf.reduce_max(tf.abs(a - b)) / tf.reduce_max(tf.abs(a))) for a, b in zip(*gradients))
    times, _ = alternate(traced_forms(step, (mels, waves)), (mels, waves), args.pairs)
    policy = tf.keras.mixed_precision.global_policy().name
    report(f"MB-MelGAN generator step, 8 x 32 frames (the comparison's), {policy}", times, relative)
    print("    (the difference printed is the largest gradient difference relative to that gradient's largest value)")


def run_flips(args):
    for shape in FLIP_SHAPES:
        kernel = tf.Variable(tf.random.stateless_normal(shape, seed=[9, 1]))

        def flips(unused, kernel=kernel):
            # Each flip of its own read of the variable (no common subexpression to merge); the
            # first column of each flip summed, for `alternate`'s difference.
            return tf.add_n([flipped_kernel(kernel.read_value())[:, 0] for _ in range(FLIPS_PER_CALL)])

        times, difference = alternate(traced_forms(flips, tf.constant(0.0)), tf.constant(0.0), args.pairs)
        report(f"kernel flip, {' x '.join(map(str, shape))}, {FLIPS_PER_CALL} per call", times, difference)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="*", default=["blocks", "vocoders"],
                        choices=["blocks", "vocoders", "gradients", "generator_step", "flips"])
    parser.add_argument("--models", nargs="*", default=[COMPARISON_VOCODER, "mb_melgan_v1"],
                        choices=[COMPARISON_VOCODER, *VOCODERS])
    parser.add_argument("--seconds", type=float, default=10.0, help="audio length per vocoder call")
    parser.add_argument("--pairs", type=int, default=12, help="alternated pairs of calls per figure")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"],
                        help="precision of the gradients and generator_step parts")
    args = parser.parse_args(argv)
    _, peak = print_machine()
    if kernels.ops() is None:
        raise SystemExit("the kernels could not be built here (the warning above says why): nothing to compare")
    print(f"kernel library: {kernels.library_path()}")
    if "blocks" in args.parts:
        run_blocks(args, peak)
    if "vocoders" in args.parts:
        run_vocoders(args)
    if "gradients" in args.parts:
        run_gradients(args, peak)
    if "generator_step" in args.parts:
        run_generator_step(args)
    if "flips" in args.parts:
        run_flips(args)


if __name__ == "__main__":
    main()
