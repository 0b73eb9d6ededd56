"""tensorflow-tts-convert: TensorFlowTTS 1.8 weights become a save_pretrained folder that reproduces them."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

import tensorflow_tts  # noqa: F401  (selects Keras 2 before tensorflow is imported)
import tensorflow as tf  # noqa: E402

from tensorflow_tts.bin.convert import main  # noqa: E402
from tensorflow_tts.inference import AutoConfig, AutoProcessor, TFAutoModel  # noqa: E402

COMPAT = Path(__file__).resolve().parents[2] / "shared" / "compat"
ROOT = Path(__file__).resolve().parents[1]
ATOL = 1e-5


def fixture(name):
    path = COMPAT / name
    if not path.exists():
        pytest.skip(f"compat fixture {path} is missing")
    return path


def convert(outdir, name, *extra, config=None):
    return main([
        "--from-tensorflowtts", str(fixture(f"{name}.h5")),
        "--config", str(config or fixture(f"{name}.config.json")),
        "--outdir", str(outdir),
        "--verbose", "0",
        *extra,
    ])


def vocoder_audio(model, io):
    return model.inference(tf.constant(io["mels"])).numpy(), io["audio"]


def fastspeech_mels(model, io):
    _, mel_after, durations = model.inference(io["input_ids"], io["speaker_ids"], io["speed_ratios"])
    np.testing.assert_array_equal(durations.numpy(), io["inference_duration_outputs"])
    return mel_after.numpy(), io["inference_mel_after"]


def fastspeech2_mels(model, io):
    outputs = model.inference(io["input_ids"], io["speaker_ids"], io["speed_ratios"], io["f0_ratios"], io["energy_ratios"])
    np.testing.assert_array_equal(outputs[2].numpy(), io["inference_duration_outputs"])
    return outputs[1].numpy(), io["inference_mel_after"]


def tacotron2_mels(model, io):
    # The reference ran without the prenet's inference-time dropout (see compat/README.md).
    model.setup_prenet_dropout(enabled=False)
    model.setup_maximum_iterations(int(io["inference_maximum_iterations"]))
    outputs = model.inference(*[tf.constant(io[key]) for key in ("input_ids", "input_lengths", "speaker_ids")])
    return outputs[1].numpy(), io["inference_mel_outputs"]


REFERENCES = {
    "melgan": vocoder_audio,
    "multiband_melgan": vocoder_audio,
    "hifigan": vocoder_audio,
    "hifigan_wn": vocoder_audio,
    "fastspeech": fastspeech_mels,
    "fastspeech2": fastspeech2_mels,
    "tacotron2": tacotron2_mels,
}


@pytest.mark.parametrize("name", list(REFERENCES))
def test_converted_folder_reproduces_the_old_outputs(tmp_path, name):
    assert convert(tmp_path, name) == 0
    assert sorted(path.name for path in tmp_path.iterdir()) == ["config.yml", "model.h5"]
    assert AutoConfig.from_pretrained(tmp_path) == AutoConfig.from_pretrained(fixture(f"{name}.config.json"))

    model = TFAutoModel.from_pretrained(tmp_path)
    output, expected = REFERENCES[name](model, np.load(fixture(f"{name}.io.npz")))
    np.testing.assert_allclose(output, expected, rtol=0, atol=ATOL)


def test_an_old_training_yaml_and_mapper_are_accepted(tmp_path):
    values = json.loads(fixture("melgan.config.json").read_text())
    model_type = values.pop("model_type")
    old_yaml = tmp_path / "melgan.v1.yaml"
    old_yaml.write_text(yaml.safe_dump({"model_type": model_type, f"{model_type}_params": values, "batch_size": 16}))
    outdir = tmp_path / "out"
    mapper = fixture("mappers/ljspeech_mapper.json")
    assert convert(outdir, "melgan", "--mapper", str(mapper), config=old_yaml) == 0
    assert sorted(path.name for path in outdir.iterdir()) == ["config.yml", "model.h5", "processor.json"]
    processor = AutoProcessor.from_pretrained(outdir)
    assert processor.symbol_to_id == AutoProcessor.from_pretrained(mapper).symbol_to_id


def write_config(tmp_path, name, **overrides):
    path = tmp_path / f"{name}.changed.json"
    path.write_text(json.dumps({**json.loads(fixture(f"{name}.config.json").read_text()), **overrides}))
    return path


def test_a_weight_of_the_wrong_shape_is_an_error_naming_it(tmp_path, caplog):
    config = write_config(tmp_path, "multiband_melgan", filters=128)  # the file was written with 64
    assert convert(tmp_path / "out", "multiband_melgan", config=config) == 1
    assert "wrong shape for first_conv/kernel:0: file has (7, 80, 64), model expects (7, 80, 128)" in caplog.text
    assert "--allow-partial" in caplog.text
    assert not (tmp_path / "out" / "model.h5").exists()


def test_allow_partial_converts_what_fits_and_lists_the_rest(tmp_path, caplog):
    config = write_config(tmp_path, "multiband_melgan", stacks=5)  # one residual stack more than the file
    assert convert(tmp_path / "out", "multiband_melgan", "--allow-partial", config=config) == 0
    assert "missing from the file: residual_stack_._0._._4/dilated_conv/kernel:0" in caplog.text
    assert (tmp_path / "out" / "model.h5").is_file()


def test_our_own_folder_is_not_converted_again(tmp_path, caplog):
    assert convert(tmp_path / "once", "melgan") == 0
    assert main([
        "--from-tensorflowtts", str(tmp_path / "once" / "model.h5"),
        "--config", str(tmp_path / "once" / "config.yml"),
        "--outdir", str(tmp_path / "twice"),
    ]) == 2
    assert "already written by tensorflow_tts" in caplog.text


def test_the_command_fails_cleanly_without_a_traceback(tmp_path):
    config = write_config(tmp_path, "multiband_melgan", is_weight_norm=True)  # a plain file into a weight-norm model
    result = subprocess.run(
        [sys.executable, "-m", "tensorflow_tts.bin.convert", "--from-tensorflowtts", str(fixture("multiband_melgan.h5")),
         "--config", str(config), "--outdir", str(tmp_path / "out")],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )
    assert result.returncode == 1
    assert "cannot convert" in result.stderr and "missing from the file" in result.stderr
    assert "Traceback" not in result.stderr
