"""What every benchmark prints about the machine, and how it times and profiles.

Imported by the scripts beside it (run as `python benchmarks/<script>.py`, so this folder
is on sys.path).
"""

import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)

import tensorflow as tf


def usable_cpus():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def machine_report():
    """One line: TensorFlow version, thread settings and load average (other processes slow every figure)."""
    threads = {
        "cpu_count": os.cpu_count(),
        "usable_cpus": usable_cpus(),
        "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads(),  # 0 = TensorFlow's default
        "inter_op_threads": tf.config.threading.get_inter_op_parallelism_threads(),
        "TF_NUM_INTRAOP_THREADS": os.environ.get("TF_NUM_INTRAOP_THREADS"),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "TF_ENABLE_ONEDNN_OPTS": os.environ.get("TF_ENABLE_ONEDNN_OPTS"),
    }
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    devices = [device.device_type for device in tf.config.list_physical_devices()]
    return f"tensorflow {tf.__version__}; devices {devices}; threads: {json.dumps(threads)}; load average {load}"


def timed(function, repeats, budget_seconds):
    """(median, fastest, runs): wall times of `function()` over `repeats` runs (fewer if
    `budget_seconds` runs out). On a shared machine the fastest run is the one least
    disturbed by other processes."""
    times = []
    deadline = time.perf_counter() + budget_seconds
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
        if time.perf_counter() > deadline:
            break
    return statistics.median(times), min(times), len(times)


def matmul_gflops(size=2048, repeats=5):
    """The machine's fp32 speed: GFLOP/s of the fastest of `repeats` size x size TF matmuls."""
    a = tf.random.normal([size, size])
    b = tf.random.normal([size, size])
    matmul = tf.function(lambda: tf.reduce_sum(tf.matmul(a, b)))
    matmul().numpy()  # warm-up
    _, fastest, _ = timed(lambda: matmul().numpy(), repeats, 30)
    return 2 * size**3 / fastest / 1e9


def lite_interpreter(function, input_signature, threads, configure=None):
    """A LiteRT interpreter (XNNPACK where it takes the ops), tensors allocated, for ``function`` traced
    at ``input_signature``; ``configure(converter)`` may set the converter's options first."""
    from ai_edge_litert.interpreter import Interpreter

    traced = tf.function(function, input_signature=input_signature)
    converter = tf.lite.TFLiteConverter.from_concrete_functions([traced.get_concrete_function()], traced)
    if configure is not None:
        configure(converter)
    interpreter = Interpreter(model_content=converter.convert(), num_threads=threads)
    interpreter.allocate_tensors()
    return interpreter


# Profiler op type -> family. Order matters: the first substring that matches wins.
FAMILIES = (
    ("TtsResidualStack", "residual_stack"),  # tensorflow_tts.layers.kernels: a dilated conv and two 1x1 convs
    ("TtsConvKernelGradient", "kernel_gradient"),  # tensorflow_tts.layers.kernels: a conv's dW, all taps
    ("Conv2DBackpropFilter", "conv_grad_filter"),
    ("Conv2DBackpropInput", "conv_grad_input"),
    ("Conv2D", "conv"),
    ("BatchMatMul", "batch_matmul"),
    ("MatMul", "matmul"),
)
GEMM = {family for _, family in FAMILIES}


def family(op_type):
    """The family of a profiler op type: one of ``GEMM`` (the products), else "other"."""
    return next((name for key, name in FAMILIES if key in op_type), "other")


def family_ms(op_ms):
    """``{op type: ms}`` (as `profile_op_types` gives it) summed by `family`."""
    totals = {}
    for op_type, ms in op_ms.items():
        totals[family(op_type)] = totals.get(family(op_type), 0.0) + ms
    return totals


def adam_step(model, loss_of):
    """A tf.function: one Adam step on `loss_of(model, **batch)` (the comparison's training step: the
    harness's optimizer and learning rate)."""
    optimizer = tf.keras.optimizers.Adam(1e-4)

    @tf.function
    def step(**batch):
        with tf.GradientTape() as tape:
            loss = loss_of(model, **batch)
        pairs = [(g, v) for g, v in zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables)
                 if g is not None]
        optimizer.apply_gradients(pairs)
        return loss

    return step


def op_types_of_trace(logdir, runs):
    """Milliseconds per run spent in each TensorFlow op type in the profiler trace under `logdir`."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(next(Path(logdir).rglob("*.xplane.pb")).read_bytes())
    totals = {}
    for plane in space.planes:
        names = {key: value.name for key, value in plane.event_metadata.items()}
        for line in plane.lines:
            if not line.name.startswith("tf_Compute"):  # the executor threads that run the ops
                continue
            for event in line.events:
                name = names.get(event.metadata_id, "")
                if ":" in name:  # "<node name>:<op type>"
                    op_type = name.rsplit(":", 1)[1]
                    if op_type == "Process":  # the executor's whole-function event, not an op
                        continue
                    totals[op_type] = totals.get(op_type, 0.0) + event.duration_ps / 1e9 / runs
    return dict(sorted(totals.items(), key=lambda item: -item[1]))


def profile_op_types(function, runs):
    """Milliseconds per run spent in each TensorFlow op type while `function()` runs `runs` times."""
    logdir = tempfile.mkdtemp(prefix="tts_profile_")
    try:
        tf.profiler.experimental.start(logdir)
        for _ in range(runs):
            function()
        tf.profiler.experimental.stop()
        return op_types_of_trace(logdir, runs)
    finally:
        shutil.rmtree(logdir, ignore_errors=True)


def print_machine():
    """Print the machine line and its fp32 matmul speed; returns (machine line, GFLOP/s)."""
    machine = machine_report()
    print(machine)
    gflops = matmul_gflops()
    print(f"fp32 matmul 2048x2048: {gflops:.1f} GFLOP/s (fastest of 5)", flush=True)
    return machine, gflops


def finish(summary, json_path=None):
    """Print the summary as one JSON line and also write it to `json_path` when given; returns 0."""
    print(json.dumps(summary))
    if json_path:
        Path(json_path).write_text(json.dumps(summary, indent=2) + "\n")
    return 0


class TimeBudget:
    """Trainer mixin (put it first: `class T(TimeBudget, SomeTrainer)`): stops, and saves, at the
    first step that ends after `deadline` (time.monotonic()); `steps_per_second()` is the rate of
    the steps after the first, which also traces and compiles."""

    deadline = float("inf")
    _first_step = None  # (time.monotonic(), steps) when the first step ended
    _last_step = None

    def _after_train_step(self, micro_results, window):
        super()._after_train_step(micro_results, window)
        now = time.monotonic()
        self._last_step = (now, self.steps)
        if self._first_step is None:
            self._first_step = self._last_step
        if now > self.deadline:
            self.config.train_max_steps = self.steps  # fit() reads it at every step: ends the loop

    def steps_per_second(self):
        if self._first_step is None or self._last_step[1] == self._first_step[1]:
            return None
        return (self._last_step[1] - self._first_step[1]) / (self._last_step[0] - self._first_step[0])


def peak_gpu_memory_mib():
    """Peak memory TensorFlow allocated on the first GPU in this process (MiB); None without a GPU."""
    if not tf.config.list_physical_devices("GPU"):
        return None
    return tf.config.experimental.get_memory_info("GPU:0")["peak"] / 2**20
