"""int8 TFLite vocoders with and without float32 filters in their narrow pointwise convs.

Ours against ours: each vocoder (random weights) is converted to int8 once per limit of
`tensorflow_tts.inference.tflite.FLOAT_POINTWISE_MAX_CHANNELS` (0: every filter int8, as
before the rewrite), and the files are timed in a fresh process that imports no TensorFlow
(LiteRT + numpy, as a shipped voice runs them), one call of each per round in turn, the order
reversed every other round (`alternation.alternated_times`). Printed
per vocoder and limit: the median of the per-round ratios to the limit-0 file with their
quartiles, and the largest difference of its audio from the limit-0 file's. Rerun it on a
CPU where the limit was not measured (an Intel Xeon with AMX and an AMD Zen 4 so far:
benchmarks/HISTORY.md, twelfth and seventeenth stops).

    python benchmarks/int8_pointwise.py                         # about 4 minutes on 2 cores
    python benchmarks/int8_pointwise.py --limits 0 64 96 128 --threads 1 --rounds 20
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

TIME_CHILD = "--time-files"
COMPARISON_VOCODER = "mb_melgan_2_4_8"  # the side-by-side comparison's MB-MelGAN (roofline.py's)
# Parallel WaveGAN v1: its 1x1 convs are 64 channels wide. It runs every layer at the sample rate
# and takes noise as an input, so it is timed on at most PARALLEL_WAVEGAN_FRAMES mel frames.
PARALLEL_WAVEGAN = "parallel_wavegan_v1"
PARALLEL_WAVEGAN_RECIPE = Path("parallel_wavegan") / "conf" / "parallel_wavegan.v1.yaml"  # under examples/
PARALLEL_WAVEGAN_FRAMES = 200


def build(name):
    """-> (the vocoder ``name``, built with random weights; the most mel frames to time it on, or None)."""
    from inference_rtf import CONF, build_vocoder
    from roofline import build_mb_melgan

    if name == COMPARISON_VOCODER:
        return build_mb_melgan([2, 4, 8]), None
    if name == PARALLEL_WAVEGAN:
        return build_vocoder(name, CONF / PARALLEL_WAVEGAN_RECIPE)[0], PARALLEL_WAVEGAN_FRAMES
    return build_vocoder(name)[0], None


def convert(args, folder):
    """Write one int8 file per (vocoder, limit) and each vocoder's inputs; return the spec for the timing child."""
    import tensorflow_tts.inference.tflite as tflite
    from measure import print_machine

    print_machine()
    rng = np.random.default_rng(0)
    spec = dict(threads=args.threads, rounds=args.rounds, limits=args.limits, models={})
    for name in args.models:
        model, max_frames = build(name)
        frames = min(args.frames, max_frames or args.frames)
        inputs = {}  # the serving signature's: mels (1, F, num_mels), and a noise-driven vocoder's noise (1, F * hop, 1)
        for tensor in model.serving_signature(1):
            steps = frames * model.config.hop_size if tensor.name == "noise" else frames
            inputs[tensor.name] = rng.normal(size=[1, steps, tensor.shape[-1]]).astype(np.float32)
        np.savez(folder / f"{name}.npz", **inputs)
        for limit in args.limits:
            tflite.FLOAT_POINTWISE_MAX_CHANNELS = limit
            (folder / f"{name}.{limit}.tflite").write_bytes(tflite.convert_model(model, "int8"))
        spec["models"][name] = [f"{name}.{limit}.tflite" for limit in args.limits]
        print(f"converted {name} at limits {args.limits}", flush=True)
    (folder / "spec.json").write_text(json.dumps(spec))


def time_files(folder):
    """(fresh process, no TensorFlow) Alternate each vocoder's files and print their ratios."""
    from alternation import alternated_times, paired_ratios
    from tensorflow_tts.inference.tflite import TFLiteModel

    spec = json.loads((folder / "spec.json").read_text())
    for name, files in spec["models"].items():
        inputs = dict(np.load(folder / f"{name}.npz"))
        models = {limit: TFLiteModel(folder / file, num_threads=spec["threads"])
                  for limit, file in zip(spec["limits"], files)}
        audio = {limit: model(**inputs)["audio"] for limit, model in models.items()}  # also the warm-up call
        times = alternated_times({limit: (lambda model=model: model(**inputs)) for limit, model in models.items()},
                                 spec["rounds"])
        for limit, samples in times.items():
            if limit == 0:
                continue
            median, first, third = paired_ratios(times[0], samples)
            print(f"{name}: limit {limit} / all int8 {median:.3f} "
                  f"(quartiles {first:.3f}-{third:.3f}, {len(samples)} rounds); "
                  f"max |audio difference| {np.abs(audio[limit] - audio[0]).max():.2e}", flush=True)
    if "tensorflow" in sys.modules:
        raise SystemExit("the timing process imported TensorFlow: its figures would not be a shipped voice's")


def main(argv=None):
    if argv is None and len(sys.argv) == 3 and sys.argv[1] == TIME_CHILD:
        return time_files(Path(sys.argv[2]))
    import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)
    from inference_rtf import VOCODERS

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=[COMPARISON_VOCODER, *VOCODERS, PARALLEL_WAVEGAN],
                        choices=[COMPARISON_VOCODER, *VOCODERS, PARALLEL_WAVEGAN])
    parser.add_argument("--limits", nargs="+", type=int, default=[0, 48, 64, 96], help="channel limits; 0 is the baseline")
    parser.add_argument("--frames", type=int, default=862,
                        help=f"mel frames (862: 10 s at hop 256; Parallel WaveGAN at most {PARALLEL_WAVEGAN_FRAMES})")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=12)
    args = parser.parse_args(argv)
    if 0 not in args.limits:
        args.limits = [0, *args.limits]
    with tempfile.TemporaryDirectory() as folder:
        convert(args, Path(folder))
        subprocess.run([sys.executable, __file__, TIME_CHILD, folder], check=True)


if __name__ == "__main__":
    main()
