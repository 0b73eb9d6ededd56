"""What cheaper attention products could give FastSpeech2's fastest path, and at what cost.

The int8 FastSpeech2 file runs its attention's two products (scores and values, both operands
activations) as XNNPACK float32 products: XNNPACK quantizes only products with a constant
operand. Two ways to make them cheaper, measured here (ours against ours):

- ``products``: int8 products of two activations, as TensorFlow Lite's own ``BATCH_MATMUL``
  with int8 inputs and an int32 output (both operands quantized in the graph, symmetric:
  queries and keys per row, probabilities per row, values per column, so every scale factors
  out of the sum). One attention of ``--heads`` x ``--frames`` x ``--head-size`` (the
  decoder's of ``FastSpeech2Config()`` at the comparison's 600 frames by default) is converted
  as a float32 file and as such an int8 file, and both, and the bare products alone, are
  timed by LiteRT in turn. Printed: medians of the per-pair ratios int8 / float32 and the
  int8 output's largest difference, as a fraction of the float32 output's largest magnitude.
- ``locality``: a window on the decoder's attention only serves if the trained attention is
  local. For a trained voice (by default the one `make demo` writes) the script synthesizes
  the distance benchmark's sentences and prints, per sentence and decoder layer, the mean
  share of a frame's attention that lies more than W frames away, for each ``--windows`` W.

    python benchmarks/attention_cost.py                         # both parts, about 1 minute
    python benchmarks/attention_cost.py --parts products --frames 1200 --threads 1
"""

import argparse
from pathlib import Path

import numpy as np

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)

import tensorflow as tf

from alternation import alternated_times, paired_ratios
from measure import finish, lite_interpreter, print_machine
from tensorflow_tts.configs import FastSpeech2Config

REPO = Path(__file__).resolve().parents[1]


def quantized_rows(x, axis):
    """Symmetric int8 values of ``x`` with one scale per slice along ``axis`` -> (int8 values, float32 scales)."""
    scale = tf.maximum(tf.reduce_max(tf.abs(x), axis=axis, keepdims=True) / 127.0, 1e-12)
    return tf.cast(tf.round(x / scale), tf.int8), scale


def int8_product(a, b, adjoint_b=False):
    """int8 (..., M, K) x int8 (..., K, N) (or (..., N, K) with ``adjoint_b``) -> int32, TFLite's BATCH_MATMUL."""
    return tf.raw_ops.BatchMatMulV3(x=a, y=b, Tout=tf.int32, adj_y=adjoint_b)


def float32_attention(query, key, value):
    """(heads, T, head_size) each -> (heads, T, head_size): softmax(q k^T / sqrt(d)) v."""
    scores = tf.matmul(query, key, transpose_b=True) / np.sqrt(query.shape[-1])
    return tf.matmul(tf.nn.softmax(scores, axis=-1), value)


def int8_attention(query, key, value):
    """As ``float32_attention`` with both products in int8 (scales as the module docstring says)."""
    query_q, query_scale = quantized_rows(query, -1)  # (heads, T, 1)
    key_q, key_scale = quantized_rows(key, -1)
    scores = tf.cast(int8_product(query_q, key_q, adjoint_b=True), tf.float32)
    scores *= query_scale * tf.transpose(key_scale, [0, 2, 1]) / np.sqrt(query.shape[-1])
    probabilities_q, probabilities_scale = quantized_rows(tf.nn.softmax(scores, axis=-1), -1)
    value_q, value_scale = quantized_rows(value, -2)  # (heads, 1, head_size)
    return tf.cast(int8_product(probabilities_q, value_q), tf.float32) * probabilities_scale * value_scale


def invoke(interpreter, inputs):
    for detail, array in zip(interpreter.get_input_details(), inputs):
        interpreter.set_tensor(detail["index"], array)
    interpreter.invoke()
    return interpreter.get_tensor(interpreter.get_output_details()[0]["index"])


def ratio_of_times(baseline, candidate, baseline_inputs, candidate_inputs, pairs):
    """Median and quartiles of time(candidate) / time(baseline) over ``pairs`` alternated calls of each."""
    calls = {"baseline": lambda: invoke(baseline, baseline_inputs), "candidate": lambda: invoke(candidate, candidate_inputs)}
    alternated_times(calls, 3)  # warm-up
    times = alternated_times(calls, pairs)
    median, first, third = paired_ratios(times["baseline"], times["candidate"])
    return {"median": round(median, 3), "quartiles": [round(first, 3), round(third, 3)]}


def products(args):
    shape = [args.heads, args.frames, args.head_size]
    rng = np.random.default_rng(0)
    qkv = [rng.normal(size=shape).astype(np.float32) for _ in range(3)]
    specs = [tf.TensorSpec(shape, tf.float32)] * 3
    float_file = lite_interpreter(float32_attention, specs, args.threads)
    int8_file = lite_interpreter(int8_attention, specs, args.threads)
    reference = invoke(float_file, qkv)
    error = float(np.abs(invoke(int8_file, qkv) - reference).max() / np.abs(reference).max())
    whole = ratio_of_times(float_file, int8_file, qkv, qkv, args.pairs)

    scores_specs = [tf.TensorSpec(shape, tf.float32)] * 2
    float_scores = lite_interpreter(lambda a, b: tf.matmul(a, b, transpose_b=True), scores_specs, args.threads)
    int8_specs = [tf.TensorSpec(shape, tf.int8)] * 2
    int8_scores = lite_interpreter(lambda a, b: int8_product(a, b, adjoint_b=True), int8_specs, args.threads)
    int8_qk = [rng.integers(-127, 128, size=shape).astype(np.int8) for _ in range(2)]
    alone = ratio_of_times(float_scores, int8_scores, qkv[:2], int8_qk, args.pairs)
    print(f"attention {shape[0]} heads x {shape[1]} frames x {shape[2]}, {args.threads} threads, {args.pairs} pairs: "
          f"int8 / float32 whole attention {whole['median']} (quartiles {whole['quartiles']}), "
          f"the scores' product alone {alone['median']} ({alone['quartiles']}); "
          f"int8 output's largest difference {error:.3f} of the float32 output's largest magnitude", flush=True)
    return {"shape": shape, "threads": args.threads, "int8_over_float32_attention": whole,
            "int8_over_float32_scores_product": alone, "int8_largest_difference": round(error, 4)}


def recorder(call, recorded):
    """``call`` of an attention layer that also appends its (heads, F, F) probabilities (batch of one) to ``recorded``."""
    def recording_call(*args, return_attention=False, **kwargs):
        outputs, probabilities = call(*args, return_attention=True, **kwargs)
        recorded.append(probabilities.numpy()[0])
        return (outputs, probabilities) if return_attention else outputs
    return recording_call


def locality(args):
    from fast_path_distance import SENTENCES
    from tensorflow_tts.inference import AutoProcessor, TFAutoModel

    acoustic_dir = args.voice / "fastspeech2"
    if not acoustic_dir.exists():
        print(f"{acoustic_dir}: missing; run `make demo` first or pass --voice (locality skipped)", flush=True)
        return None
    processor = AutoProcessor.from_pretrained(args.voice / "processor.json")
    model = TFAutoModel.from_pretrained(acoustic_dir)
    recorded = []
    for block in model.decoder.blocks:  # each block asks its attention for the probabilities
        attention = block.self_attention
        attention.call = recorder(attention.call, recorded)
    tf.config.run_functions_eagerly(True)  # the probabilities as arrays, one sentence at a time
    rows = []
    try:
        for text in SENTENCES:
            ids, _ = processor.encode(text)
            ones = np.ones([1], np.float32)
            del recorded[:]
            model.inference(np.asarray([ids], np.int32), np.zeros([1], np.int32), ones, ones, ones)
            for layer, probabilities in enumerate(recorded):  # (heads, F, F)
                frames = probabilities.shape[-1]
                distance = np.abs(np.arange(frames)[:, None] - np.arange(frames)[None, :])
                beyond = {w: round(float((probabilities * (distance > w)).sum(-1).mean()), 4) for w in args.windows}
                rows.append({"sentence": text[:30], "frames": frames, "layer": layer, "mean_share_beyond": beyond})
                print(f"{text[:30]!r:34} {frames:4d} frames, decoder layer {layer}: mean share of attention beyond "
                      + ", ".join(f"±{w}: {share}" for w, share in beyond.items()), flush=True)
    finally:
        tf.config.run_functions_eagerly(False)
    return {"voice": str(args.voice), "rows": rows}


def main():
    config = FastSpeech2Config()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", nargs="*", default=["products", "locality"], choices=["products", "locality"])
    parser.add_argument("--heads", type=int, default=config.decoder_num_attention_heads)
    parser.add_argument("--frames", type=int, default=600, help="the side-by-side comparison's frames")
    parser.add_argument("--head-size", type=int, default=config.decoder_attention_head_size)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=60)
    parser.add_argument("--voice", type=Path, default=REPO / "demo_output",
                        help="folder with fastspeech2/ and processor.json (what `make demo` writes)")
    parser.add_argument("--windows", type=int, nargs="*", default=[32, 64, 128])
    parser.add_argument("--json", help="also write the summary here")
    args = parser.parse_args()
    print_machine()
    summary = {}
    if "products" in args.parts:
        summary["products"] = products(args)
    if "locality" in args.parts:
        summary["locality"] = locality(args)
    return finish(summary, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
