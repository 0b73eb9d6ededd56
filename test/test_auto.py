"""AutoConfig, TFAutoModel and AutoProcessor: build what a file names, save and load it back exactly."""

import json
from pathlib import Path

import h5py
import numpy as np
import pytest
import yaml

import tensorflow_tts  # noqa: F401  (selects Keras 2 before tensorflow is imported)
import tensorflow as tf  # noqa: E402

from tensorflow_tts.configs import (  # noqa: E402
    ConfigError,
    FastSpeech2Config,
    HifiGANGeneratorConfig,
    MelGANDiscriminatorConfig,
    MultiBandMelGANGeneratorConfig,
    PreprocessConfig,
)
from tensorflow_tts.configs.registry import MODEL_CONFIGS, read_yaml  # noqa: E402
from tensorflow_tts.inference import (  # noqa: E402
    MODEL_CLASSES,
    AutoConfig,
    AutoProcessor,
    PretrainedError,
    TFAutoModel,
    save_pretrained,
)
from tensorflow_tts.models import TFFastSpeech2, TFMBMelGANGenerator, TFMelGANMultiScaleDiscriminator  # noqa: E402
from tensorflow_tts.models.legacy_weights import OWN_FORMAT_ATTRIBUTE, is_legacy_h5  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
COMPAT = Path(__file__).resolve().parents[2] / "shared" / "compat"
EXAMPLE_CONFIGS = sorted(ROOT.glob("examples/*/conf/*.yaml"))

TINY_FASTSPEECH2 = dict(
    n_speakers=2,
    encoder_hidden_size=16,
    encoder_num_hidden_layers=1,
    encoder_num_attention_heads=2,
    encoder_attention_head_size=8,
    encoder_intermediate_size=32,
    decoder_hidden_size=16,
    decoder_num_hidden_layers=1,
    decoder_num_attention_heads=2,
    decoder_attention_head_size=8,
    decoder_intermediate_size=32,
    duration_predictor_filters=16,
    variant_predictor_filter=16,
    postnet_conv_filters=16,
    num_mels=8,
    max_position_embeddings=64,
)
MODEL_CLASS_OF = {
    "fastspeech2": TFFastSpeech2,
    "multiband_melgan_generator": TFMBMelGANGenerator,
    "melgan_discriminator": TFMelGANMultiScaleDiscriminator,
}
TINY_CONFIGS = {
    "fastspeech2": FastSpeech2Config(**TINY_FASTSPEECH2),
    "multiband_melgan_generator": MultiBandMelGANGeneratorConfig(filters=16, upsample_scales=[2, 2], stacks=1),
    "melgan_discriminator": MelGANDiscriminatorConfig(scales=2, filters=4, downsample_scales=[2], max_downsample_filters=8),
}


def compat_fixture(name):
    path = COMPAT / name
    if not path.exists():
        pytest.skip(f"compat fixture {path} is missing")
    return path


def assert_same_weights(model, other):
    assert len(model.weights) == len(other.weights)
    for mine, theirs in zip(model.weights, other.weights):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy(), err_msg=mine.name)


# ---------------------------------------------------------------------------- model_type
def test_model_type_is_checked_not_stored_and_written_back():
    config = FastSpeech2Config.from_dict({"model_type": "fastspeech2", "n_speakers": 3})
    assert config.model_type == "fastspeech2" and config == FastSpeech2Config(n_speakers=3)
    assert list(config.to_dict())[0] == "model_type" and config.to_dict()["model_type"] == "fastspeech2"
    assert FastSpeech2Config.from_dict(config.to_dict()) == config
    with pytest.raises(ConfigError, match="model_type 'fastspeech' does not fit FastSpeech2Config"):
        FastSpeech2Config.from_dict({"model_type": "fastspeech"})
    with pytest.raises(ConfigError, match="unknown key.*'model_type'"):
        PreprocessConfig.from_dict({"model_type": "fastspeech2"})


def test_an_old_alias_is_accepted_and_the_canonical_name_written():
    config = MultiBandMelGANGeneratorConfig.from_dict({"model_type": "mb_melgan_generator"})
    assert config.to_dict()["model_type"] == "multiband_melgan_generator"


def test_every_model_type_has_a_config_and_a_model_class():
    for model_type, config_class in MODEL_CONFIGS.items():
        assert model_type in config_class.model_types
        assert config_class().model_type in MODEL_CLASSES, model_type


# ---------------------------------------------------------------------------- AutoConfig
def test_auto_config_reads_a_training_yaml_and_picks_other_blocks(tmp_path):
    path = tmp_path / "hifigan.yaml"
    path.write_text(
        "model_type: hifigan_generator\n"
        "hifigan_generator_params:\n  filters: 64\n  upsample_scales: [4, 4]\n"
        "  stack_kernel_size: [3]\n  stack_dilation_rate: [[1, 3]]\n  stacks: 1\n"
        "hifigan_discriminator_params:\n  period_scales: [2, 3]\n"
        "melgan_discriminator_params:\n  scales: 2\n"
        "batch_size: 16\noptimizer_params:\n  initial_learning_rate: 0.001\n"
    )
    generator = AutoConfig.from_pretrained(path)
    assert isinstance(generator, HifiGANGeneratorConfig) and generator.upsample_scales == [4, 4]
    assert AutoConfig.from_pretrained(path, model_type="hifigan_discriminator").period_scales == [2, 3]
    assert AutoConfig.from_pretrained(path, model_type="melgan_discriminator").scales == 2


def test_auto_config_reads_a_flat_old_config_json():
    config = AutoConfig.from_pretrained(compat_fixture("fastspeech2.config.json"))
    assert isinstance(config, FastSpeech2Config) and config.n_speakers == 2


def test_auto_config_errors_name_the_file(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("model_type: fastspeech3\n")
    with pytest.raises(ConfigError, match="broken.yaml: unknown model_type 'fastspeech3'"):
        AutoConfig.from_pretrained(path)
    path.write_text("model_type: fastspeech2\nfastspeech2_params:\n  hidden_size: 3\n")
    with pytest.raises(ConfigError, match="broken.yaml: fastspeech2_params: unknown key.*'hidden_size'"):
        AutoConfig.from_pretrained(path)
    with pytest.raises(ConfigError, match="no config.yml"):
        AutoConfig.from_pretrained(tmp_path)


def test_config_save_pretrained_round_trips(tmp_path):
    config = TINY_CONFIGS["fastspeech2"]
    path = config.save_pretrained(tmp_path)
    assert path.name == "config.yml"
    assert set(read_yaml(path)) == {"model_type", "fastspeech2_params"}  # 1.8's AutoConfig reads it too
    assert AutoConfig.from_pretrained(tmp_path) == config


# ---------------------------------------------------------------------------- TFAutoModel
@pytest.mark.parametrize("model_type", list(TINY_CONFIGS))
def test_model_save_pretrained_round_trips_bit_for_bit(tmp_path, model_type):
    num_mels = 20 if model_type.endswith("_generator") else None  # read back from the file
    model = TFAutoModel.from_pretrained(config=TINY_CONFIGS[model_type], num_mels=num_mels)
    assert type(model) is MODEL_CLASS_OF[model_type]
    save_pretrained(model, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yml", "model.h5"]
    with h5py.File(tmp_path / "model.h5", "r") as h5:
        assert OWN_FORMAT_ATTRIBUTE in h5.attrs
    assert not is_legacy_h5(tmp_path / "model.h5")

    loaded = TFAutoModel.from_pretrained(tmp_path)
    assert type(loaded) is type(model) and loaded.config == model.config
    assert_same_weights(model, loaded)


def test_weights_that_do_not_fit_the_config_are_an_error(tmp_path):
    save_pretrained(TFAutoModel.from_pretrained(config=TINY_CONFIGS["multiband_melgan_generator"]), tmp_path)
    wider = MultiBandMelGANGeneratorConfig(filters=32, upsample_scales=[2, 2], stacks=1)
    with pytest.raises(PretrainedError, match="model.h5: does not fit TFMBMelGANGenerator"):
        TFAutoModel.from_pretrained(tmp_path, config=wider)
    (tmp_path / "model.h5").unlink()
    with pytest.raises(PretrainedError, match="expected a model.h5 folder"):
        TFAutoModel.from_pretrained(tmp_path)


@pytest.mark.parametrize("key", ["model", "generator"])
def test_a_trainer_checkpoint_loads(tmp_path, key):
    """Our trainer saves tf.train.Checkpoint(model=...) (seq2seq) or (generator=..., discriminator=...)."""
    config = TINY_CONFIGS["fastspeech2" if key == "model" else "multiband_melgan_generator"]
    model = TFAutoModel.from_pretrained(config=config, num_mels=20)  # a vocoder's mel bins are read back
    checkpoint = tf.train.Checkpoint(steps=tf.Variable(7, dtype=tf.int64), **{key: model})
    tf.train.CheckpointManager(checkpoint, tmp_path / "checkpoints", max_to_keep=1).save(checkpoint_number=7)
    config.save_pretrained(tmp_path)

    for path in (tmp_path / "checkpoints" / "ckpt-7", tmp_path / "checkpoints", tmp_path):
        assert_same_weights(model, TFAutoModel.from_pretrained(path, config=config if path == tmp_path else None))


def test_a_checkpoint_of_another_size_is_an_error(tmp_path):
    model = TFAutoModel.from_pretrained(config=TINY_CONFIGS["multiband_melgan_generator"])
    checkpoint = tf.train.Checkpoint(generator=model)
    prefix = tf.train.CheckpointManager(checkpoint, tmp_path, max_to_keep=1).save(checkpoint_number=1)
    wider = MultiBandMelGANGeneratorConfig(filters=32, upsample_scales=[2, 2], stacks=1)
    with pytest.raises(PretrainedError, match="ckpt-1: the 'generator' model in this checkpoint does not fit"):
        TFAutoModel.from_pretrained(prefix, config=wider)


def test_an_old_tensorflowtts_h5_is_detected_and_reproduces_its_audio():
    name = "multiband_melgan"
    model = TFAutoModel.from_pretrained(compat_fixture(f"{name}.h5"), config=compat_fixture(f"{name}.config.json"))
    io = np.load(compat_fixture(f"{name}.io.npz"))
    np.testing.assert_allclose(model.inference(tf.constant(io["mels"])).numpy(), io["audio"], atol=1e-5)


_BUILT_CONFIGS = []  # recipes share blocks (a discriminator, a corpus variant): build each config once


def assert_builds(config):
    if config not in _BUILT_CONFIGS:
        assert TFAutoModel.from_pretrained(config=config).weights
        _BUILT_CONFIGS.append(config)


@pytest.mark.parametrize("path", EXAMPLE_CONFIGS, ids=lambda path: f"{path.parts[-3]}/{path.name}")
def test_every_example_config_loads_and_builds(path, tmp_path):
    values = read_yaml(path)
    block = values.get(f"{values.get('model_type')}_params") or {}
    if "n_speakers" in block and block["n_speakers"] is None:
        # Sized from the dump by the recipe; alone, the config says so and builds once given a number.
        with pytest.raises(ConfigError, match="n_speakers: null takes the number of speakers from a dump"):
            AutoConfig.from_pretrained(path)
        block["n_speakers"] = 3
        path = tmp_path / path.name
        path.write_text(yaml.safe_dump(values), encoding="utf-8")
    assert_builds(AutoConfig.from_pretrained(path))
    # GAN recipes: their discriminator blocks build too.
    for key in read_yaml(path):
        block = key[: -len("_params")]
        if key.endswith("_params") and block in MODEL_CONFIGS:
            assert_builds(AutoConfig.from_pretrained(path, model_type=block))


# ---------------------------------------------------------------------------- AutoProcessor
def text_ids_cases():
    path = COMPAT / "text_ids.json"
    if not path.is_file():
        return []
    return sorted(json.loads(path.read_text(encoding="utf-8"))["processors"].items())


@pytest.mark.parametrize("lang,entry", text_ids_cases(), ids=lambda value: value if isinstance(value, str) else "")
def test_auto_processor_reads_the_original_mappers_and_saves_processor_json(tmp_path, lang, entry):
    processor = AutoProcessor.from_pretrained(COMPAT / entry["mapper"])
    assert type(processor).__name__ == entry["processor"]
    kwargs = {"inference": True} if "inference=True" in entry["call"] else {}
    for item in entry["items"][:3]:
        assert processor.text_to_sequence(item["text"], **kwargs) == item["ids"], item["text"]

    save_pretrained(processor, tmp_path)
    assert (tmp_path / "processor.json").is_file()
    loaded = AutoProcessor.from_pretrained(tmp_path)
    assert type(loaded) is type(processor)
    assert loaded.symbol_to_id == processor.symbol_to_id and loaded.speakers_map == processor.speakers_map
    for item in entry["items"]:
        assert loaded.text_to_sequence(item["text"], **kwargs) == item["ids"]


def test_yaml_written_by_to_yaml_is_flat_and_loads(tmp_path):
    config = TINY_CONFIGS["multiband_melgan_generator"]
    config.to_yaml(tmp_path / "flat.yml")
    values = yaml.safe_load((tmp_path / "flat.yml").read_text())
    assert values["model_type"] == "multiband_melgan_generator"
    assert AutoConfig.from_pretrained(tmp_path / "flat.yml") == config
