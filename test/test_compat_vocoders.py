"""TensorFlowTTS 1.8 vocoder checkpoints load into our generators and reproduce its outputs."""

import json
from pathlib import Path

import numpy as np
import pytest

import tensorflow_tts  # noqa: F401  (before tensorflow: tf.keras is Keras 2)
import tensorflow as tf

from tensorflow_tts.configs.hifigan import HifiGANGeneratorConfig
from tensorflow_tts.configs.mb_melgan import MultiBandMelGANGeneratorConfig
from tensorflow_tts.configs.melgan import MelGANGeneratorConfig
from tensorflow_tts.configs.parallel_wavegan import ParallelWaveGANGeneratorConfig
from tensorflow_tts.models.hifigan import TFHifiGANGenerator
from tensorflow_tts.models.mb_melgan import TFMBMelGANGenerator
from tensorflow_tts.models.melgan import TFMelGANGenerator
from tensorflow_tts.models.parallel_wavegan import TFParallelWaveGANGenerator
from tensorflow_tts.models.legacy_weights import LegacyWeightsError

COMPAT = Path(__file__).resolve().parents[2] / "shared" / "compat"
ATOL = 1e-5

MODELS = {
    "melgan": (MelGANGeneratorConfig, TFMelGANGenerator),
    "multiband_melgan": (MultiBandMelGANGeneratorConfig, TFMBMelGANGenerator),
    "hifigan": (HifiGANGeneratorConfig, TFHifiGANGenerator),
    "hifigan_wn": (HifiGANGeneratorConfig, TFHifiGANGenerator),
    "parallel_wavegan": (ParallelWaveGANGeneratorConfig, TFParallelWaveGANGenerator),
}
NOISELESS = [name for name in MODELS if name != "parallel_wavegan"]  # their audio is a function of the mels

pytestmark = pytest.mark.skipif(not COMPAT.is_dir(), reason=f"compatibility fixtures not found at {COMPAT}")


def fixture(name, suffix):
    return COMPAT / f"{name}{suffix}"


def config_values(name):
    return json.loads(fixture(name, ".config.json").read_text())


def build(name, **overrides):
    config_class, model_class = MODELS[name]
    model = model_class(config_class.from_dict({**config_values(name), **overrides}))
    return model.build_once(num_mels=80)


_loaded = {}


def loaded(name):
    """The fixture model with its old weights (built once per session: building is the slow part)."""
    if name not in _loaded:
        model = build(name)
        report = model.load_weights(str(fixture(name, ".h5")))
        _loaded[name] = (model, report)
    return _loaded[name]


@pytest.mark.parametrize("name", list(MODELS))
def test_old_weights_load_completely(name):
    model, report = loaded(name)
    stored = [line for line in fixture(name, ".weights.txt").read_text().splitlines() if line and not line.startswith("#")]
    assert report.complete
    assert len(report.loaded) + len(report.ignored) == len(stored)
    assert all(path.endswith("/initialized:0") for path in report.ignored)
    assert len(report.loaded) == len(model.weights)


@pytest.mark.parametrize("name", NOISELESS)
def test_call_and_inference_reproduce_the_old_audio(name):
    model, _ = loaded(name)
    io = np.load(fixture(name, ".io.npz"))
    np.testing.assert_allclose(model(io["mels"]).numpy(), io["audio"], atol=ATOL)
    np.testing.assert_allclose(model.inference(tf.constant(io["mels"])).numpy(), io["audio"], atol=ATOL)


def test_parallel_wavegan_reproduces_the_old_audio_from_the_same_noise():
    model, _ = loaded("parallel_wavegan")
    io = np.load(fixture("parallel_wavegan", ".io.npz"))
    # The fixture's noise is (1, 6144); the generator takes its first T * hop_size samples.
    np.testing.assert_allclose(model(io["mels"], noise=io["noise"]).numpy(), io["call_audio"], atol=ATOL)
    noise = tf.constant(io["noise_used"])
    np.testing.assert_allclose(model.inference(tf.constant(io["mels"]), noise=noise).numpy(), io["audio"], atol=ATOL)
    served = model.serve({"mels": tf.constant(io["mels"]), "noise": noise})["audio"]
    np.testing.assert_allclose(served.numpy(), io["audio"], atol=ATOL)


def test_parallel_wavegan_draws_its_own_noise_as_1_8_did():
    model, _ = loaded("parallel_wavegan")
    io = np.load(fixture("parallel_wavegan", ".io.npz"))
    first, second = model(io["mels"]).numpy(), model(io["mels"]).numpy()
    assert first.shape == io["audio"].shape
    assert np.abs(first - second).max() > 1e-3  # fresh noise each call
    assert np.abs(first - io["audio"]).max() > 1e-3


def test_multiband_subbands_before_pqmf():
    model, _ = loaded("multiband_melgan")
    io = np.load(fixture("multiband_melgan", ".io.npz"))
    np.testing.assert_allclose(model.generate_subbands(io["mels"]).numpy(), io["subbands"], atol=ATOL)
    audio, subbands = model(io["mels"], return_subbands=True)
    np.testing.assert_allclose(subbands.numpy(), io["subbands"], atol=ATOL)
    np.testing.assert_allclose(model.pqmf.synthesis(io["subbands"]).numpy(), io["audio"], atol=ATOL)


def test_multiband_pqmf_analysis():
    model, _ = loaded("multiband_melgan")
    io = np.load(fixture("multiband_melgan", ".io.npz"))
    analysis = model.pqmf.analysis(tf.constant(io["pqmf_analysis_input"]))
    np.testing.assert_allclose(analysis.numpy(), io["pqmf_analysis_output"], atol=ATOL)


def test_a_weight_of_the_wrong_shape_is_named():
    model = build("multiband_melgan", filters=128)  # the file was written with 64
    with pytest.raises(LegacyWeightsError, match=r"wrong shape for (\S+/)?first_conv/kernel:0: file has \(7, 80, 64\), model expects \(7, 80, 128\)"):
        model.load_weights(str(fixture("multiband_melgan", ".h5")))


def test_a_weight_missing_from_the_file_is_named():
    model = build("multiband_melgan", stacks=5)  # one residual stack more per stage than the file has
    with pytest.raises(LegacyWeightsError, match=r"missing from the file: .*residual_stack_\._0\._\._4/dilated_conv/kernel"):
        model.load_weights(str(fixture("multiband_melgan", ".h5")))


def test_weight_norm_file_into_plain_model_is_refused():
    model = build("hifigan_wn", is_weight_norm=False)
    with pytest.raises(LegacyWeightsError, match=r"not used by the model: .*g:0"):
        model.load_weights(str(fixture("hifigan_wn", ".h5")))


def test_allow_partial_loads_what_fits():
    model = build("multiband_melgan", stacks=5)
    report = model.load_weights(str(fixture("multiband_melgan", ".h5")), allow_partial=True)
    assert not report.complete and len(report.loaded) == 82
