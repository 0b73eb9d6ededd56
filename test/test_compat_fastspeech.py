"""FastSpeech and FastSpeech2 reproduce TensorFlowTTS 1.8 from its configs and .h5 weights."""

import json
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest

import tensorflow_tts  # noqa: F401  (selects Keras 2 before tensorflow is imported)
import tensorflow as tf  # noqa: E402

from tensorflow_tts.configs import FastSpeech2Config, FastSpeechConfig  # noqa: E402
from tensorflow_tts.models import TFFastSpeech, TFFastSpeech2  # noqa: E402
from tensorflow_tts.models.legacy_weights import LegacyWeightsError  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "compat"
MODELS = {"fastspeech": (FastSpeechConfig, TFFastSpeech), "fastspeech2": (FastSpeech2Config, TFFastSpeech2)}
ATOL = 1e-5


def fixture(name, suffix):
    path = FIXTURES / f"{name}{suffix}"
    if not path.exists():
        pytest.skip(f"compat fixture {path} is missing")
    return path


def build_old_model(name):
    """The model of `<name>.config.json` with `<name>.h5` loaded, as a 1.8 user would."""
    config_class, model_class = MODELS[name]
    values = json.loads(fixture(name, ".config.json").read_text())
    assert values.pop("model_type") == name
    model = model_class(config_class.from_dict(values, source=f"{name}.config.json"))
    report = model.load_weights(str(fixture(name, ".h5")))
    assert report.complete
    return model


@pytest.fixture(scope="module")
def fastspeech2():
    return build_old_model("fastspeech2"), np.load(fixture("fastspeech2", ".io.npz"))


@pytest.fixture(scope="module")
def fastspeech():
    return build_old_model("fastspeech"), np.load(fixture("fastspeech", ".io.npz"))


def assert_outputs(prefix, names, outputs, io):
    for name, output in zip(names, outputs):
        expected = io[f"{prefix}_{name}"]
        output = np.asarray(output)
        assert output.shape == expected.shape, f"{prefix}_{name}: shape {output.shape} != {expected.shape}"
        if expected.dtype.kind == "i":
            assert output.dtype.kind == "i", f"{prefix}_{name}: expected integers"
            np.testing.assert_array_equal(output, expected, err_msg=f"{prefix}_{name}")
        else:
            np.testing.assert_allclose(output, expected, rtol=0, atol=ATOL, err_msg=f"{prefix}_{name}")


FS2_OUTPUTS = ("mel_before", "mel_after", "duration_outputs", "f0_outputs", "energy_outputs")
FS_OUTPUTS = ("mel_before", "mel_after", "duration_outputs")


def test_fastspeech2_call_reproduces_old_outputs(fastspeech2):
    model, io = fastspeech2
    outputs = model(
        io["input_ids"], io["speaker_ids"], io["duration_gts"], io["f0_gts"], io["energy_gts"], training=False
    )
    assert_outputs("call", FS2_OUTPUTS, outputs, io)


def test_fastspeech2_inference_reproduces_old_outputs(fastspeech2):
    model, io = fastspeech2
    outputs = model.inference(
        io["input_ids"], io["speaker_ids"], io["speed_ratios"], io["f0_ratios"], io["energy_ratios"]
    )
    assert_outputs("inference", FS2_OUTPUTS, outputs, io)


def test_fastspeech_call_reproduces_old_outputs(fastspeech):
    model, io = fastspeech
    outputs = model(io["input_ids"], io["speaker_ids"], io["duration_gts"], training=False)
    assert_outputs("call", FS_OUTPUTS, outputs, io)


def test_fastspeech_inference_reproduces_old_outputs(fastspeech):
    model, io = fastspeech
    outputs = model.inference(io["input_ids"], io["speaker_ids"], io["speed_ratios"])
    assert_outputs("inference", FS_OUTPUTS, outputs, io)


@pytest.mark.parametrize("marked", [True, False])
def test_our_own_h5_files_still_load(tmp_path, marked):
    """Marked files go to Keras' loader; unmarked ones through the by-name loader, which fits them too."""
    model = build_old_model("fastspeech")
    ours = tmp_path / "ours.h5"
    model.save_weights(str(ours))
    if marked:
        with h5py.File(ours, "a") as h5:  # what our save_pretrained marks its files with
            h5.attrs["tensorflow_tts_format"] = "1"
    clone = TFFastSpeech(model.config)
    clone.build_once()
    report = clone.load_weights(str(ours))
    assert (report is None) if marked else report.complete
    for mine, theirs in zip(clone.weights, model.weights):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


def copy_h5(tmp_path, name):
    path = tmp_path / f"{name}.h5"
    shutil.copy(fixture(name, ".h5"), path)
    path.chmod(0o644)
    return path


def test_a_missing_old_weight_is_named(tmp_path):
    path = copy_h5(tmp_path, "fastspeech2")
    missing = "tf_fast_speech2/energy_predictor/dense_2/bias:0"
    with h5py.File(path, "a") as h5:
        group = h5["energy_predictor"]
        names = [n.decode() if isinstance(n, bytes) else n for n in group.attrs["weight_names"]]
        names.remove(missing)
        group.attrs["weight_names"] = [n.encode() for n in names]
        del group[missing]
    config = FastSpeech2Config.from_dict(
        {k: v for k, v in json.loads(fixture("fastspeech2", ".config.json").read_text()).items() if k != "model_type"}
    )
    with pytest.raises(LegacyWeightsError, match="energy_predictor/projection/bias"):
        TFFastSpeech2(config).load_weights(str(path))


def test_a_misshaped_old_weight_is_named(tmp_path):
    path = copy_h5(tmp_path, "fastspeech")
    name = "tf_fast_speech/mel_before/kernel:0"
    with h5py.File(path, "a") as h5:
        group = h5["mel_before"]
        del group[name]
        group[name] = np.zeros([48, 81], np.float32)
    config = FastSpeechConfig.from_dict(
        {k: v for k, v in json.loads(fixture("fastspeech", ".config.json").read_text()).items() if k != "model_type"}
    )
    with pytest.raises(LegacyWeightsError, match=r"mel_before/kernel.*\(48, 81\)"):
        TFFastSpeech(config).load_weights(str(path))


def test_a_different_model_name_still_loads():
    """Old files carry the name the old model was built with; ours may differ."""
    values = json.loads(fixture("fastspeech", ".config.json").read_text())
    values.pop("model_type")
    model = TFFastSpeech(FastSpeechConfig.from_dict(values), name="my_fastspeech")
    assert model.load_weights(str(fixture("fastspeech", ".h5"))).complete
