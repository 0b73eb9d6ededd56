"""Real-time factor of the published vocoders on this CPU: compute seconds per audio second.

For MB-MelGAN v1, MelGAN v1 and HiFi-GAN v1 (built from examples/*/conf, random weights: the
compute is the same), batch 1, `--seconds` of audio, a tf.function with an input_signature,
median of `--repeats` runs after one warm-up. Also prints parameter counts, the thread
settings and the machine's fp32 matmul GFLOP/s (2048 x 2048) for scale.

    python benchmarks/inference_rtf.py            # about 1-3 minutes on 2 cores
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)

import tensorflow as tf

from tensorflow_tts.trainers.vocoder import build_generator, load_recipe

REPO = Path(__file__).resolve().parents[1]
MODELS = {
    "mb_melgan_v1": REPO / "examples" / "multiband_melgan" / "conf" / "multiband_melgan.v1.yaml",
    "melgan_v1": REPO / "examples" / "melgan" / "conf" / "melgan.v1.yaml",
    "hifigan_v1": REPO / "examples" / "hifigan" / "conf" / "hifigan.v1.yaml",
}


def timed(function, repeats, budget_seconds):
    """Median wall time of `function()` over `repeats` runs (fewer if `budget_seconds` runs out)."""
    times = []
    deadline = time.perf_counter() + budget_seconds
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
        if time.perf_counter() > deadline:
            break
    return statistics.median(times), len(times)


def matmul_gflops(size=2048, repeats=5):
    a = tf.random.normal([size, size])
    b = tf.random.normal([size, size])
    matmul = tf.function(lambda: tf.reduce_sum(tf.matmul(a, b)))
    matmul().numpy()  # warm-up
    seconds, _ = timed(lambda: matmul().numpy(), repeats, 30)
    return 2 * size**3 / seconds / 1e9


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="audio length per run")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per model (after one warm-up)")
    parser.add_argument("--budget", type=float, default=40.0, help="seconds of timed runs per model at most")
    parser.add_argument("--models", nargs="*", default=list(MODELS), choices=list(MODELS))
    args = parser.parse_args(argv)

    threads = {
        "cpu_count": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads(),  # 0 = TensorFlow's default
        "inter_op_threads": tf.config.threading.get_inter_op_parallelism_threads(),
        "TF_NUM_INTRAOP_THREADS": os.environ.get("TF_NUM_INTRAOP_THREADS"),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
    }
    print(f"tensorflow {tf.__version__}; threads: {json.dumps(threads)}")
    gflops = matmul_gflops()
    print(f"fp32 matmul 2048x2048: {gflops:.1f} GFLOP/s")

    results = {}
    for name in args.models:
        _, model_values, _, vocoder_config = load_recipe(MODELS[name])
        generator = build_generator(model_values, str(MODELS[name])).build_for(80)
        frames = int(round(args.seconds * vocoder_config.sampling_rate / generator.hop_size))
        audio_seconds = frames * generator.hop_size / vocoder_config.sampling_rate
        mels = tf.random.normal([1, frames, 80])
        infer = tf.function(
            lambda mels: generator(mels, training=False), input_signature=[tf.TensorSpec([1, None, 80], tf.float32)]
        )
        start = time.perf_counter()
        infer(mels).numpy()  # trace + warm-up
        warmup = time.perf_counter() - start
        seconds, runs = timed(lambda: infer(mels).numpy(), args.repeats, args.budget)
        results[name] = {
            "params_millions": round(generator.count_params() / 1e6, 3),
            "rtf": round(seconds / audio_seconds, 4),
            "seconds_per_run": round(seconds, 3),
            "audio_seconds": round(audio_seconds, 3),
            "runs": runs,
            "warmup_seconds": round(warmup, 2),
        }
        print(
            f"{name:<14} params {results[name]['params_millions']:>7.3f} M  RTF {results[name]['rtf']:.4f} "
            f"({seconds:.3f} s for {audio_seconds:.2f} s of audio, median of {runs}; warm-up {warmup:.1f} s)",
            flush=True,
        )
    print(json.dumps({"gflops_fp32": round(gflops, 1), "threads": threads, "models": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
