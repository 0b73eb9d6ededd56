"""SavedModel export: named signatures, dynamic time axes, loadable by TensorFlow alone, same outputs as Keras.

Also holds the tiny random-weight models and the model-folder writer that the TFLite,
synthesis and streaming tests build on.
"""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import yaml

import tensorflow_tts  # noqa: F401  (before tensorflow: tf.keras is Keras 2)
import tensorflow as tf  # noqa: E402

from tensorflow_tts.configs import (  # noqa: E402
    FastSpeech2Config,
    FastSpeechConfig,
    HifiGANGeneratorConfig,
    MelGANGeneratorConfig,
    MultiBandMelGANGeneratorConfig,
    ParallelWaveGANGeneratorConfig,
)
from tensorflow_tts.inference.export import (  # noqa: E402
    ExportError,
    export_saved_model,
    load_keras_model,
    model_type_of,
    read_saved_model_info,
)
from tensorflow_tts.models import (  # noqa: E402
    TFFastSpeech,
    TFFastSpeech2,
    TFHifiGANGenerator,
    TFMBMelGANGenerator,
    TFMelGANGenerator,
    TFMelGANMultiScaleDiscriminator,
    TFParallelWaveGANGenerator,
)
from helpers.tiny import about_three_frames_per_token

NUM_MELS = 8
LJSPEECH_MAPPER = tensorflow_tts.__path__[0] + "/processor/pretrained/ljspeech_mapper.json"
TINY_ACOUSTIC = dict(
    encoder_hidden_size=16, encoder_num_hidden_layers=1, encoder_num_attention_heads=2,
    encoder_attention_head_size=8, encoder_intermediate_size=24,
    decoder_hidden_size=16, decoder_num_hidden_layers=1, decoder_num_attention_heads=2,
    decoder_attention_head_size=8, decoder_intermediate_size=24,
    duration_predictor_filters=16, postnet_conv_filters=16, n_conv_postnet=2,
    num_mels=NUM_MELS, max_position_embeddings=256,
)
TINY_VOCODERS = {
    "melgan_generator": (TFMelGANGenerator, MelGANGeneratorConfig,
                         dict(filters=16, upsample_scales=[2, 3], stacks=2, kernel_size=3)),
    "multiband_melgan_generator": (TFMBMelGANGenerator, MultiBandMelGANGeneratorConfig,
                                   dict(filters=16, upsample_scales=[2, 3], stacks=2, kernel_size=3,
                                        out_channels=2, subbands=2, taps=14)),
    "hifigan_generator": (TFHifiGANGenerator, HifiGANGeneratorConfig,
                          dict(filters=16, upsample_scales=[2, 3], kernel_size=3, stacks=2,
                               stack_kernel_size=[3, 5], stack_dilation_rate=[[1, 3], [1, 2]], is_weight_norm=True)),
    "parallel_wavegan_generator": (TFParallelWaveGANGenerator, ParallelWaveGANGeneratorConfig,
                                   dict(n_layers=4, stacks=2, residual_channels=8, gate_channels=16, skip_channels=8,
                                        aux_channels=8, upsample_params={"upsample_scales": [2, 3]})),
}


def tiny_acoustic(model_type="fastspeech2", seed=1, **overrides):
    tf.keras.utils.set_random_seed(seed)
    config = dict(TINY_ACOUSTIC, **overrides)
    if model_type == "fastspeech2":
        model = TFFastSpeech2(FastSpeech2Config(**config, variant_predictor_filter=16))
    else:
        model = TFFastSpeech(FastSpeechConfig(**config))
    model.build_once()
    about_three_frames_per_token(model)
    return model


def tiny_vocoder(model_type="multiband_melgan_generator", num_mels=NUM_MELS, seed=2, **overrides):
    tf.keras.utils.set_random_seed(seed)
    cls, config_cls, values = TINY_VOCODERS[model_type]
    return cls(config_cls(**dict(values, **overrides))).build_once(num_mels)


# One set of tiny models and one conversion of each per test session: the TFLite, synthesis
# and streaming tests all import these (conversion takes seconds per model).
_SHARED = {}
_SHARED_TFLITE = {}  # (model name, quantization) -> flatbuffer; apart, so shared_models() holds models only


def shared_models():
    """{"fastspeech2", "fastspeech", and each vocoder type: the tiny Keras model}, built once."""
    if not _SHARED:
        _SHARED["fastspeech2"] = tiny_acoustic("fastspeech2")
        _SHARED["fastspeech"] = tiny_acoustic("fastspeech")
        _SHARED.update({name: tiny_vocoder(name) for name in TINY_VOCODERS})
    return _SHARED


def shared_tflite(name, quantize="float32"):
    """Flatbuffer of a shared model (or "text2wav": FastSpeech2 + MB-MelGAN), converted once."""
    from tensorflow_tts.inference.tflite import convert_model, convert_text2wav

    key = (name, quantize)
    if key not in _SHARED_TFLITE:
        models = shared_models()
        if name == "text2wav":
            _SHARED_TFLITE[key] = convert_text2wav(models["fastspeech2"], models["multiband_melgan_generator"], quantize)
        else:
            _SHARED_TFLITE[key] = convert_model(models[name], quantize)
    return _SHARED_TFLITE[key]


def save_model_folder(model, folder, **top_level):
    """A model folder as training and save_pretrained leave it: config.yml (training YAML) + model.h5."""
    folder.mkdir(parents=True, exist_ok=True)
    model_type = model_type_of(model)
    config = model.config.to_dict()
    values = dict(top_level, model_type=model_type, **{f"{model_type}_params": config})
    (folder / "config.yml").write_text(yaml.safe_dump(values), encoding="utf-8")
    model.save_weights(str(folder / "model.h5"))
    return folder


def token_batches(count, lengths=(3, 5, 8, 13, 21), seed=0):
    """`count` single utterances of different lengths (ids in the LJSpeech range)."""
    rng = np.random.default_rng(seed)
    return [rng.integers(1, 148, size=[1, lengths[i % len(lengths)] + i // len(lengths)]).astype(np.int32)
            for i in range(count)]


def fastspeech2_inputs(input_ids, speed=1.0, f0=1.0, energy=1.0):
    return {
        "input_ids": input_ids,
        "speaker_ids": np.zeros([len(input_ids)], np.int32),
        "speed_ratios": np.full([len(input_ids)], speed, np.float32),
        "f0_ratios": np.full([len(input_ids)], f0, np.float32),
        "energy_ratios": np.full([len(input_ids)], energy, np.float32),
    }


def keras_mels(model, inputs):
    names = [spec.name for spec in model.serving_signature(None)]
    return model.inference(*[inputs[name] for name in names])[1].numpy()


# ------------------------------------------------------------------------------ tests
@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("saved_models")
    acoustic, vocoder = shared_models()["fastspeech2"], shared_models()["multiband_melgan_generator"]
    export_saved_model(acoustic, root / "fastspeech2", sampling_rate=8000, hop_size=12)
    export_saved_model(vocoder, root / "mb_melgan", sampling_rate=8000)
    return {"root": root, "acoustic": acoustic, "vocoder": vocoder}


def test_model_type_is_that_of_the_most_derived_exportable_class():
    for model_type, model in shared_models().items():  # TFFastSpeech2 is also a TFFastSpeech, ...
        assert model_type_of(model) == model_type

    class MyVoice(TFFastSpeech2):
        pass

    assert model_type_of(MyVoice(FastSpeech2Config(**TINY_ACOUSTIC))) == "fastspeech2"
    with pytest.raises(ExportError, match="TFMelGANMultiScaleDiscriminator is not an exportable model"):
        model_type_of(TFMelGANMultiScaleDiscriminator())


def test_signatures_have_named_inputs_and_dynamic_axes(exported):
    loaded = tf.saved_model.load(str(exported["root"] / "fastspeech2"))
    specs = loaded.signatures["serving_default"].structured_input_signature[1]
    assert sorted(specs) == ["energy_ratios", "f0_ratios", "input_ids", "speaker_ids", "speed_ratios"]
    assert specs["input_ids"].shape.as_list() == [None, None]
    vocoder = tf.saved_model.load(str(exported["root"] / "mb_melgan")).signatures["serving_default"]
    assert vocoder.structured_input_signature[1]["mels"].shape.as_list() == [None, None, NUM_MELS]
    assert list(vocoder.structured_outputs) == ["audio"]


def test_export_records_what_a_synthesizer_checks(exported):
    info = read_saved_model_info(exported["root"] / "fastspeech2")
    assert info["model_type"] == "fastspeech2" and info["num_mels"] == NUM_MELS
    assert info["hop_size"] == 12 and info["sampling_rate"] == 8000 and info["vocab_size"] == 149
    vocoder_info = read_saved_model_info(exported["root"] / "mb_melgan")
    assert vocoder_info["hop_size"] == 12 and vocoder_info["role"] == "vocoder"


def test_saved_model_runs_without_tensorflow_tts_and_matches_keras(exported, tmp_path):
    """10 utterances of different lengths through plain TensorFlow in a fresh process."""
    acoustic, vocoder = exported["acoustic"], exported["vocoder"]
    batches = token_batches(10)
    np.savez(tmp_path / "inputs.npz", *batches)
    script = textwrap.dedent(
        f"""
        import sys
        import numpy as np
        import tensorflow as tf
        acoustic = tf.saved_model.load({str(exported["root"] / "fastspeech2")!r}).signatures["serving_default"]
        vocoder = tf.saved_model.load({str(exported["root"] / "mb_melgan")!r}).signatures["serving_default"]
        inputs = np.load({str(tmp_path / "inputs.npz")!r})
        results = {{}}
        for i in range(len(inputs.files)):
            ids = tf.constant(inputs[f"arr_{{i}}"])
            ones = tf.ones([1])
            out = acoustic(input_ids=ids, speaker_ids=tf.zeros([1], tf.int32), speed_ratios=ones,
                           f0_ratios=ones, energy_ratios=ones)
            results[f"mel_{{i}}"] = out["mel_after"].numpy()
            results[f"audio_{{i}}"] = vocoder(mels=out["mel_after"])["audio"].numpy()
        np.savez({str(tmp_path / "outputs.npz")!r}, **results)
        assert not any(name.startswith("tensorflow_tts") for name in sys.modules), "tensorflow_tts was imported"
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=tmp_path, capture_output=True)
    outputs = np.load(tmp_path / "outputs.npz")
    worst_mel = worst_audio = 0.0
    for i, ids in enumerate(batches):
        mels = keras_mels(acoustic, fastspeech2_inputs(ids))
        audio = vocoder(mels).numpy()
        assert outputs[f"mel_{i}"].shape == mels.shape
        worst_mel = max(worst_mel, np.abs(outputs[f"mel_{i}"] - mels).max())
        worst_audio = max(worst_audio, np.abs(outputs[f"audio_{i}"] - audio).max())
    print(f"SavedModel vs Keras, 10 inputs: mel {worst_mel:.2e}, audio {worst_audio:.2e} max abs")
    assert worst_mel < 1e-4 and worst_audio < 1e-4


def test_saved_model_takes_a_padded_batch(exported):
    signature = tf.saved_model.load(str(exported["root"] / "fastspeech2")).signatures["serving_default"]
    ids = np.array([[5, 6, 7, 8, 9], [10, 11, 12, 0, 0]], np.int32)
    outputs = signature(**{name: tf.constant(value) for name, value in fastspeech2_inputs(ids).items()})
    assert outputs["mel_after"].shape[0] == 2 and outputs["durations"].shape == (2, 5)


def test_model_folder_loads_back_with_its_weights(tmp_path):
    model = tiny_acoustic("fastspeech")
    folder = save_model_folder(model, tmp_path / "fastspeech", sampling_rate=8000, hop_size=12)
    loaded, info = load_keras_model(folder)
    ids = token_batches(1)[0]
    inputs = {"input_ids": ids, "speaker_ids": np.zeros([1], np.int32), "speed_ratios": np.ones([1], np.float32)}
    np.testing.assert_allclose(keras_mels(loaded, inputs), keras_mels(model, inputs), atol=1e-6)
    assert info["hop_size"] == 12 and info["sampling_rate"] == 8000


def test_vocoder_folder_is_built_for_its_mel_bins(tmp_path):
    folder = save_model_folder(tiny_vocoder("hifigan_generator", num_mels=10), tmp_path / "hifigan")
    _, info = load_keras_model(folder)
    assert info["num_mels"] == 10 and info["hop_size"] == 6


def test_folder_without_weights_is_a_clear_error(tmp_path):
    folder = save_model_folder(tiny_vocoder(), tmp_path / "voc")
    (folder / "model.h5").unlink()
    with pytest.raises(ExportError, match="cannot load the model .*model.h5"):
        load_keras_model(folder)


def test_export_cli_writes_a_saved_model(tmp_path, capsys):
    from tensorflow_tts.bin.export import main

    folder = save_model_folder(tiny_vocoder("melgan_generator"), tmp_path / "melgan", sampling_rate=8000)
    assert main(["--model", str(folder), "--format", "saved_model", "--outdir", str(tmp_path / "out")]) == 0
    info = json.loads((tmp_path / "out" / "assets.extra" / "tensorflow_tts.json").read_text())
    assert info["model_type"] == "melgan_generator" and info["sampling_rate"] == 8000


def test_export_cli_refuses_quantizing_a_saved_model(tmp_path):
    from tensorflow_tts.bin.export import main

    folder = save_model_folder(tiny_vocoder("melgan_generator"), tmp_path / "melgan")
    args = ["--model", str(folder), "--format", "saved_model", "--outdir", str(tmp_path / "o"), "--quantize", "int8"]
    assert main(args) == 2
