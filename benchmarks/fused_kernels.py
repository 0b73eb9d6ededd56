"""The compiled residual-stack kernel (`tensorflow_tts.layers.kernels`) against the TensorFlow ops it replaces.

Ours against ours, in one process: each figure traces the same model or block twice, with
``TF_TTS_FUSED_KERNELS=0`` (TensorFlow ops) and ``=1`` (the kernel), and alternates their
calls pair by pair, so both see the same phases of the machine. Printed per figure: the
median time of each form, the median of the per-pair ratios kernel / TensorFlow ops with
their range, and the largest difference between the two outputs.

* ``blocks``: one residual stack at the shapes of the MB-MelGAN v1 vocoder's three stages on
  10 s of mel (192, 96 and 48 channels), with each form's GFLOP/s and its fraction of the
  2048 x 2048 float32 matmul's, timed in the same process;
* ``vocoders``: Keras vocoders on ``--seconds`` of mel, as the model's own ``inference``
  runs them: those of `inference_rtf.py` (examples/*/conf, random weights) and
  ``mb_melgan_2_4_8``, the side-by-side comparison's headline MB-MelGAN (`roofline.py`'s).

    python benchmarks/fused_kernels.py                       # about a minute on 2 cores
    python benchmarks/fused_kernels.py --parts vocoders --models mb_melgan_2_4_8 melgan_v1 --pairs 20
"""

import argparse
import os
import statistics
import time

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)

import numpy as np
import tensorflow as tf

from inference_rtf import VOCODERS, build_vocoder
from measure import print_machine
from roofline import build_mb_melgan
from tensorflow_tts.layers import kernels
from tensorflow_tts.layers.residual_stack import TFResidualStack

FORMS = {"tensorflow ops": "0", "kernel": "1"}
# (steps, channels): the MB-MelGAN v1 stages' signals on 862 mel frames (10 s at hop 256).
STAGES = ((1724, 192), (6896, 96), (55168, 48))
COMPARISON_VOCODER = "mb_melgan_2_4_8"


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
    times = {form: [] for form in functions}
    order = list(functions.items())
    for pair in range(pairs):
        for form, function in order if pair % 2 == 0 else order[::-1]:
            start = time.perf_counter()
            function(x).numpy()
            times[form].append(time.perf_counter() - start)
    return times, float(np.abs(candidate - baseline).max())


def report(name, times, difference, flop=None, peak=None):
    ratios = [fused / ops for ops, fused in zip(times["tensorflow ops"], times["kernel"])]
    parts = []
    for form, samples in times.items():
        median = statistics.median(samples)
        rate = f", {flop / median / 1e9:.0f} GFLOP/s = {flop / median / 1e9 / peak:.2f} of the matmul" if flop else ""
        parts.append(f"{form} {median * 1e3:.2f} ms{rate}")
    print(f"{name}: " + "; ".join(parts), flush=True)
    print(f"    kernel / tensorflow ops: median {statistics.median(ratios):.3f} "
          f"(range {min(ratios):.3f}-{max(ratios):.3f}, {len(ratios)} pairs); max |difference| {difference:.2e}",
          flush=True)


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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="*", default=["blocks", "vocoders"], choices=["blocks", "vocoders"])
    parser.add_argument("--models", nargs="*", default=[COMPARISON_VOCODER, "mb_melgan_v1"],
                        choices=[COMPARISON_VOCODER, *VOCODERS])
    parser.add_argument("--seconds", type=float, default=10.0, help="audio length per vocoder call")
    parser.add_argument("--pairs", type=int, default=12, help="alternated pairs of calls per figure")
    args = parser.parse_args(argv)
    _, peak = print_machine()
    if kernels.ops() is None:
        raise SystemExit("the kernels could not be built here (the warning above says why): nothing to compare")
    print(f"kernel library: {kernels.library_path()}")
    if "blocks" in args.parts:
        run_blocks(args, peak)
    if "vocoders" in args.parts:
        run_vocoders(args)


if __name__ == "__main__":
    main()
