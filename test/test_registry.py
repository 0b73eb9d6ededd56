"""Every registered model type builds, saves and loads back, and every servable one exports and serves."""

import tensorflow_tts  # noqa: F401

import numpy as np
import pytest
import tensorflow as tf

from tensorflow_tts.inference import TFAutoModel, save_pretrained
from tensorflow_tts.inference.export import export_saved_model, model_type_of
from tensorflow_tts.models import registry
from tensorflow_tts.models.serving import ServableModel

from helpers.tiny import TACOTRON2_V1_SHAPE, about_three_frames_per_token

NUM_MELS = 6
FFT = dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, attention_head_size=8, intermediate_size=32)
TINY_FASTSPEECH = dict(
    n_speakers=2, num_mels=NUM_MELS, max_position_embeddings=64, duration_predictor_filters=16,
    postnet_conv_filters=16, **{f"{part}_{key}": value for part in ("encoder", "decoder") for key, value in FFT.items()},
)
# Small parameters of every registered model type; a new entry in the registry needs one here.
TINY_PARAMS = {
    "fastspeech": TINY_FASTSPEECH,
    "fastspeech2": dict(TINY_FASTSPEECH, variant_predictor_filter=16),
    "tacotron2": dict(
        vocab_size=20, embedding_hidden_size=16, n_conv_encoder=2, encoder_conv_filters=16, encoder_lstm_units=8,
        prenet_units=16, decoder_lstm_units=16, attention_dim=8, attention_filters=4, attention_kernel=5,
        n_mels=NUM_MELS, n_conv_postnet=2, postnet_conv_filters=16, prenet_dropout_at_inference=False,
        **TACOTRON2_V1_SHAPE,
    ),
    "melgan_generator": dict(filters=16, upsample_scales=[2, 3], stacks=1, kernel_size=3),
    "multiband_melgan_generator": dict(filters=16, upsample_scales=[2, 3], stacks=1, kernel_size=3, out_channels=4,
                                       subbands=4, taps=14),
    "hifigan_generator": dict(filters=16, upsample_scales=[2, 3], stacks=1, kernel_size=3, stack_kernel_size=[3],
                              stack_dilation_rate=[[1, 3]]),
    "melgan_discriminator": dict(scales=2, filters=4, downsample_scales=[2], max_downsample_filters=8),
    "multiband_melgan_discriminator": dict(scales=2, filters=4, downsample_scales=[2], max_downsample_filters=8),
    "hifigan_discriminator": dict(period_scales=[2, 3], n_layers=2, filters=4),
    "parallel_wavegan_generator": dict(n_layers=2, stacks=1, residual_channels=4, gate_channels=8, skip_channels=4,
                                       aux_channels=4, upsample_params={"upsample_scales": [2, 3]}),
    "parallel_wavegan_discriminator": dict(n_layers=3, conv_channels=4),
}
ENTRIES = [pytest.param(entry, id=entry.name) for entry in registry.MODEL_TYPES]


def tiny_model(entry):
    config = entry.config_class.from_dict(TINY_PARAMS[entry.name])
    model = TFAutoModel.from_pretrained(config=config, num_mels=NUM_MELS)
    if hasattr(model, "setup_maximum_iterations"):  # random weights never predict a stop
        model.setup_maximum_iterations(12)
    if hasattr(model, "duration_predictor"):
        about_three_frames_per_token(model)
    return model


def serving_inputs(model):
    """A batch of one for each named serving input."""
    values = {
        "input_ids": tf.constant([[3, 5, 7, 2, 9]], tf.int32), "input_lengths": tf.constant([5], tf.int32),
        "speaker_ids": tf.constant([1], tf.int32), "mels": tf.random.stateless_normal([1, 7, NUM_MELS], seed=(1, 2)),
    }
    if any(spec.name == "noise" for spec in model.serving_signature()):  # a noise-driven vocoder: 7 frames of it
        values["noise"] = tf.random.stateless_normal([1, 7 * model.config.hop_size, 1], seed=(3, 4))
    return {spec.name: values.get(spec.name, tf.ones([1], tf.float32)) for spec in model.serving_signature()}


def test_every_registered_type_has_tiny_params_and_one_entry_per_spelling():
    assert set(TINY_PARAMS) == {entry.name for entry in registry.MODEL_TYPES}
    for entry in registry.MODEL_TYPES:
        assert entry.config_class.model_types[0] == entry.name
        assert all(registry.model_type(alias) is entry for alias in entry.aliases)
        assert issubclass(entry.model_class, ServableModel) == (entry.role != registry.DISCRIMINATOR)
    for generator, discriminator in registry.DISCRIMINATOR_OF.items():
        assert registry.model_type(generator).role == registry.VOCODER
        assert registry.model_type(discriminator).role == registry.DISCRIMINATOR
    with pytest.raises(registry.UnknownModelType, match="fastspeech3"):
        registry.model_type("fastspeech3")


@pytest.mark.parametrize("entry", ENTRIES)
def test_registered_model_builds_saves_and_loads_back(entry, tmp_path):
    model = tiny_model(entry)
    assert type(model) is entry.model_class and model.built
    save_pretrained(model, tmp_path)
    loaded = TFAutoModel.from_pretrained(tmp_path)
    assert type(loaded) is entry.model_class and loaded.config == model.config
    assert len(loaded.weights) == len(model.weights) > 0
    for mine, theirs in zip(model.weights, loaded.weights):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy(), err_msg=mine.name)


@pytest.mark.parametrize("entry", [param for param in ENTRIES if param.values[0].role != registry.DISCRIMINATOR])
def test_registered_servable_model_exports_a_saved_model_that_serves_as_keras(entry, tmp_path):
    model = tiny_model(entry)
    assert model_type_of(model) == entry.name
    inputs = serving_inputs(model)
    expected = model.serve(inputs)
    if entry.role == registry.ACOUSTIC:
        assert expected[model.mel_output].shape[-1] == model.num_mels == NUM_MELS
    else:
        assert expected["audio"].shape[1] == 7 * model.config.hop_size
    info = export_saved_model(model, tmp_path / "saved")
    assert info["model_type"] == entry.name and info["role"] == entry.role
    served = tf.saved_model.load(str(tmp_path / "saved")).signatures["serving_default"](**inputs)
    assert set(served) == set(expected)
    for name, value in expected.items():
        np.testing.assert_allclose(served[name].numpy(), value.numpy(), atol=1e-5, err_msg=name)
