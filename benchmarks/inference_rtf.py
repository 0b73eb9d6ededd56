"""Inference speed on this CPU, batch 1: vocoders, FastSpeech2, end to end, Tacotron2, exported formats.

Models are built from examples/*/conf (random weights: the compute is the same). Every
figure is the median of `--repeats` runs after one warm-up run (fewer if `--budget` seconds
run out):

* vocoders: real-time factor (compute seconds per audio second) on `--seconds` of mel;
* fastspeech2: milliseconds for `--tokens` token ids; its duration predictor is set to
  predict `--frames-per-token` frames for every token, so every run makes the same number
  of frames (120 x 5 = 600 by default);
* end_to_end: FastSpeech2 then MB-MelGAN in one tf.function, as RTF of the audio made;
* tacotron2: milliseconds for `--tacotron2-frames` frames (its stop token is switched off,
  so the decoder runs exactly that many steps);
* exported: SavedModel and TFLite float32/float16/int8 of MB-MelGAN and FastSpeech2, and
  the two chained, with their file sizes (TFLite runs with XNNPACK, one thread per usable CPU).

Keras figures use a tf.function with an input_signature, as `inference/export.py` serves
models. Also printed: the thread settings, the machine's fp32 matmul GFLOP/s (2048 x 2048)
for scale, and the load average, since other processes slow every figure down.

    python benchmarks/inference_rtf.py                        # all parts, about 3 minutes on 2 cores
    python benchmarks/inference_rtf.py --parts vocoders --models mb_melgan_v1 melgan_v1 hifigan_v1
    python benchmarks/inference_rtf.py --parts vocoders --profile 3   # + time per op type
"""

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)

import numpy as np
import tensorflow as tf

from measure import finish, print_machine, profile_op_types, timed, usable_cpus
from tensorflow_tts.configs.registry import model_config_from_yaml, read_yaml
from tensorflow_tts.recipes.vocoder import build_generator, load_recipe

REPO = Path(__file__).resolve().parents[1]
CONF = REPO / "examples"
VOCODERS = {
    "mb_melgan_v1": CONF / "multiband_melgan" / "conf" / "multiband_melgan.v1.yaml",
    "melgan_v1": CONF / "melgan" / "conf" / "melgan.v1.yaml",
    "hifigan_v1": CONF / "hifigan" / "conf" / "hifigan.v1.yaml",
}
FASTSPEECH2 = CONF / "fastspeech2" / "conf" / "fastspeech2.v1.yaml"
TACOTRON2 = CONF / "tacotron2" / "conf" / "tacotron2.v1.yaml"
PARTS = ("vocoders", "fastspeech2", "end_to_end", "tacotron2", "exported")
QUANTIZATIONS = ("float32", "float16", "int8")


class Bench:
    """Runs, prints and records the measurements."""

    def __init__(self, args):
        self.args = args
        self.results = {}

    def measure(self, key, function, unit_seconds=None, extra=None):
        """Warm up, time and print `function`; RTF when `unit_seconds` (audio seconds per run) is given."""
        start = time.perf_counter()
        function()  # trace / allocate + warm-up
        warmup = time.perf_counter() - start
        seconds, fastest, runs = timed(function, self.args.repeats, self.args.budget)
        entry = {"seconds_per_run": round(seconds, 4), "fastest_seconds": round(fastest, 4), "runs": runs,
                 "warmup_seconds": round(warmup, 2)}
        if unit_seconds:
            entry["rtf"] = round(seconds / unit_seconds, 4)
            entry["rtf_fastest"] = round(fastest / unit_seconds, 4)
            entry["audio_seconds"] = round(unit_seconds, 3)
        entry.update(extra or {})
        if unit_seconds:
            figure = f"RTF {entry['rtf']:.4f} (fastest {entry['rtf_fastest']:.4f}; {seconds * 1000:.0f} ms)"
        else:
            figure = f"{seconds * 1000:.1f} ms (fastest {fastest * 1000:.1f})"
        details = ", ".join(f"{name} {value}" for name, value in (extra or {}).items())
        print(f"{key:<38} {figure:<40} median of {runs}, warm-up {warmup:.1f} s{'; ' + details if details else ''}",
              flush=True)
        if self.args.profile:
            entry["op_ms"] = {name: round(ms, 2) for name, ms in profile_op_types(function, self.args.profile).items()}
            top = list(entry["op_ms"].items())[:8]
            print("    per op type (ms/run): " + ", ".join(f"{name} {ms:.1f}" for name, ms in top), flush=True)
        self.results[key] = entry
        return entry


# --------------------------------------------------------------------------- models
def build_vocoder(name, recipe=None):
    """The vocoder of ``VOCODERS[name]`` (or of the recipe file ``recipe``), random weights, built;
    with its sampling rate."""
    recipe = recipe or VOCODERS[name]
    _, model_values, _, vocoder_config = load_recipe(recipe)
    return build_generator(model_values, str(recipe)).build_once(80), vocoder_config.sampling_rate


def build_fastspeech2(frames_per_token):
    """FastSpeech2 v1 whose duration predictor says `frames_per_token` for every token."""
    from tensorflow_tts.models.fastspeech2 import TFFastSpeech2

    model = TFFastSpeech2(model_config_from_yaml(read_yaml(FASTSPEECH2), source=str(FASTSPEECH2)))
    model.build_once()
    # The predictor outputs log(1 + frames): a zero kernel and that bias make it a constant.
    projection = model.duration_predictor.projection
    projection.kernel.assign(tf.zeros_like(projection.kernel))
    projection.bias.assign(tf.fill(projection.bias.shape, float(np.log1p(frames_per_token))))
    return model


def build_tacotron2(frames):
    """Tacotron2 v1 that decodes exactly `frames` frames (stop token never fires)."""
    from tensorflow_tts.models.tacotron2 import TFTacotron2

    model = TFTacotron2(model_config_from_yaml(read_yaml(TACOTRON2), source=str(TACOTRON2)))
    model.build_once()
    stop = model.decoder_cell.stop_projection
    stop.kernel.assign(tf.zeros_like(stop.kernel))
    stop.bias.assign(tf.fill(stop.bias.shape, -1e4))
    model.setup_maximum_iterations(max(1, frames // model.config.reduction_factor))
    return model


def acoustic_inputs(tokens):
    ids = np.random.default_rng(0).integers(1, 140, size=(1, tokens)).astype(np.int32)
    ones = np.ones([1], np.float32)
    return {"input_ids": ids, "speaker_ids": np.zeros([1], np.int32), "speed_ratios": ones,
            "f0_ratios": ones, "energy_ratios": ones, "input_lengths": np.asarray([tokens], np.int32)}


def folder_megabytes(path):
    path = Path(path)
    files = [path] if path.is_file() else [file for file in path.rglob("*") if file.is_file()]
    return round(sum(file.stat().st_size for file in files) / 2**20, 2)


def keras_function(model, jit_compile=False):
    """The model's serving tf.function (batch 1), optionally XLA-compiled."""
    from tensorflow_tts.inference.export import input_signature, serving_function

    function = serving_function(model, batch_size=1)
    if not jit_compile:
        return function, [spec.name for spec in input_signature(model, 1)]
    specs = input_signature(model, 1)
    return tf.function(function.python_function, input_signature=specs, jit_compile=True), [spec.name for spec in specs]


# --------------------------------------------------------------------------- parts
def run_vocoders(bench, args):
    for name in args.models:
        generator, sampling_rate = build_vocoder(name)
        frames = int(round(args.seconds * sampling_rate / generator.hop_size))
        audio_seconds = frames * generator.hop_size / sampling_rate
        mels = tf.random.normal([1, frames, 80])
        extra = {"params_M": round(generator.count_params() / 1e6, 3)}
        for jit in [False, True] if args.jit_compile else [False]:
            function, _ = keras_function(generator, jit)
            bench.measure(f"{name} keras{' xla' if jit else ''}", lambda: function(mels)["audio"].numpy(),
                          audio_seconds, extra)


def run_fastspeech2(bench, args, model):
    inputs = acoustic_inputs(args.tokens)
    for jit in [False, True] if args.jit_compile else [False]:
        function, names = keras_function(model, jit)
        arguments = [inputs[name] for name in names]
        frames = int(function(*arguments)["mel_after"].shape[1])
        bench.measure(f"fastspeech2_v1 keras{' xla' if jit else ''}",
                      lambda: function(*arguments)["mel_after"].numpy(),
                      extra={"tokens": args.tokens, "frames": frames})


def run_end_to_end(bench, args, acoustic, vocoder, sampling_rate):
    from tensorflow_tts.inference.export import input_signature, text2wav_function

    function = text2wav_function(acoustic, vocoder, batch_size=1)
    inputs = acoustic_inputs(args.tokens)
    arguments = [inputs[spec.name] for spec in input_signature(acoustic, 1)]
    samples = int(function(*arguments)["audio"].shape[1])
    bench.measure("fastspeech2+mb_melgan keras", lambda: function(*arguments)["audio"].numpy(),
                  samples / sampling_rate, {"frames": samples // vocoder.hop_size})


def run_tacotron2(bench, args):
    model = build_tacotron2(args.tacotron2_frames)
    function, names = keras_function(model)
    inputs = acoustic_inputs(args.tokens)
    arguments = [inputs[name] for name in names]
    frames = int(function(*arguments)["mel_outputs"].shape[1])
    bench.measure("tacotron2_v1 keras", lambda: function(*arguments)["mel_outputs"].numpy(),
                  extra={"tokens": args.tokens, "frames": frames})


def run_exported(bench, args, acoustic, vocoder, sampling_rate, workdir):
    from tensorflow_tts.inference.export import export_saved_model
    from tensorflow_tts.inference.pretrained import save_model_weights
    from tensorflow_tts.inference.tflite import TFLiteModel, convert_model

    threads = usable_cpus()
    frames = int(round(args.seconds * sampling_rate / vocoder.hop_size))
    mels = np.random.default_rng(0).normal(size=(1, frames, 80)).astype(np.float32)
    audio_seconds = frames * vocoder.hop_size / sampling_rate
    inputs = acoustic_inputs(args.tokens)
    fs2_names = ["input_ids", "speaker_ids", "speed_ratios", "f0_ratios", "energy_ratios"]
    fs2_inputs = {name: inputs[name] for name in fs2_names}
    e2e_samples = args.tokens * args.frames_per_token * vocoder.hop_size

    sizes = {}
    for name, model in (("mb_melgan_v1", vocoder), ("fastspeech2_v1", acoustic)):
        sizes[f"{name} h5"] = folder_megabytes(save_model_weights(model, workdir / f"{name}.h5"))

    # SavedModel: what plain TensorFlow serves.
    loaded = {}
    for name, model in (("mb_melgan_v1", vocoder), ("fastspeech2_v1", acoustic)):
        start = time.perf_counter()
        export_saved_model(model, workdir / f"{name}_savedmodel", sampling_rate=sampling_rate)
        loaded[name] = tf.saved_model.load(str(workdir / f"{name}_savedmodel")).signatures["serving_default"]
        sizes[f"{name} savedmodel"] = folder_megabytes(workdir / f"{name}_savedmodel")
        print(f"  exported {name} SavedModel in {time.perf_counter() - start:.1f} s", flush=True)
    vocode = loaded["mb_melgan_v1"]
    synthesize = loaded["fastspeech2_v1"]
    fs2_tensors = {name: tf.constant(value) for name, value in fs2_inputs.items()}
    bench.measure("mb_melgan_v1 savedmodel", lambda: vocode(mels=tf.constant(mels))["audio"].numpy(), audio_seconds)
    bench.measure("fastspeech2_v1 savedmodel", lambda: synthesize(**fs2_tensors)["mel_after"].numpy())
    bench.measure("fastspeech2+mb_melgan savedmodel",
                  lambda: vocode(mels=synthesize(**fs2_tensors)["mel_after"])["audio"].numpy(),
                  e2e_samples / sampling_rate)

    # TFLite, builtin ops only, XNNPACK.
    for quantize in args.quantizations:
        runners = {}
        for name, model in (("mb_melgan_v1", vocoder), ("fastspeech2_v1", acoustic)):
            start = time.perf_counter()
            path = workdir / f"{name}.{quantize}.tflite"
            path.write_bytes(convert_model(model, quantize=quantize, sampling_rate=sampling_rate))
            sizes[f"{name} tflite {quantize}"] = folder_megabytes(path)
            runners[name] = TFLiteModel(path, num_threads=threads)
            print(f"  converted {name} to TFLite {quantize} in {time.perf_counter() - start:.1f} s", flush=True)
        tflite_vocoder, tflite_fs2 = runners["mb_melgan_v1"], runners["fastspeech2_v1"]
        bench.measure(f"mb_melgan_v1 tflite {quantize}", lambda: tflite_vocoder(mels=mels)["audio"], audio_seconds)
        bench.measure(f"fastspeech2_v1 tflite {quantize}", lambda: tflite_fs2(**fs2_inputs)["mel_after"])
        bench.measure(f"fastspeech2+mb_melgan tflite {quantize}",
                      lambda: tflite_vocoder(mels=tflite_fs2(**fs2_inputs)["mel_after"])["audio"],
                      e2e_samples / sampling_rate)
    for name, megabytes in sizes.items():
        print(f"  size {name:<34} {megabytes:7.2f} MB")
    bench.results["sizes_MB"] = sizes


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="*", default=list(PARTS), choices=PARTS)
    parser.add_argument("--models", nargs="*", default=["mb_melgan_v1"], choices=list(VOCODERS),
                        help="vocoders timed by --parts vocoders (HiFi-GAN v1 takes ~5 s a run)")
    parser.add_argument("--seconds", type=float, default=10.0, help="audio length per vocoder run")
    parser.add_argument("--tokens", type=int, default=120, help="token ids per acoustic-model run")
    parser.add_argument("--frames-per-token", type=int, default=5, help="FastSpeech2's fixed duration")
    parser.add_argument("--tacotron2-frames", type=int, default=600)
    parser.add_argument("--quantizations", nargs="*", default=list(QUANTIZATIONS), choices=QUANTIZATIONS)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per figure (after one warm-up)")
    parser.add_argument("--budget", type=float, default=8.0, help="seconds of timed runs per figure at most")
    parser.add_argument("--jit-compile", action="store_true", help="also time the Keras functions compiled by XLA")
    parser.add_argument("--intra-op-threads", type=int, default=0, help="0: TensorFlow's default (one per core)")
    parser.add_argument("--inter-op-threads", type=int, default=0)
    parser.add_argument("--profile", type=int, default=0, metavar="RUNS",
                        help="after each Keras/SavedModel figure, trace RUNS runs and print ms per op type")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)

    tf.config.threading.set_intra_op_parallelism_threads(args.intra_op_threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.inter_op_threads)
    machine, gflops = print_machine()

    started = time.perf_counter()
    bench = Bench(args)
    if "vocoders" in args.parts:
        run_vocoders(bench, args)
    acoustic = vocoder = None
    if {"fastspeech2", "end_to_end", "exported"} & set(args.parts):
        acoustic = build_fastspeech2(args.frames_per_token)
        vocoder, sampling_rate = build_vocoder("mb_melgan_v1")
    if "fastspeech2" in args.parts:
        run_fastspeech2(bench, args, acoustic)
    if "end_to_end" in args.parts:
        run_end_to_end(bench, args, acoustic, vocoder, sampling_rate)
    if "tacotron2" in args.parts:
        run_tacotron2(bench, args)
    if "exported" in args.parts:
        workdir = Path(tempfile.mkdtemp(prefix="tts_bench_"))
        try:
            run_exported(bench, args, acoustic, vocoder, sampling_rate, workdir)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    load_after = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(f"done in {time.perf_counter() - started:.0f} s; load average {load_after}")
    summary = {"gflops_fp32": round(gflops, 1), "machine": machine, "load_average_after": load_after,
               "results": bench.results}
    return finish(summary, args.json)


if __name__ == "__main__":
    sys.exit(main())
