"""TFLite export: builtin ops only, dynamic time axis, float32/float16/int8, one text2wav model.

Every model is converted once per session (conversion is the slow part) and compared with
its Keras model in the ai-edge-litert interpreter (XNNPACK, the default delegate).

float16 and int8 are checked end to end on the text2wav model (FastSpeech2 + MB-MelGAN), so
one conversion covers an acoustic model and a vocoder. Measured on the tiny random-weight
models: see TOLERANCE.
"""

import numpy as np
import pytest

import tensorflow_tts  # noqa: F401  (before tensorflow: tf.keras is Keras 2)
import tensorflow as tf  # noqa: E402

from tensorflow_tts.configs import MultiBandMelGANGeneratorConfig  # noqa: E402
from tensorflow_tts.inference.export import serving_function  # noqa: E402
from tensorflow_tts.inference.tflite import (  # noqa: E402
    TFLiteExportError,
    TFLiteModel,
    _convert,
    _read_model,
    convert_model,
    add_metadata,
    reference_kernel_ops,
    make_converter,
    operator_names,
    read_metadata,
)
from tensorflow_tts.models import TFMBMelGANGenerator  # noqa: E402
from test_export import (  # noqa: E402
    NUM_MELS,
    fastspeech2_inputs,
    keras_mels,
    shared_models,
    shared_tflite,
    tiny_vocoder,
    token_batches,
)

# Max abs difference to Keras. Measured: float32 ~1e-6 (mels and audio), float16 ~3e-4 and
# dynamic-range int8 ~1.4e-3 on text2wav audio peaking at ~0.6 (durations identical).
TOLERANCE = {"float32": 1e-4, "float16": 2e-3, "int8": 1e-2}
VOCODERS = ("melgan_generator", "multiband_melgan_generator", "hifigan_generator")


@pytest.fixture(scope="module")
def keras_models():
    return shared_models()


class Converted(dict):
    """(model name, quantization) -> flatbuffer, converted on first use (shared with other test files)."""

    def __missing__(self, key):
        return shared_tflite(*key)


@pytest.fixture(scope="module")
def converted():
    return Converted()


def acoustic_inputs(model_name, ids):
    inputs = fastspeech2_inputs(ids)
    if model_name == "fastspeech":
        del inputs["f0_ratios"], inputs["energy_ratios"]
    return inputs


@pytest.mark.parametrize("quantize", ["float32", "float16", "int8"])
def test_converter_gets_builtin_ops_only(keras_models, quantize):
    converter = make_converter(serving_function(keras_models["hifigan_generator"], batch_size=1), quantize=quantize)
    assert set(converter.target_spec.supported_ops) == {tf.lite.OpsSet.TFLITE_BUILTINS}
    assert tf.lite.OpsSet.SELECT_TF_OPS not in converter.target_spec.supported_ops
    assert not converter.allow_custom_ops


def test_converted_models_hold_no_flex_or_custom_op(converted):
    from tensorflow.lite.python import schema_py_generated as schema

    builtin_names = {name for name in vars(schema.BuiltinOperator) if not name.startswith("_")}
    for key in [(name, "float32") for name in ("fastspeech2", "fastspeech") + VOCODERS] + [
        ("text2wav", "float32"), ("text2wav", "float16"), ("text2wav", "int8")
    ]:
        names = operator_names(converted[key])
        assert names and set(names) <= builtin_names - {"CUSTOM"}, (key, names)


def test_vocoders_keep_slices_reshapes_and_pads_on_xnnpack(converted):
    # A reshape, slice or pad whose parameters follow the input's length, or a slice that
    # adds or drops an axis, leaves XNNPACK for TFLite's own kernels (a single-threaded
    # strided slice took 15.7 % of the MB-MelGAN int8 file's CPU samples; 36 axis slices in
    # its residual blocks made it 6x slower). A vocoder's lengths follow from the mel's: none is needed.
    for name in VOCODERS:
        assert reference_kernel_ops(converted[name, "float32"]) == {}, name
    # The check itself sees such ops: the acoustic models' length regulator needs them.
    assert reference_kernel_ops(converted["fastspeech2", "float32"])


@pytest.mark.parametrize("name", ["fastspeech2", "fastspeech"])
def test_float32_acoustic_matches_keras_on_10_lengths(keras_models, converted, name):
    tflite = TFLiteModel(converted[(name, "float32")])
    assert tflite.input_shape("input_ids") == [1, -1]  # one model, any length
    worst = 0.0
    for ids in token_batches(10):
        inputs = acoustic_inputs(name, ids)
        expected = keras_mels(keras_models[name], inputs)
        mels = tflite(**inputs)["mel_after"]
        assert mels.shape == expected.shape
        worst = max(worst, np.abs(mels - expected).max())
    print(f"{name} float32 TFLite vs Keras: {worst:.2e}")
    assert worst < TOLERANCE["float32"]


@pytest.mark.parametrize("name", VOCODERS)
def test_float32_vocoder_matches_keras_on_10_lengths(keras_models, converted, name):
    tflite = TFLiteModel(converted[(name, "float32")])
    assert tflite.input_shape("mels") == [1, -1, NUM_MELS]
    rng = np.random.default_rng(3)
    worst = 0.0
    for frames in range(3, 33, 3):
        mels = rng.normal(size=[1, frames, NUM_MELS]).astype(np.float32)
        expected = keras_models[name](mels).numpy()
        audio = tflite(mels=mels)["audio"]
        assert audio.shape == expected.shape
        worst = max(worst, np.abs(audio - expected).max())
    print(f"{name} float32 TFLite vs Keras: {worst:.2e}")
    assert worst < TOLERANCE["float32"]


@pytest.mark.parametrize("quantize", ["float16", "int8"])
def test_quantized_text2wav_stays_close_to_keras(keras_models, converted, quantize):
    """FastSpeech2 + MB-MelGAN quantized together: the audio of 10 lengths against the Keras pipeline."""
    text2wav = TFLiteModel(converted[("text2wav", quantize)])
    assert text2wav.info["quantize"] == quantize
    assert len(converted[("text2wav", quantize)]) < len(converted[("text2wav", "float32")])
    worst = 0.0
    for ids in token_batches(10, lengths=(4, 9, 17, 6, 12)):
        inputs = fastspeech2_inputs(ids)
        expected = keras_models["multiband_melgan_generator"](keras_mels(keras_models["fastspeech2"], inputs)).numpy()
        audio = text2wav(**inputs)["audio"]
        assert audio.shape == expected.shape  # the same durations were predicted
        worst = max(worst, np.abs(audio - expected).max())
    print(f"{quantize} text2wav TFLite vs Keras: audio {worst:.2e} (audio peak {np.abs(expected).max():.2f})")
    assert worst < TOLERANCE[quantize]


def test_text2wav_model_goes_from_token_ids_to_waveform(keras_models, converted):
    text2wav = TFLiteModel(converted[("text2wav", "float32")])
    assert text2wav.output_names == ["audio"] and text2wav.info["role"] == "text2wav"
    worst = 0.0
    for ids in token_batches(3):
        inputs = fastspeech2_inputs(ids)
        expected = keras_models["multiband_melgan_generator"](keras_mels(keras_models["fastspeech2"], inputs)).numpy()
        audio = text2wav(**inputs)["audio"]
        assert audio.shape == expected.shape
        worst = max(worst, np.abs(audio - expected).max())
    print(f"text2wav float32 TFLite vs Keras: {worst:.2e}")
    assert worst < TOLERANCE["float32"]


def test_model_info_travels_in_the_flatbuffer(converted):
    info = read_metadata(converted[("multiband_melgan_generator", "float32")])
    assert info["model_type"] == "multiband_melgan_generator" and info["hop_size"] == 12
    assert info["num_mels"] == NUM_MELS and info["receptive_field_frames"] > 0
    again = add_metadata(converted[("melgan_generator", "float32")], {"note": "replaced"})
    assert TFLiteModel(again)(mels=np.zeros([1, 2, NUM_MELS], np.float32))["audio"].shape == (1, 12, 1)


def test_runner_names_its_inputs_when_one_is_missing(converted):
    tflite = TFLiteModel(converted[("fastspeech2", "float32")])
    with pytest.raises(ValueError, match="missing \\['energy_ratios'"):
        tflite(**{name: value for name, value in fastspeech2_inputs(token_batches(1)[0]).items() if name != "energy_ratios"})


def test_a_conversion_that_loses_the_signature_fails_by_name():
    # The converter saves the model's functions first; where that fails (here: a custom
    # gradient that cannot be traced) it logs the error and writes a file with no signature.
    class UntraceableGradient(tf.keras.Model):
        def call(self, x):
            @tf.custom_gradient
            def double(v):
                def gradient(dy):
                    raise ValueError("no gradient here")

                return 2.0 * v, gradient

            return double(x)

    model = UntraceableGradient()
    model(tf.zeros([1, 3]))
    function = tf.function(lambda x: {"y": model(x)}, input_signature=[tf.TensorSpec([1, 3], tf.float32, name="x")])
    with pytest.raises(TFLiteExportError, match="toy: the converted model has no signature"):
        _convert(function, model, "float32", {"model_type": "toy"})


def test_vocoder_files_reshape_the_signal_once_per_generator_not_per_conv():
    # In rows (B, 1, T, C) from the first conv to the last (BaseVocoderGenerator._generate):
    # around each conv's reshapes XNNPACK copied the signal (memmove: 19 % of the MB-MelGAN v1
    # int8 file's CPU samples before, 7 % after).
    def reshapes(stacks):
        config = MultiBandMelGANGeneratorConfig(filters=16, upsample_scales=[2, 2], stacks=stacks, subbands=4, taps=14)
        generator = TFMBMelGANGenerator(config)
        generator(tf.zeros([1, 9, NUM_MELS]))
        flatbuffer = convert_model(generator)
        model, code_name = _read_model(flatbuffer)
        graph = model.Subgraphs(0)
        names = [code_name(model.OperatorCodes(graph.Operators(i).OpcodeIndex())) for i in range(graph.OperatorsLength())]
        return sorted(name for name in names if name in {"RESHAPE", "EXPAND_DIMS", "SQUEEZE"})

    assert reshapes(stacks=1) == reshapes(stacks=3)


def conv_filters(flatbuffer):
    """[(filter shape (O, 1, K, C), "INT8" or "FLOAT32", the values as stored, the int8 scales or None)]
    of every CONV_2D, in graph order."""
    from tensorflow.lite.python import schema_py_generated as schema

    type_names = {value: name for name, value in vars(schema.TensorType).items() if not name.startswith("_")}
    model, code_name = _read_model(flatbuffer)
    graph, filters = model.Subgraphs(0), []
    for op in (graph.Operators(i) for i in range(graph.OperatorsLength())):
        if code_name(model.OperatorCodes(op.OpcodeIndex())) == "CONV_2D":
            tensor = graph.Tensors(op.Inputs(1))
            data = model.Buffers(tensor.Buffer()).DataAsNumpy().tobytes()
            dtype = {"INT8": np.int8, "FLOAT32": "<f4"}[type_names[tensor.Type()]]
            scales = tensor.Quantization().ScaleAsNumpy() if tensor.Quantization() else None
            filters.append((tuple(tensor.ShapeAsNumpy()), type_names[tensor.Type()], np.frombuffer(data, dtype), scales))
    return filters


def test_int8_gives_narrow_pointwise_convs_their_float32_filters_back(monkeypatch):
    """XNNPACK quantizes an int8 conv's float input row by row on every call, which costs a 1x1 conv
    over few channels more than its float32 product: those keep float32 filters, holding the int8
    values times their scales; wider and multi-tap convs keep int8 filters."""
    import tensorflow_tts.inference.tflite as tflite

    # Residual stacks at twice the limit (over it), then at the limit (within it): both filters
    # large enough (32 x 32 and up) for the converter to quantize them.
    limit = tflite.FLOAT_POINTWISE_MAX_CHANNELS
    assert limit >= 32
    vocoder = tiny_vocoder(filters=4 * limit, upsample_scales=[2, 2])
    restored_file = convert_model(vocoder, "int8")
    restored = conv_filters(restored_file)
    monkeypatch.setattr(tflite, "FLOAT_POINTWISE_MAX_CHANNELS", 0)
    all_int8 = conv_filters(convert_model(vocoder, "int8"))

    kinds = {(int(shape[2]), int(shape[3]), int(shape[0]), kind) for shape, kind, _, _ in restored}  # (taps, in, out, type)
    wide = 2 * limit
    assert {(1, limit, limit, "FLOAT32"), (1, wide, wide, "INT8"), (3, limit, limit, "INT8"), (3, wide, wide, "INT8")} <= kinds
    assert not {(1, wide, wide, "FLOAT32"), (3, limit, limit, "FLOAT32"), (1, limit, limit, "INT8")} & kinds
    assert [shape for shape, *_ in restored] == [shape for shape, *_ in all_int8]  # the same convs, in order
    changed = 0
    for (shape, kind, values, _), (_, old_kind, old_values, scales) in zip(restored, all_int8):
        if kind != old_kind:
            assert (kind, old_kind) == ("FLOAT32", "INT8") and shape[2] == 1 and shape[3] <= limit
            expected = old_values.reshape(shape[0], -1).astype(np.float32) * scales.reshape(-1, 1)
            np.testing.assert_array_equal(values.reshape(shape[0], -1), expected)
            changed += 1
    assert changed == 2 * 2  # the narrow stage's two residual blocks: each one's 1x1 conv and shortcut

    mels = np.random.default_rng(5).normal(size=[1, 11, NUM_MELS]).astype(np.float32)
    expected = vocoder(mels).numpy()
    audio = TFLiteModel(restored_file)(mels=mels)["audio"]
    assert audio.shape == expected.shape
    print(f"int8 with float32 pointwise convs vs Keras: {np.abs(audio - expected).max():.2e} (peak {np.abs(expected).max():.2f})")
    assert np.abs(audio - expected).max() < TOLERANCE["int8"]


def test_export_cli_writes_a_quantized_tflite(tmp_path):
    from tensorflow_tts.bin.export import main
    from test_export import save_model_folder

    vocoder = save_model_folder(tiny_vocoder("melgan_generator"), tmp_path / "melgan", sampling_rate=8000)
    args = ["--model", str(vocoder), "--format", "tflite", "--quantize", "float16", "--outdir", str(tmp_path / "out")]
    assert main(args) == 0
    tflite = TFLiteModel(tmp_path / "out" / "melgan_generator_float16.tflite")
    assert tflite.info["quantize"] == "float16" and tflite.info["sampling_rate"] == 8000


def test_parallel_wavegan_converts_to_builtin_ops_and_matches_keras_given_the_same_noise(keras_models, converted):
    from tensorflow.lite.python import schema_py_generated as schema

    flatbuffer = converted[("parallel_wavegan_generator", "float32")]
    builtin_names = {name for name in vars(schema.BuiltinOperator) if not name.startswith("_")}
    assert set(operator_names(flatbuffer)) <= builtin_names - {"CUSTOM"}
    tflite = TFLiteModel(flatbuffer)
    assert tflite.input_shape("noise") == [1, -1, 1]  # the noise is an input: the audio is a function of both
    vocoder = keras_models["parallel_wavegan_generator"]
    rng = np.random.default_rng(4)
    worst = 0.0
    for frames in (3, 10, 31):
        mels = rng.normal(size=[1, frames, NUM_MELS]).astype(np.float32)
        noise = rng.normal(size=[1, frames * vocoder.hop_size, 1]).astype(np.float32)
        expected = vocoder(mels, noise=noise).numpy()
        audio = tflite(mels=mels, noise=noise)["audio"]
        assert audio.shape == expected.shape
        worst = max(worst, np.abs(audio - expected).max())
    print(f"parallel_wavegan float32 TFLite vs Keras: {worst:.2e}")
    assert worst < TOLERANCE["float32"]
