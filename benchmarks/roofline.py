"""How close each speed figure is to what this machine's arithmetic and memory allow.

For the workloads of the side-by-side comparison with TensorFlowTTS 1.8 (FastSpeech2 v1
inference, 120 ids -> 600 frames; the MB-MelGAN v1 generator on 10 s of mel (upsampling 2, 4, 8
as the comparison's headline figure, or `--upsample-scales 8 4 2`); a FastSpeech2
training step of 16 x 600 frames; an MB-MelGAN generator step of 8 x 32 frames, and that step's
forward pass alone (`voc_train_forward`: the same model and batch, no tape, no optimizer);
Tacotron2 v1, 600 frames) it prints:

- FLOPs per call, counted from the traced graph (every MatMul, BatchMatMul, Conv2D and conv
  gradient, the compiled residual-stack kernel's convs and the compiled kernel gradient's
  products, with their static shapes; the forward passes are traced at the frame count they
  run at);
- time per op family from a TensorFlow profiler trace of the real call, and the GFLOP/s each
  family reaches as a share of this machine's sustained fp32 matmul speed (2048^2, both cores);
- the floor: the time the GEMM-like FLOPs need at that speed if nothing else ran; for
  Tacotron2 the decoder reads its weights once per step, so its floor is the bytes a step
  reads (`decoder_step_bytes`: with the memory projection of free-running synthesis) times the
  steps over the bandwidth (the faster of two reads: TensorFlow summing a 512 MB array, and
  LiteRT's one-row float32 matmul over 75.5 MB of weights, as the float32 Tacotron2 file's
  decoder reads them), plus the GEMM FLOPs outside the loop (encoder, the projection, postnet)
  at the matmul speed. Beside it, the floor of the same model's loop without the projection
  (every decoder weight each step, as 1.8's decoder reads them) and the ratio of the two
  floors: the best ratio to 1.8 fp32 could give if both ran at their floors;
- how much the ops overlapped: their summed time over the median wall time. With TensorFlow's
  default inter-op threads (one per core) independent ops run side by side and share the
  cores, so each op's time includes its waits and the rates above understate its kernel (the
  MB-MelGAN generator step's ops overlapped 1.65-1.75x). `--inter-op-threads 1` runs one op at a
  time: the rates are then the kernels' own, the median that of serial execution;
- how busy the cores were during the timed runs: the process's CPU time over their wall time
  (threads of TensorFlow's pools that spin briefly while waiting for work count as busy). Near
  the number of cores, a shorter call needs less work, not fewer idle moments.

A figure whose floor is above the time asked of it (a ratio to 1.8's time measured by
`../shared/peers/compare.py`) cannot be met at fp32; see benchmarks/README.md.

    python benchmarks/roofline.py                      # all workloads
    python benchmarks/roofline.py --workloads fs2_infer vocoder --repeats 5
    python benchmarks/roofline.py --workloads --lite-gemm   # the machine's rates only, LiteRT's too
    python benchmarks/roofline.py --workloads voc_train --inter-op-threads 1   # each op's own rate
"""

import argparse
import math
import time

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)

import numpy as np
import tensorflow as tf

from inference_rtf import acoustic_inputs, build_fastspeech2, build_tacotron2
from measure import (GEMM, adam_step, family, family_ms, finish, lite_interpreter, machine_report, matmul_gflops,
                     profile_op_types, timed, usable_cpus)

WORKLOADS = ("fs2_infer", "vocoder", "fs2_train", "voc_train", "voc_train_forward", "tacotron2")


def _size(shape):
    return math.prod(int(size) for size in shape)


def op_flops(op):
    """FLOPs of one GEMM-like graph op from its static shapes (0 for other ops, None if unknown)."""
    kind = family(op.type)
    if kind == "other":
        return 0
    try:
        if kind == "matmul":
            a = op.inputs[0].shape
            return 2 * _size(op.outputs[0].shape) * int(a[0] if op.get_attr("transpose_a") else a[1])
        if kind == "batch_matmul":
            a = op.inputs[0].shape
            return 2 * _size(op.outputs[0].shape) * int(a[-2] if op.get_attr("adj_x") else a[-1])
        if kind == "residual_stack":  # x (B, T, C), dilated kernel (K, C, C); then C x C twice
            return 2 * _size(op.outputs[0].shape) * int(op.inputs[1].shape[1]) * (int(op.inputs[1].shape[0]) + 2)
        if kind == "kernel_gradient":  # x_padded (B, T', C_in), dy (B, T, C_out); the forward conv's MACs
            return 2 * _size(op.inputs[1].shape) * int(op.inputs[0].shape[2]) * op.get_attr("taps")
        if kind == "conv":  # input, filter (kh, kw, cin, cout)
            return 2 * _size(op.outputs[0].shape) * _size(op.inputs[1].shape[:3])
        # gradients: (input or filter sizes, filter or input, out_backprop); the same MACs as the forward conv
        out_backprop = op.inputs[2].shape
        filter_shape = op.outputs[0].shape if kind == "conv_grad_filter" else op.inputs[1].shape
        return 2 * _size(out_backprop) * _size(filter_shape[:3])
    except (TypeError, ValueError):  # a dimension unknown at trace time
        return None


def graph_flops(concrete_function):
    """GEMM FLOPs per family in a traced function (and the functions it calls, e.g. while loops' bodies)."""
    totals, unknown = {}, 0
    graphs = [concrete_function.graph]
    seen = set()
    while graphs:
        graph = graphs.pop()
        for op in graph.get_operations():
            flops = op_flops(op)
            if flops is None:
                unknown += 1
            elif flops:
                totals[family(op.type)] = totals.get(family(op.type), 0) + flops
            for attr in ("body", "then_branch", "else_branch", "f"):
                try:
                    name = op.get_attr(attr).name
                except (ValueError, AttributeError):
                    continue
                if name not in seen and name in graph._functions:  # noqa: SLF001 (the FuncGraph's library)
                    seen.add(name)
                    graphs.append(graph._functions[name].graph)  # noqa: SLF001
    return totals, unknown


# --------------------------------------------------------------------------- the machine
def read_bandwidth(repeats):
    """GB/s of summing a 512 MB float32 array (one read pass), fastest run."""
    x = tf.random.uniform([128 * 2**20])
    total = tf.function(lambda: tf.reduce_sum(x))
    total().numpy()
    _, fastest, _ = timed(lambda: total().numpy(), repeats, 60)
    return x.shape[0] * 4 / fastest / 1e9


LITE_GEMM = (600, 1536, 1536)  # (M, K, N): FastSpeech2 v1's 600 frames through an FFT block's conv width
LITE_QUANTIZATIONS = ("float32", "int8 dynamic range", "int8 full")


LITE_READ = (4096, 4608)  # (K, N): a one-row float32 matmul over 75.5 MB of weights, Tacotron2's decoder per step


def _lite_fastest_invoke(weights, inputs, quantization, repeats, threads):
    """Fastest seconds of LiteRT + XNNPACK running ``inputs @ weights`` converted with ``quantization``."""
    rng = np.random.default_rng(1)

    def configure(converter):
        if quantization != "float32":
            converter.optimizations = [tf.lite.Optimize.DEFAULT]
        if quantization == "int8 full":
            converter.representative_dataset = lambda: ([rng.standard_normal(inputs.shape, dtype=np.float32)] for _ in range(4))
            converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]

    interpreter = lite_interpreter(lambda x: tf.matmul(x, weights), [tf.TensorSpec(inputs.shape, tf.float32)], threads, configure)
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], inputs)
    interpreter.invoke()  # warm-up
    _, fastest, _ = timed(interpreter.invoke, repeats, 30)
    return fastest


def lite_gemm_rates(repeats, threads=2):
    """GOP/s of one (M, K) x (K, N) matmul run by LiteRT + XNNPACK, fastest run, per quantization.

    The fastest shipped path's best arithmetic: "int8 dynamic range" is what our TFLite export's
    int8 does (int8 weights, activations quantized per call); "int8 full" (int8 activations too,
    calibrated on random inputs) is the most int8 can give.
    """
    rows, depth, columns = LITE_GEMM
    rng = np.random.default_rng(0)
    weights = tf.constant(rng.standard_normal((depth, columns), dtype=np.float32) * 0.02)
    inputs = rng.standard_normal((rows, depth), dtype=np.float32)
    return {quantization: 2 * rows * depth * columns / _lite_fastest_invoke(weights, inputs, quantization, repeats, threads) / 1e9
            for quantization in LITE_QUANTIZATIONS}


def lite_read_bandwidth(repeats, threads=2):
    """GB/s at which LiteRT + XNNPACK's one-row float32 matmul reads 75.5 MB of weights, fastest run: how
    fast the float32 Tacotron2 file's decoder can read its weights. On some CPUs (an Intel Xeon with
    AMX) TensorFlow's single reduction, `read_bandwidth`, reads slower than this."""
    depth, columns = LITE_READ
    rng = np.random.default_rng(2)
    weights = tf.constant(rng.standard_normal((depth, columns), dtype=np.float32))
    inputs = rng.standard_normal((1, depth), dtype=np.float32)
    return depth * columns * 4 / _lite_fastest_invoke(weights, inputs, "float32", repeats, threads) / 1e9


# --------------------------------------------------------------------------- workloads
def decoder_step_bytes(model, tokens, projected=True):
    """Bytes one batch-1 Tacotron2 decoder step reads over ``tokens`` of memory: every decoder weight,
    the attention keys and the values (for the context); with the memory projection of free-running
    synthesis (`layers.tacotron2.MemoryProjection`) the context's weight rows and the values give way
    to the projected memory, ``tokens`` rows of the same widths."""
    config = model.config
    weights = sum(_size(v.shape) * v.dtype.size for v in model.decoder_cell.trainable_variables)
    memory = config.encoder_output_size  # E: the values' width
    if not projected or tokens >= memory:  # the Keras call projects below E tokens (a batch-1 file at any length)
        return weights + 4 * tokens * (config.attention_dim + memory)
    # The products the projection takes over, read from the cell's own projection (batch 1: (N, T)).
    projection = model.decoder_cell.project_memory(tf.zeros([1, 1, memory]))
    widths = projection.attention_memory.shape[0] + projection.decoder_memory.shape[0]
    return weights - 4 * memory * widths + 4 * tokens * (config.attention_dim + widths)


def outside_decoder_loop(model, tokens, frames):
    """A concrete function of what Tacotron2's synthesis computes once, outside the decoder loop, at
    static shapes: the encoder, the attention keys, the memory projection and the postnet over
    ``frames``. (The encoder's LSTM runs in a loop of its own: `graph_flops` counts its step once.)"""
    config = model.config

    def outside(input_ids, input_lengths, speaker_ids, decoder_output):
        _, values, _ = model._encode(input_ids, input_lengths, speaker_ids, training=False)  # noqa: SLF001
        return model.decoder_cell.project_memory(values), model._postnet(decoder_output, None, training=False)  # noqa: SLF001

    return tf.function(outside).get_concrete_function(
        tf.TensorSpec([1, tokens], tf.int32), tf.TensorSpec([1], tf.int32), tf.TensorSpec([1], tf.int32),
        tf.TensorSpec([1, frames, config.n_mels], tf.float32))


def _fs2_train_inputs(batch, tokens, frames, vocab_size):
    rng = np.random.default_rng(3)
    durations = np.full([batch, tokens], frames // tokens, np.int32)
    durations[:, -1] += frames - durations.sum(axis=1)
    return dict(
        input_ids=tf.constant(rng.integers(1, vocab_size, size=(batch, tokens)).astype(np.int32)),
        speaker_ids=tf.zeros([batch], tf.int32),
        duration_gts=tf.constant(durations),
        f0_gts=tf.constant(rng.standard_normal((batch, tokens)).astype(np.float32)),
        energy_gts=tf.constant(rng.standard_normal((batch, tokens)).astype(np.float32)),
        mel_gts=tf.constant(rng.standard_normal((batch, frames, 80)).astype(np.float32)),
    )


def fs2_loss(model, input_ids, speaker_ids, duration_gts, f0_gts, energy_gts, mel_gts):
    mel_before, mel_after, durations, f0, energy = model(
        input_ids, speaker_ids, duration_gts, f0_gts, energy_gts, training=True, num_frames=mel_gts.shape[1])[:5]
    log_durations = tf.math.log(tf.cast(duration_gts, tf.float32) + 1.0)
    return (tf.reduce_mean(tf.abs(mel_gts - mel_before)) + tf.reduce_mean(tf.abs(mel_gts - mel_after))
            + tf.reduce_mean(tf.square(log_durations - durations)) + tf.reduce_mean(tf.square(f0_gts - f0))
            + tf.reduce_mean(tf.square(energy_gts - energy)))


def build_mb_melgan(upsample_scales):
    """MB-MelGAN v1 (filters 384, 4 stacks, 4 sub-bands) with the given upsampling order, built."""
    from tensorflow_tts.configs import MultiBandMelGANGeneratorConfig
    from tensorflow_tts.models import TFMBMelGANGenerator

    config = MultiBandMelGANGeneratorConfig(out_channels=4, filters=384, upsample_scales=list(upsample_scales),
                                            stacks=4, is_weight_norm=False, subbands=4)
    return TFMBMelGANGenerator(config).build_once(80)


def workload(name, args):
    """-> (run: () -> None, counted: a concrete function whose graph has the same GEMMs with static shapes, extra)."""
    if name == "fs2_infer":
        model = build_fastspeech2(5)
        inputs = acoustic_inputs(120)
        names = ("input_ids", "speaker_ids", "speed_ratios", "f0_ratios", "energy_ratios")
        args = [tf.constant(inputs[key]) for key in names]
        batch = _fs2_train_inputs(1, 120, 600, model.config.vocab_size)
        forward = tf.function(lambda **b: model(b["input_ids"], b["speaker_ids"], b["duration_gts"], b["f0_gts"],
                                                b["energy_gts"], training=False, num_frames=600))
        return lambda: model.inference(*args)[1].numpy(), forward.get_concrete_function(**batch), {}
    if name == "vocoder":
        model = build_mb_melgan(args.upsample_scales)
        frames = math.ceil(10.0 * 22050 / 256)
        mel = tf.random.normal([1, frames, 80], seed=1)
        function = tf.function(lambda m: model.inference(m))
        return lambda: function(mel).numpy(), function.get_concrete_function(mel), {"mel_frames": frames}
    if name == "fs2_train":
        model = build_fastspeech2(5)
        batch = _fs2_train_inputs(16, 120, 600, model.config.vocab_size)
        step = adam_step(model, fs2_loss)
        return lambda: step(**batch).numpy(), step.get_concrete_function(**batch), {"batch": "16 x 600 frames"}
    if name in ("voc_train", "voc_train_forward"):
        model = build_mb_melgan(args.upsample_scales)
        mels = tf.random.normal([8, 32, 80], seed=2)
        waves = tf.random.uniform([8, 32 * 256, 1], -0.5, 0.5, seed=3)

        def loss(m, mels, waves):
            return tf.reduce_mean(tf.abs(waves - m(mels, training=True)))

        step = adam_step(model, loss) if name == "voc_train" else tf.function(lambda **b: loss(model, **b))
        return (lambda: step(mels=mels, waves=waves).numpy(), step.get_concrete_function(mels=mels, waves=waves),
                {"batch": "8 x 32 frames"})
    if name == "tacotron2":
        tokens, frames = 120, 600
        model = build_tacotron2(frames)
        inputs = acoustic_inputs(tokens)
        args = [tf.constant(inputs[key]) for key in ("input_ids", "input_lengths", "speaker_ids")]
        function = tf.function(lambda *a: model.inference(*a))
        return lambda: function(*args)[1].numpy(), outside_decoder_loop(model, tokens, frames), \
            decoder_reads(model, tokens, frames)
    raise ValueError(name)


def decoder_reads(model, tokens, frames):
    """Tacotron2's synthesis of ``frames`` over ``tokens``: its decoder steps and the bytes each reads,
    with the memory projection and without (`decoder_step_bytes`)."""
    return {"decoder_steps": frames // model.config.reduction_factor,
            "bytes_per_step": decoder_step_bytes(model, tokens),
            "bytes_per_step_in_loop": decoder_step_bytes(model, tokens, projected=False)}


def decoder_floor(extra, counted, peak_gflops, bandwidth, seconds=None):
    """The floor of a memory-bound decoder's call: its steps' bytes (``extra``, `decoder_reads`) at
    ``bandwidth`` (GB/s) plus the GEMM FLOPs of ``counted`` (what runs outside the loop) at
    ``peak_gflops``; the same with the loop's reads without the memory projection; given the
    median call's ``seconds``, the read speed it reached and the floor's share of it."""
    flops, unknown = graph_flops(counted)
    outside_ms = sum(flops.values()) / peak_gflops / 1e6

    def floor_ms(bytes_per_step):
        return extra["decoder_steps"] * bytes_per_step / bandwidth / 1e6 + outside_ms

    bytes_read = extra["decoder_steps"] * extra["bytes_per_step"]
    floor, in_loop = floor_ms(extra["bytes_per_step"]), floor_ms(extra["bytes_per_step_in_loop"])
    entry = dict(bytes_read_gb=round(bytes_read / 1e9, 2), gflop_outside_loop=round(sum(flops.values()) / 1e9, 2),
                 unknown_shape_ops=unknown, floor_ms=round(floor, 1), floor_in_loop_ms=round(in_loop, 1),
                 floor_ratio=round(floor / in_loop, 3))
    if seconds is not None:
        entry.update(achieved_gb_per_s=round(bytes_read / seconds / 1e9, 1),
                     floor_share_of_median=round(floor / (seconds * 1e3), 3))
    return entry


def tacotron2_floor(model, tokens, frames, peak_gflops, bandwidth):
    """`decoder_floor` of ``model``'s synthesis (batch 1): its reads (`decoder_reads`) and floors."""
    extra = decoder_reads(model, tokens, frames)
    return dict(extra, **decoder_floor(extra, outside_decoder_loop(model, tokens, frames), peak_gflops, bandwidth))


def machine_rates():
    """(sustained fp32 matmul GFLOP/s, the fastest read in GB/s, TensorFlow's read, LiteRT's read):
    the floors take the fastest read this machine showed."""
    peak, tf_read, lite_read = matmul_gflops(), read_bandwidth(5), lite_read_bandwidth(20)
    return peak, max(tf_read, lite_read), tf_read, lite_read


def report(name, args, peak_gflops, bandwidth):
    run, counted, extra = workload(name, args)
    run()  # trace and warm up
    cpu_start, wall_start = time.process_time(), time.perf_counter()
    seconds, _, _ = timed(run, args.repeats, 600)
    cpu_busy = (time.process_time() - cpu_start) / (time.perf_counter() - wall_start)
    op_ms = profile_op_types(run, args.profile_runs)
    ms_by_family = family_ms(op_ms)
    entry = {"median_ms": round(seconds * 1e3, 1), "cpu_busy": round(cpu_busy, 2), **extra}
    lines = [f"{name}: median {seconds * 1e3:.1f} ms, {cpu_busy:.2f} of {usable_cpus()} cores busy"]
    if "decoder_steps" in extra:  # Tacotron2: the decoder's reads, plus the GEMMs outside its loop
        entry.update(decoder_floor(extra, counted, peak_gflops, bandwidth, seconds))
        lines[0] += (f"; decoder {extra['bytes_per_step'] / 1e6:.1f} MB x {extra['decoder_steps']} steps at "
                     f"{bandwidth:.1f} GB/s + {entry['gflop_outside_loop']:.2f} GFLOP outside the loop at "
                     f"{peak_gflops:.0f} GFLOP/s -> floor {entry['floor_ms']:.0f} ms (reaches "
                     f"{entry['achieved_gb_per_s']:.1f} GB/s); in the loop (1.8's reads, "
                     f"{extra['bytes_per_step_in_loop'] / 1e6:.1f} MB a step) {entry['floor_in_loop_ms']:.0f} ms: "
                     f"floors' ratio {entry['floor_ratio']:.3f}")
    elif counted is not None:
        flops, unknown = graph_flops(counted)
        total = sum(flops.values())
        floor_ms = total / peak_gflops / 1e6
        entry.update(gflop=round(total / 1e9, 2), unknown_shape_ops=unknown, floor_ms=round(floor_ms, 1),
                     floor_share_of_median=round(floor_ms / (seconds * 1e3), 3), families={})
        lines[0] += f"; {total / 1e9:.2f} GFLOP in GEMM-like ops -> floor {floor_ms:.1f} ms at {peak_gflops:.0f} GFLOP/s"
        for kind in sorted(set(flops) | (set(ms_by_family) & GEMM)):
            ms = ms_by_family.get(kind, 0.0)
            rate = flops.get(kind, 0) / ms / 1e6 if ms else 0.0
            entry["families"][kind] = {"gflop": round(flops.get(kind, 0) / 1e9, 2), "ms": round(ms, 1),
                                       "gflops_per_s": round(rate), "share_of_peak": round(rate / peak_gflops, 2)}
            lines.append(f"    {kind:<18} {flops.get(kind, 0) / 1e9:7.2f} GFLOP {ms:8.1f} ms  {rate:6.0f} GFLOP/s "
                         f"({100 * rate / peak_gflops:3.0f} % of peak)")
    other = {family_: ms for family_, ms in ms_by_family.items() if family_ not in GEMM}
    entry["other_ops_ms"] = round(sum(other.values()), 1)
    entry["op_overlap"] = round(sum(op_ms.values()) / (seconds * 1e3), 2)
    lines[0] += f"; ops overlapped {entry['op_overlap']:.2f}x"
    top = sorted(((ms, op) for op, ms in op_ms.items() if family(op) == "other"), reverse=True)[:6]
    lines.append(f"    other ops {entry['other_ops_ms']:.1f} ms: " + ", ".join(f"{op} {ms:.1f}" for ms, op in top))
    print("\n".join(lines), flush=True)
    return entry


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workloads", nargs="*", default=list(WORKLOADS), choices=WORKLOADS)
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per workload (median)")
    parser.add_argument("--profile-runs", type=int, default=2, help="runs traced by the profiler")
    parser.add_argument("--upsample-scales", type=int, nargs=3, default=[2, 4, 8],
                        help="MB-MelGAN's upsampling order (the comparison's headline figure uses 2 4 8; our v1 recipe 8 4 2)")
    parser.add_argument("--lite-gemm", action="store_true",
                        help="also the GEMM speed of the fastest path (LiteRT + XNNPACK: float32, int8 dynamic range, int8 full)")
    parser.add_argument("--inter-op-threads", type=int, default=0,
                        help="0: TensorFlow's default (one per core, as the comparison runs); 1: one op at a time")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    tf.config.threading.set_inter_op_parallelism_threads(args.inter_op_threads)
    print(machine_report())
    peak, bandwidth, tf_read, lite_read = machine_rates()
    print(f"sustained fp32 matmul 2048^2: {peak:.0f} GFLOP/s; read bandwidth {tf_read:.1f} GB/s (TensorFlow sum "
          f"over 512 MB), {lite_read:.1f} GB/s (LiteRT one-row matmul over 75.5 MB)", flush=True)
    summary = {"matmul_gflops": round(peak), "read_gb_per_s": round(tf_read, 1), "lite_read_gb_per_s": round(lite_read, 1)}
    if args.lite_gemm:
        summary["lite_gemm_gops"] = {name: round(rate) for name, rate in lite_gemm_rates(30).items()}
        shape = " x ".join(map(str, LITE_GEMM))
        print(f"LiteRT + XNNPACK matmul {shape}, GOP/s: "
              + ", ".join(f"{name} {rate}" for name, rate in summary["lite_gemm_gops"].items()), flush=True)
    summary["results"] = {name: report(name, args, peak, bandwidth) for name in args.workloads}
    return finish(summary, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
