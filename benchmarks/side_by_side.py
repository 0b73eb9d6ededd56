"""Side by side with TensorFlowTTS 1.8: the shared harness plus the figures it cannot give alone.

`../shared/peers/bench_tts.py` times both packages through the API they share. This script
runs that harness unchanged (imported from the peers folder) with these additions, so that one
`compare.py` run covers every goal of issue 21:

- ``taco2_v1_ms`` beside the harness's Tacotron2 figure. The harness builds
  ``Tacotron2Config()``, whose class defaults (both packages: reduction factor 5, 3 mish
  encoder convs, 5 speakers) decode 600 frames in 120 steps; that is not what the LJSpeech
  recipe trains. Here both also build the published ``tacotron2.v1.yaml`` model (the same
  keys in both packages): 120 ids, stop token pinned to "never", 600 decoder steps of one
  frame.
- ``*_fastest`` figures: our fastest shipped CPU path, the builtin-only TFLite files
  (``TTS_FAST_QUANTIZE``, int8 dynamic range by default) run by LiteRT with XNNPACK, for
  FastSpeech2 inference, the vocoder, end to end (one text2wav file) and both Tacotron2s, on
  the harness's inputs. The files are converted here and timed (the harness's ``bench``) in a
  fresh process that imports no TensorFlow, as a shipped voice runs them: timed in this
  process after its Keras work (and after the child), the Tacotron2 files took 1.20-1.31x as
  long, the text2wav file 1.02-1.29x, FastSpeech2's 0.97-1.01x, the vocoder's 0.95-1.20x (three
  runs, ours against ours). 1.8's fastest path is its Keras model, so its ``*_fastest``
  figures are its Keras ones. How far that path's audio is from fp32 on a trained voice:
  ``fast_path_distance.py``.
- ``taco2_infer_fp32_lite_ms``, ``taco2_v1_fp32_lite_ms``, ``cold_start_fp32_lite_s``: both
  Tacotron2s and the cold start through the same shipped path in float32 (no quantization:
  float32 weights and arithmetic, XNNPACK), for the goals whose figure is asked at fp32
  without naming Keras. 1.8's figures are its Keras ones, as above.
- ``taco2_infer_floor_ms``, ``taco2_v1_floor_ms``: the fp32 floor of both Tacotron2 calls,
  measured in the same run (`roofline.tacotron2_floor`: the bytes its decoder steps read, with
  the memory projection, at the fastest read this machine shows, plus the GEMMs outside the
  loop at its sustained matmul speed). 1.8's figures are its Keras calls, so the ratio printed
  is our floor over 1.8's time: above a goal, fp32 cannot meet it in that run.
- ``fs2_train_fastest_ms``, ``voc_train_fastest_ms``: the harness's two training steps (its own
  step function and Adam, unchanged) with our models built under the trainer's mixed
  precision on a CPU, ``mixed_bfloat16`` (``--mixed_precision 1`` of the training scripts):
  float32 weights and optimizer, bfloat16 matmuls and convs, float32 outputs. Only where the
  CPU multiplies bfloat16 in hardware (AVX512_BF16, AMX); elsewhere, and for 1.8 (whose
  ``--mixed_precision 1`` turns on TensorFlow's float16 graph rewrite, which runs only on a
  GPU), the figure is the float32 one.
- ``fs2_train_bf16_ms``, ``voc_train_bf16_ms``: the same two steps at each side's fastest
  bfloat16, on the same CPUs: ours as ``*_fastest``; 1.8's float32 models under TensorFlow's
  oneDNN bfloat16 graph rewrite (``auto_mixed_precision_onednn_bfloat16``), one line a 1.8
  user can add, though no 1.8 option does (its models fail to build under a ``mixed_bfloat16``
  or ``mixed_float16`` Keras policy). The ratio is bfloat16 against bfloat16, where
  ``*_fastest`` is ours against 1.8 as it ships.
- ``voc_train_forward_ms``: the forward pass of the harness's MB-MelGAN generator step alone, in
  float32 (the same model, seeds, batch and L1 loss, ``training=True``; no tape, no Adam), and
  ``voc_train_rest_ms``, the step's float32 median less this one's: the backward pass with Adam,
  as an estimate from two medians. Together they split the step's ratio against 1.8 into its
  forward pass and the rest, in one run.
- ``cold_start_fastest_s``: the harness's cold start (fresh process to the first audio of
  FastSpeech2 + MB-MelGAN, default sizes, pinned durations, the same ids) through that path:
  the text2wav file is converted once beforehand (what a voice ships as), then each fresh
  process imports our TFLite runner, loads the file and synthesizes, without importing
  TensorFlow (the child fails if it did). 1.8's figure is its Keras cold start.

From the project checkout, with `.venv` installed and the peers set up
(``../shared/peers/setup_peers.sh``):

    python3 ../shared/peers/compare.py --a peer="$PWD/benchmarks/side_by_side.sh peer" \\
        --b ours="$PWD/benchmarks/side_by_side.sh ours" --rounds 3

Arguments after ``--`` go to the harness (``--only fs2_infer,vocoder,e2e,tacotron2``: the
``tacotron2`` workload runs both additions). The peers folder is ``../shared/peers`` beside
the checkout unless ``TTS_PEERS_DIR`` says otherwise.

Where each side's float32 generator step spends its time, by op family (one op at a time, 10
profiled steps; prints one JSON line per side):

    benchmarks/side_by_side.sh peer --profile-voc-train 10 1
    benchmarks/side_by_side.sh ours --profile-voc-train 10 1

The table of benchmarks/README.md ("The latest run") is printed from such a run's JSON:

    python benchmarks/side_by_side.py --table ~/.cache/tts-peers/out/compare_<date>-<time>.json
"""

import time

T_START = time.perf_counter()  # the cold-start child's clock, as the harness's (imports below count)

import argparse  # noqa: E402
import contextlib  # noqa: E402
import functools  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

PEERS = Path(os.environ.get("TTS_PEERS_DIR", Path(__file__).resolve().parents[2] / "shared" / "peers"))
FAST_QUANTIZE = os.environ.get("TTS_FAST_QUANTIZE", "int8")

# tacotron2.v1.yaml's tacotron2_params: keys both packages' Tacotron2Config take.
TACOTRON2_V1 = dict(
    dataset="ljspeech", vocab_size=149, embedding_hidden_size=512, initializer_range=0.02,
    embedding_dropout_prob=0.1, n_speakers=1, n_conv_encoder=5, encoder_conv_filters=512,
    encoder_conv_kernel_sizes=5, encoder_conv_activation="relu", encoder_conv_dropout_rate=0.5,
    encoder_lstm_units=256, reduction_factor=1, n_prenet_layers=2, prenet_units=256,
    prenet_activation="relu", prenet_dropout_rate=0.5, n_lstm_decoder=1, decoder_lstm_units=1024,
    attention_type="lsa", attention_dim=128, attention_filters=32, attention_kernel=31, n_mels=80,
    n_conv_postnet=5, postnet_conv_filters=512, postnet_conv_kernel_sizes=5, postnet_dropout_rate=0.1,
)
# Figures of the fastest path, and the Keras figure each one is compared with.
FASTEST = {
    "fs2_infer_fastest_ms": "fs2_infer_ms",
    "vocoder_fastest_rtf": "vocoder_rtf",
    "e2e_fastest_rtf": "e2e_rtf",
    "taco2_v1_fastest_ms": "taco2_v1_ms",
    "taco2_infer_fastest_ms": "taco2_infer_ms",
}
# Figures of the same shipped path in float32, and the Keras figure each one is compared with.
FLOAT32_LITE = {
    "taco2_v1_fp32_lite_ms": "taco2_v1_ms",
    "taco2_infer_fp32_lite_ms": "taco2_infer_ms",
}
# Tacotron2's fp32 floors, and the Keras figure each one is compared with.
FLOORS = {
    "taco2_v1_floor_ms": "taco2_v1_ms",
    "taco2_infer_floor_ms": "taco2_infer_ms",
}
# Training figures of the fastest path: (harness function, its float32 figure, its details key).
TRAIN_FASTEST = {
    "fs2_train_fastest_ms": ("run_fs2_train", "fs2_train_step_ms", "fs2_train"),
    "voc_train_fastest_ms": ("run_voc_train", "mbmelgan_gen_train_step_ms", "mbmelgan_gen_train"),
}
# Each fastest training figure's bfloat16-against-bfloat16 twin.
TRAIN_BF16 = {"fs2_train_fastest_ms": "fs2_train_bf16_ms", "voc_train_fastest_ms": "voc_train_bf16_ms"}
# TensorFlow's graph rewrite that runs a float32 model's matmuls and convs in bfloat16 on a CPU.
BF16_REWRITE = "auto_mixed_precision_onednn_bfloat16"
# The issue's goals (ours / 1.8), on the figure that carries each one.
GOALS = {"fs2_infer_ms": 0.6, "vocoder_rtf": 0.6, "e2e_rtf": 0.6, "e2e_fastest_rtf": 0.3, "taco2_infer_ms": 0.7,
         "fs2_train_step_ms": 0.75, "mbmelgan_gen_train_step_ms": 0.6, "cold_start_s": 0.35}
# The figures that share another's goal, and that figure, followed until one in GOALS (a figure
# there keeps its own goal: the end to end's fastest path; the floors meet none: they bound).
GOAL_OF = {**FASTEST, **FLOAT32_LITE, **{fastest: keras for fastest, (_, keras, _) in TRAIN_FASTEST.items()},
           **{bf16: fastest for fastest, bf16 in TRAIN_BF16.items()},
           "taco2_v1_ms": "taco2_infer_ms",
           "cold_start_fp32_lite_s": "cold_start_s", "cold_start_fastest_s": "cold_start_s"}
# The README table's rows, in order: (figure, label).
TABLE_ROWS = (
    ("fs2_infer_ms", "FastSpeech2 inference, Keras fp32 (ms)"),
    ("fs2_infer_fastest_ms", "FastSpeech2 inference, fastest path (ms)"),
    ("vocoder_rtf", "MB-MelGAN v1 vocoder RTF, Keras fp32"),
    ("vocoder_rtf_upsample_8_4_2", "MB-MelGAN v1 (upsample 8, 4, 2) RTF"),
    ("vocoder_fastest_rtf", "vocoder, fastest path"),
    ("e2e_rtf", "end to end RTF, Keras fp32"),
    ("e2e_fastest_rtf", "end to end RTF, fastest path"),
    ("taco2_infer_ms", "Tacotron2, class defaults, Keras (ms)"),
    ("taco2_infer_fp32_lite_ms", "Tacotron2, class defaults, float32 TFLite (ms)"),
    ("taco2_infer_floor_ms", "Tacotron2, class defaults, fp32 floor (ms)"),
    ("taco2_infer_fastest_ms", "Tacotron2, class defaults, fastest path (ms)"),
    ("taco2_v1_ms", "Tacotron2 v1 recipe, Keras (ms)"),
    ("taco2_v1_fp32_lite_ms", "Tacotron2 v1 recipe, float32 TFLite (ms)"),
    ("taco2_v1_floor_ms", "Tacotron2 v1 recipe, fp32 floor (ms)"),
    ("taco2_v1_fastest_ms", "Tacotron2 v1 recipe, fastest path (ms)"),
    ("fs2_train_step_ms", "FastSpeech2 train step, 16 x 600, fp32 (ms)"),
    ("fs2_train_fastest_ms", "FastSpeech2 train step, `mixed_bfloat16` (ms)"),
    ("fs2_train_bf16_ms", "FastSpeech2 train step, bfloat16 both (1.8: TF's rewrite) (ms)"),
    ("mbmelgan_gen_train_step_ms", "MB-MelGAN generator step, fp32 (ms)"),
    ("voc_train_forward_ms", "MB-MelGAN generator step: its forward pass alone, fp32 (ms)"),
    ("voc_train_rest_ms", "MB-MelGAN generator step: the rest (step less forward), fp32 (ms)"),
    ("voc_train_fastest_ms", "MB-MelGAN generator step, `mixed_bfloat16` (ms)"),
    ("voc_train_bf16_ms", "MB-MelGAN generator step, bfloat16 both (1.8: TF's rewrite) (ms)"),
    ("cold_start_s", "cold start, Keras (s)"),
    ("cold_start_fp32_lite_s", "cold start, float32 TFLite (s)"),
    ("cold_start_fastest_s", "cold start, fastest path (int8 TFLite) (s)"),
)
TABLE = "--table"
MAKE_COLD_START_FILE = "--make-cold-start-file"
COLD_START_LITE_CHILD = "--cold-start-lite-child"
FASTEST_CHILD = "--fastest-child"
PROFILE_VOC_TRAIN = "--profile-voc-train"


def load_harness():
    spec = importlib.util.spec_from_file_location("bench_tts", PEERS / "bench_tts.py")
    if spec is None or not (PEERS / "bench_tts.py").is_file():
        raise SystemExit(f"{PEERS}/bench_tts.py not found: set TTS_PEERS_DIR to the peers folder")
    harness = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(harness)
    return harness


def build_tacotron2(H, M, params):
    """Tacotron2Config(**params), built by one teacher-forced call, never stopping, capped at 600 frames."""
    np, tf = M["np"], M["tf"]
    from tensorflow_tts.configs import Tacotron2Config
    from tensorflow_tts.models import TFTacotron2

    tf.random.set_seed(H.SEED + 6)
    config = Tacotron2Config(**params)
    model = TFTacotron2(config=config, name="tacotron2")
    model(tf.constant([list(range(1, 10))], tf.int32), tf.constant([9], tf.int32), tf.constant([0], tf.int32),
          tf.zeros([1, 50, config.n_mels]), tf.constant([50], tf.int32), 10, training=True)
    stop = [v for v in model.weights if "stop_projection" in v.name]
    for v in stop:  # bias -20, kernel 0: sigmoid ~ 0, the decoder never stops
        v.assign(np.full(v.shape, -20.0 if len(v.shape) == 1 else 0.0, "float32"))
    steps = H.N_IDS * H.DUR_FRAMES // config.reduction_factor
    model.setup_maximum_iterations(steps)
    ids = np.random.RandomState(H.SEED).randint(1, config.vocab_size, size=(1, H.N_IDS)).astype("int32")
    return model, ids, dict(decoder_steps=steps, stop_vars_pinned=len(stop))


def run_tacotron2_v1(H, M, args, res):
    """``taco2_v1_ms``: the v1 recipe's Tacotron2 (the harness's ``taco2_infer_ms`` is the class defaults')."""
    tf = M["tf"]
    model, ids, info = build_tacotron2(H, M, TACOTRON2_V1)

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([None], tf.int32),
                                  tf.TensorSpec([None], tf.int32)])
    def infer(input_ids, input_lengths, speaker_ids):
        return model.inference(input_ids, input_lengths, speaker_ids)

    inputs = (tf.constant(ids), tf.constant([H.N_IDS]), tf.constant([0]))
    frames = {}

    def once():
        frames["mel"] = int(infer(*inputs)[1].numpy().shape[1])

    median, timing = H.bench(once, 1, max(2, args.repeats // 2))
    res["taco2_v1_ms"] = median * 1e3
    res["params"]["tacotron2_v1"] = H.n_params(model)
    res["details"]["tacotron2_v1"] = dict(info, config="tacotron2.v1.yaml", mel_frames=frames["mel"], **timing)
    return model, ids


def fastest_shipped_path():
    """Our TFLite converter and runner, or None for a package without them (1.8)."""
    try:
        from tensorflow_tts.inference import tflite
    except ImportError:
        return None
    return tflite


def copy_keras_figures(res, figures):
    """1.8's values of our added ``figures`` ({figure: its Keras figure}): the Keras ones, where
    the harness produced them (a failed workload leaves both out)."""
    for figure, keras in figures.items():
        if keras in res:
            res[figure] = res[keras]


def run_fastest(H, M, args, res, tacotron2, tacotron2_ids):
    """The ``*_fastest`` and float32 TFLite figures (see the module's docstring); returns the
    class-defaults Tacotron2 it built (None for 1.8)."""
    tflite = fastest_shipped_path()
    if tflite is None:  # 1.8: its fastest path is its Keras model
        copy_keras_figures(res, {**FASTEST, **FLOAT32_LITE})
        res["details"]["fastest"] = dict(path="keras (no TFLite path in this package)")
        return
    np, tf = M["np"], M["tf"]
    tf.random.set_seed(H.SEED)
    fs2 = H.build_fs2(M)
    H.pin_durations(M, fs2)
    vocoder = H.build_mbmelgan(M)
    text = {name: value.numpy() for name, value in H.fs2_inputs(M).items()}
    frames = int(math.ceil(H.VOCODER_SECONDS * H.SAMPLE_RATE / H.HOP_SIZE))
    mels = np.random.RandomState(H.SEED + 1).randn(1, frames, H.NUM_MELS).astype("float32")
    tacotron2_inputs = dict(input_ids=tacotron2_ids, input_lengths=np.array([H.N_IDS], "int32"),
                            speaker_ids=np.zeros([1], "int32"))
    tacotron2_defaults = build_tacotron2(H, M, {})[0]
    # (figure, a model or an (acoustic, vocoder) pair for one text2wav file, quantization, inputs, audio output)
    cases = (
        ("fs2_infer_fastest_ms", fs2, FAST_QUANTIZE, text, None),
        ("vocoder_fastest_rtf", vocoder, FAST_QUANTIZE, {"mels": mels}, "audio"),
        ("e2e_fastest_rtf", (fs2, vocoder), FAST_QUANTIZE, text, "audio"),
        ("taco2_v1_fastest_ms", tacotron2, FAST_QUANTIZE, tacotron2_inputs, None),
        ("taco2_infer_fastest_ms", tacotron2_defaults, FAST_QUANTIZE, tacotron2_inputs, None),
        ("taco2_v1_fp32_lite_ms", tacotron2, "float32", tacotron2_inputs, None),
        ("taco2_infer_fp32_lite_ms", tacotron2_defaults, "float32", tacotron2_inputs, None),
    )
    with tempfile.TemporaryDirectory() as folder:
        spec = dict(warmup=args.warmup, repeats=args.repeats, quiet=H.QUIET, cases=[])
        for key, model, quantize, inputs, audio in cases:
            flatbuffer = (tflite.convert_text2wav(*model, quantize) if isinstance(model, tuple)
                          else tflite.convert_model(model, quantize))
            Path(folder, f"{key}.tflite").write_bytes(flatbuffer)
            np.savez(Path(folder, f"{key}.npz"), **inputs)
            spec["cases"].append(dict(key=key, audio=audio, quantize=quantize))
        Path(folder, "spec.json").write_text(json.dumps(spec))
        H.log("fastest path: timing the files in a fresh process without TensorFlow")
        subprocess.run([sys.executable, __file__, FASTEST_CHILD, folder, str(args.intra_op_threads)], check=True)
        timed = json.loads(Path(folder, "timed.json").read_text())
    res.update(timed["figures"])
    res["details"]["fastest"] = timed["details"]
    return tacotron2_defaults


def run_floors(H, res, tacotron2s):
    """``*_floor_ms`` of ``tacotron2s`` ({figure: model}), the machine's rates measured now; 1.8's
    figures are its Keras calls (as in `run_fastest`)."""
    if fastest_shipped_path() is None:
        copy_keras_figures(res, FLOORS)
        return
    import roofline  # beside this script

    peak, bandwidth, _, _ = roofline.machine_rates()
    for key, model in tacotron2s.items():
        floor = roofline.tacotron2_floor(model, H.N_IDS, H.N_IDS * H.DUR_FRAMES, peak, bandwidth)
        res[key] = floor["floor_ms"]
        res["details"][key] = dict(floor, matmul_gflops=round(peak), read_gb_per_s=round(bandwidth, 1))


def time_fastest_child(folder, threads):
    """(fresh process) Time each TFLite file of ``run_fastest`` as a shipped voice runs it: LiteRT
    and numpy only, no TensorFlow in the process (its thread pools and heap stay out of the figure)."""
    import numpy as np

    from tensorflow_tts.inference.tflite import TFLiteModel

    H = load_harness()
    spec = json.loads(Path(folder, "spec.json").read_text())
    H.QUIET.update(spec["quiet"])
    figures = {}
    details = dict(path=f"TFLite, LiteRT + XNNPACK, {threads} threads, timed in a fresh process that imports "
                        "no TensorFlow")
    for case in spec["cases"]:
        key, audio = case["key"], case["audio"]
        flatbuffer = Path(folder, f"{key}.tflite").read_bytes()
        inputs = dict(np.load(Path(folder, f"{key}.npz")))
        model = TFLiteModel(flatbuffer, num_threads=threads)
        shapes = {}

        def once():
            shapes.update({name: value.shape for name, value in model(**inputs).items()})

        median, timing = H.bench(once, spec["warmup"], spec["repeats"])
        seconds = shapes[audio][1] / H.SAMPLE_RATE if audio else None
        figures[key] = median / seconds if audio else median * 1e3
        details[key] = dict(output_shapes={k: list(v) for k, v in shapes.items()},
                            quantize=case["quantize"], size_mb=len(flatbuffer) / 2**20, **timing)
        del model
    if "tensorflow" in sys.modules:  # the figures would time a different process than they name
        raise SystemExit("the TFLite path imported TensorFlow: a regression (test_synthesize checks it)")
    Path(folder, "timed.json").write_text(json.dumps(dict(figures=figures, details=details)))


@functools.cache
def native_bfloat16():
    """Whether this CPU multiplies bfloat16 in hardware: our package's check, loaded from its file
    so that 1.8's side, whose ``tensorflow_tts`` is 1.8's, asks the same question."""
    path = Path(__file__).resolve().parents[1] / "tensorflow_tts" / "utils" / "precision.py"
    spec = importlib.util.spec_from_file_location("_our_precision", path)
    precision = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(precision)
    return precision.cpu_has_native_bfloat16()


@contextlib.contextmanager
def fastest_bfloat16(tf, ours):
    """Models built and steps traced inside run at the side's fastest bfloat16; yields how."""
    if ours:
        tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
        try:
            yield "mixed_bfloat16"
        finally:
            tf.keras.mixed_precision.set_global_policy("float32")
    else:
        tf.config.optimizer.set_experimental_options({BF16_REWRITE: True})
        try:
            yield f"float32 models, TensorFlow's {BF16_REWRITE}"
        finally:
            tf.config.optimizer.set_experimental_options({BF16_REWRITE: False})


def with_fastest_training(H, harness_run, fastest, keras, details):
    """The harness's training workload ``harness_run``, then, where the CPU has bfloat16 in
    hardware, the same at each side's fastest bfloat16 (``TRAIN_BF16[fastest]``), which is also
    our ``fastest`` figure; 1.8's ``fastest`` stays its float32 one (see the module's docstring)."""

    def run(M, args, res):
        harness_run(M, args, res)
        res[fastest] = res[keras]
        res["details"][fastest] = dict(policy="float32 (the harness's figure)")
        if not native_bfloat16():
            return
        ours = fastest_shipped_path() is not None
        scratch = dict(details={}, params={})
        try:
            with fastest_bfloat16(M["tf"], ours) as how:
                H.log(f"{details} under {how}")
                harness_run(M, args, scratch)
        except Exception as error:  # a whole comparison run must not end here: the float32 figures stand
            H.log(f"{details} failed at bfloat16 ({type(error).__name__}: {error}); its bfloat16 figure is left out")
            return
        bf16 = TRAIN_BF16[fastest]
        res[bf16] = scratch[keras]
        res["details"][bf16] = dict(policy=how, **scratch["details"][details])
        if ours:
            res[fastest] = res[bf16]
            res["details"][fastest] = res["details"][bf16]

    return run


def voc_train_parts(H, M, name):
    """The harness's generator step's model and loss on its mels and waveform, built as its
    ``run_voc_train`` builds them (the same seeds): ``(model, loss_of)``, where ``loss_of(model)``
    is the L1 loss of the model's output in training mode."""
    np, tf = M["np"], M["tf"]
    tf.random.set_seed(H.SEED + 4)
    model = H.build_mbmelgan(M, name=name)
    rng = np.random.RandomState(H.SEED + 5)
    batch, frames = H.TRAIN_VOC_BATCH, H.TRAIN_VOC_FRAMES
    mels = tf.constant(rng.randn(batch, frames, H.NUM_MELS).astype("float32"))
    wav = tf.constant(np.clip(0.3 * rng.randn(batch, frames * H.HOP_SIZE, 1), -1, 1).astype("float32"))
    return model, lambda m: tf.reduce_mean(tf.abs(wav - m(mels, training=True)))


def run_voc_train_forward(H, M, args, res):
    """``voc_train_forward_ms`` and ``voc_train_rest_ms`` (see the module's docstring), after the
    harness's generator step gave ``mbmelgan_gen_train_step_ms``."""
    model, loss_of = voc_train_parts(H, M, "mb_melgan_train_forward")
    forward = M["tf"].function(lambda: loss_of(model))

    median, timing = H.bench(lambda: forward().numpy(), args.warmup, args.repeats)
    res["voc_train_forward_ms"] = median * 1e3
    res["details"]["voc_train_forward"] = dict(batch=H.TRAIN_VOC_BATCH, mel_frames=H.TRAIN_VOC_FRAMES, **timing)
    if "mbmelgan_gen_train_step_ms" in res:
        res["voc_train_rest_ms"] = res["mbmelgan_gen_train_step_ms"] - res["voc_train_forward_ms"]


def profile_voc_train(runs, inter_op_threads):
    """(own process) Where the harness's float32 generator step spends its time, by op: the step
    (its model, batch, L1 loss and Adam) timed, then profiled over ``runs`` steps with
    ``inter_op_threads`` (1: one op at a time, so each op's time is its own). Prints one JSON line:
    the step's median and milliseconds per step of each product family (`measure.GEMM`: convs,
    their gradients, matmuls) and of every other op type. ``side_by_side.sh peer|ours
    --profile-voc-train 10 1`` gives both packages' (for their shares; a ratio against 1.8 comes
    from a compare.py run)."""
    H = load_harness()
    M = H.load_tf(argparse.Namespace(intra_op_threads=os.cpu_count(), inter_op_threads=inter_op_threads))
    from measure import GEMM, adam_step, family, family_ms, profile_op_types  # beside this script; after load_tf

    step = adam_step(*voc_train_parts(H, M, "mb_melgan_train"))
    median, _ = H.bench(lambda: step().numpy(), 3, 15)
    op_ms = profile_op_types(lambda: step().numpy(), runs)
    by_kind = {kind: ms for kind, ms in family_ms(op_ms).items() if kind in GEMM}  # products by family,
    by_kind.update({op: ms for op, ms in op_ms.items() if family(op) not in GEMM})  # every other op by its type
    total = sum(by_kind.values())
    products = sum(ms for kind, ms in by_kind.items() if kind in GEMM)
    print(json.dumps(dict(step_ms=round(median * 1e3, 2), inter_op_threads=inter_op_threads, op_ms_total=round(total, 2),
                          products_ms=round(products, 2), products_share=round(products / total, 3),
                          op_ms={kind: round(ms, 3) for kind, ms in sorted(by_kind.items(), key=lambda kv: -kv[1])})))


# --------------------------------------------------------------------------- cold start, shipped TFLite path
def make_cold_start_file(path, threads, quantize):
    """(child process) The harness's cold-start models as one text2wav TFLite file, plus its inputs."""
    import numpy as np

    H = load_harness()
    M = H.load_tf(argparse.Namespace(intra_op_threads=threads, inter_op_threads=threads))
    tflite = fastest_shipped_path()
    M["tf"].random.set_seed(H.SEED)
    fs2 = H.build_fs2(M)
    H.pin_durations(M, fs2)
    vocoder = H.build_mbmelgan(M)
    Path(path).write_bytes(tflite.convert_text2wav(fs2, vocoder, quantize))
    np.savez(f"{path}.inputs.npz", **{name: value.numpy() for name, value in H.fs2_inputs(M).items()})


def cold_start_lite_child(path, threads):
    """(fresh process) Import the runner, load the shipped file, synthesize once: the first audio."""
    import numpy as np

    from tensorflow_tts.inference.tflite import TFLiteModel

    inputs = dict(np.load(f"{path}.inputs.npz"))
    audio = TFLiteModel(path, num_threads=threads)(**inputs)["audio"]
    if "tensorflow" in sys.modules:  # the figure would time a different path than it names
        raise SystemExit("the TFLite path imported TensorFlow: a regression (test_synthesize checks it)")
    print("COLD_START_DONE " + json.dumps(dict(
        child_s=time.perf_counter() - T_START, audio_samples=int(audio.shape[1]))), flush=True)


def run_cold_start_lite(H, args, res, key, quantize):
    """``key``: the cold start through a text2wav file of ``quantize``, median of ``--cold-repeats`` fresh
    processes, redone when the CPUs were busy."""
    if fastest_shipped_path() is None:  # 1.8: its fastest path is its Keras model (as in run_fastest)
        res[key] = res["cold_start_s"]
        return
    threads = str(args.intra_op_threads)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, f"text2wav_{quantize}.tflite")
        H.log(f"cold start through the shipped path: converting the text2wav file ({quantize})")
        subprocess.run([sys.executable, __file__, MAKE_COLD_START_FILE, path, threads, quantize], check=True,
                       stdout=subprocess.DEVNULL)
        cmd = [sys.executable, __file__, COLD_START_LITE_CHILD, path, threads]
        walls, discarded = [], 0
        for index in range(args.cold_repeats):
            for attempt in range(H.QUIET["retries"] + 1):
                H.wait_quiet()
                done, child_s, foreign = H.cold_start_once(cmd)
                if foreign is None or foreign <= H.QUIET["max_foreign_load"] or attempt == H.QUIET["retries"]:
                    break
                discarded += 1
            walls.append(done)
            H.log(f"cold start ({quantize} TFLite) {index + 1}/{args.cold_repeats}: {done:.2f} s")
        size_mb = os.path.getsize(path) / 2**20
    res[key] = statistics.median(walls)
    res["details"][key.removesuffix("_s")] = dict(
        samples_s=walls, discarded_samples=discarded, file_size_mb=size_mb,
        note=f"Popen to the first audio of a text2wav TFLite file ({quantize}, LiteRT + XNNPACK, "
             "converted beforehand); the child imports no TensorFlow")


def _figure(value):
    return f"{value:.0f}" if value >= 1000 else f"{value:.1f}" if value >= 100 else f"{value:.4g}"


def markdown_table(compare_json):
    """The README's table of one ``compare.py`` run (its JSON, 1.8 as side a, ours as b): each
    figure's medians, the median ratio ours / 1.8 and each round's, the goal on the figure
    that carries it; a ratio in bold meets its group's goal."""
    rows = {row["metric"]: row for row in json.loads(Path(compare_json).read_text())["rows"]}
    lines = ["| figure | 1.8 | ours | ours / 1.8 | per round | goal |", "|---|---:|---:|---:|---|---|"]
    for figure, label in TABLE_ROWS:
        if figure not in rows:  # a workload the run left out (--only)
            continue
        row = rows[figure]
        carrier = figure
        while carrier not in GOALS and carrier in GOAL_OF:  # taco2_v1_fastest_ms -> taco2_v1_ms -> taco2_infer_ms
            carrier = GOAL_OF[carrier]
        goal = GOALS.get(carrier)
        ratio = f"{row['ratio_median']:.3f}"
        if goal is not None and row["ratio_median"] <= goal:
            ratio = f"**{ratio}**"
        lines.append(f"| {label} | {_figure(row['a_median'])} | {_figure(row['b_median'])} | {ratio} | "
                     + ", ".join(f"{r:.3f}" for r in row["ratios"])
                     + f" | {f'≤ {goal:g}' if figure in GOALS else ''} |")
    return "\n".join(lines)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == TABLE:
        print(markdown_table(sys.argv[2]))
        return 0
    children = {MAKE_COLD_START_FILE: make_cold_start_file, COLD_START_LITE_CHILD: cold_start_lite_child,
                FASTEST_CHILD: time_fastest_child}
    if len(sys.argv) == 4 and sys.argv[1] == PROFILE_VOC_TRAIN:
        return profile_voc_train(int(sys.argv[2]), int(sys.argv[3]))
    if len(sys.argv) >= 4 and sys.argv[1] in children:  # a process started by run_fastest or run_cold_start_lite
        return children[sys.argv[1]](sys.argv[2], int(sys.argv[3]), *sys.argv[4:])
    H = load_harness()
    harness_tacotron2 = H.run_tacotron2
    harness_cold_start = H.run_cold_start

    def cold_start_and_fastest(args, res):
        harness_cold_start(args, res)
        run_cold_start_lite(H, args, res, "cold_start_fastest_s", FAST_QUANTIZE)
        run_cold_start_lite(H, args, res, "cold_start_fp32_lite_s", "float32")

    H.run_cold_start = cold_start_and_fastest

    def tacotron2_and_fastest(M, args, res):
        harness_tacotron2(M, args, res)
        H.log(f"tacotron2 (v1 recipe), then the fastest path ({FAST_QUANTIZE})")
        model, ids = run_tacotron2_v1(H, M, args, res)
        defaults = run_fastest(H, M, args, res, model, ids)
        H.log("tacotron2: the fp32 floors")
        run_floors(H, res, {"taco2_v1_floor_ms": model, "taco2_infer_floor_ms": defaults})

    H.run_tacotron2 = tacotron2_and_fastest
    for fastest, (name, keras, details) in TRAIN_FASTEST.items():
        setattr(H, name, with_fastest_training(H, getattr(H, name), fastest, keras, details))
    voc_train_and_fastest = H.run_voc_train

    def voc_train_and_forward(M, args, res):
        voc_train_and_fastest(M, args, res)
        H.log("voc_train: its forward pass alone (fp32)")
        run_voc_train_forward(H, M, args, res)

    H.run_voc_train = voc_train_and_forward
    H.main()


if __name__ == "__main__":
    sys.exit(main())
