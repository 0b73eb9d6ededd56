"""TensorFlowTTS 1.8 weights -> tensorflow-tts-convert -> builtin-only TFLite, still matching the old outputs.

The compat fixtures (FastSpeech2, MB-MelGAN and Parallel WaveGAN, see /work/shared/compat/README.md) are
converted to `save_pretrained` folders with the console script's entry point, loaded with
TFAutoModel, exported with `tensorflow_tts.inference.tflite` (float32, TFLITE_BUILTINS only)
and run in the ai-edge-litert interpreter against the references stored in `<name>.io.npz`.
Conversion is the slow part, so each model is converted once per session.
"""

from pathlib import Path

import numpy as np
import pytest

import tensorflow_tts  # noqa: F401  (before tensorflow: tf.keras is Keras 2)

from tensorflow_tts.bin.convert import main as convert_main  # noqa: E402
from tensorflow_tts.inference import TFAutoModel  # noqa: E402
from tensorflow_tts.inference.tflite import TFLiteModel, convert_model, operator_names  # noqa: E402

COMPAT = Path(__file__).resolve().parents[2] / "shared" / "compat"
FIXTURES = ("fastspeech2", "multiband_melgan", "parallel_wavegan")
# Max abs difference to the 1.8 references, the compat README's float tolerance. Measured in
# the interpreter (XNNPACK): FastSpeech2 mel_before 2.7e-6, mel_after 2.9e-6, f0 1.3e-6,
# energy 3.0e-6 (mels peak at 2.7); MB-MelGAN audio 1.5e-6 (peak 1.6). The 1.8 code paths
# themselves differ by ~2e-6, so nothing tighter is meaningful.
ATOL = 1e-5


def _fixture_files(name):
    paths = [COMPAT / f"{name}{suffix}" for suffix in (".h5", ".config.json", ".io.npz")]
    missing = [str(path) for path in paths if not path.is_file()]
    if missing:
        pytest.skip(f"compat fixture files missing: {', '.join(missing)}")
    return paths


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """{name: (TFLiteModel, flatbuffer, reference npz)}: each fixture converted, loaded and exported once."""
    root = tmp_path_factory.mktemp("compat_tflite")
    result = {}
    for name in FIXTURES:
        weights, config, references = _fixture_files(name)
        folder = root / name
        status = convert_main(["--from-tensorflowtts", str(weights), "--config", str(config),
                               "--outdir", str(folder), "--verbose", "0"])
        assert status == 0, f"tensorflow-tts-convert failed on {weights}"
        flatbuffer = convert_model(TFAutoModel.from_pretrained(folder), quantize="float32")
        result[name] = (TFLiteModel(flatbuffer), flatbuffer, np.load(references))
    return result


@pytest.mark.parametrize("name", FIXTURES)
def test_converted_fixture_exports_with_builtin_ops_only(exported, name):
    from tensorflow.lite.python import schema_py_generated as schema

    _, flatbuffer, _ = exported[name]
    builtin_names = {op for op in vars(schema.BuiltinOperator) if not op.startswith("_")} - {"CUSTOM"}
    names = operator_names(flatbuffer)
    assert names and set(names) <= builtin_names, f"{name}: not builtin: {sorted(set(names) - builtin_names)}"


def test_fastspeech2_tflite_reproduces_the_old_inference(exported):
    tflite, _, io = exported["fastspeech2"]
    assert tflite.input_shape("input_ids") == [1, -1]  # the batch-1 signature (inference_tflite in 1.8)
    outputs = tflite(**{key: io[key] for key in ("input_ids", "speaker_ids", "speed_ratios", "f0_ratios", "energy_ratios")})

    np.testing.assert_array_equal(outputs["durations"], io["inference_duration_outputs"])
    for output, reference in (("mel_before", "inference_mel_before"), ("mel_after", "inference_mel_after"),
                              ("f0_outputs", "inference_f0_outputs"), ("energy_outputs", "inference_energy_outputs")):
        assert outputs[output].shape == io[reference].shape, output
        np.testing.assert_allclose(outputs[output], io[reference], rtol=0, atol=ATOL, err_msg=output)


def test_multiband_melgan_tflite_reproduces_the_old_audio(exported):
    tflite, _, io = exported["multiband_melgan"]
    assert tflite.input_shape("mels") == [1, -1, 80]
    audio = tflite(mels=io["mels"])["audio"]
    assert audio.shape == io["audio"].shape == (1, 6144, 1)
    np.testing.assert_allclose(audio, io["audio"], rtol=0, atol=ATOL)


def test_parallel_wavegan_tflite_reproduces_the_old_audio_from_the_same_noise(exported):
    tflite, _, io = exported["parallel_wavegan"]
    audio = tflite(mels=io["mels"], noise=io["noise_used"])["audio"]
    assert audio.shape == io["audio"].shape == (1, 6144, 1)
    np.testing.assert_allclose(audio, io["audio"], rtol=0, atol=ATOL)
