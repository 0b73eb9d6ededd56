"""AutoConfig, TFAutoModel and AutoProcessor: pick the class from what a file says it holds.

They read our `save_pretrained` folders (config.yml, model.h5, processor.json) and what
TensorFlowTTS 1.8 left behind: training YAMLs, flat config.json files, old `.h5` weights
(detected and loaded by name) and mapper JSONs; TFAutoModel also reads the checkpoints
our trainer writes.
"""

import json
import logging
from pathlib import Path

import h5py
import tensorflow as tf

from tensorflow_tts.configs.base_config import CONFIG_FILE_NAME, BaseConfig, ConfigError
from tensorflow_tts.configs.registry import (
    MODEL_CONFIGS,
    model_config_from_dict,
    read_yaml,
)
from tensorflow_tts.inference.pretrained import WEIGHTS_FILE_NAME, PretrainedError
from tensorflow_tts.models import registry
from tensorflow_tts.models.fastspeech import TFFastSpeech
from tensorflow_tts.models.legacy_weights import is_legacy_h5
from tensorflow_tts.models.serving import ServableModel
from tensorflow_tts.models.tacotron2 import TFTacotron2
from tensorflow_tts.models.vocoder import BaseVocoderGenerator
from tensorflow_tts.models.weight_files import check_weight_file
from tensorflow_tts.processor.registry import load_processor

logger = logging.getLogger(__name__)

# Canonical model_type -> model class (the registry's); aliases resolve through the config class.
MODEL_CLASSES = registry.MODEL_CLASSES

# Models whose `load_weights` reads TensorFlowTTS 1.8 files (by name, see legacy_weights).
LEGACY_LOADABLE = (TFFastSpeech, TFTacotron2, BaseVocoderGenerator)

# Config file names looked for in a folder, in this order (1.8 wrote config.yml too).
CONFIG_FILE_NAMES = (CONFIG_FILE_NAME, "config.yaml", "config.json")


def _read_config_file(path):
    """The mapping in a YAML or JSON config file."""
    path = Path(path)
    if path.suffix == ".json":
        try:
            values = json.loads(path.read_text(encoding="utf-8-sig"))
        except OSError as error:
            raise ConfigError(f"{path}: cannot read config ({error.strerror})") from error
        except ValueError as error:
            raise ConfigError(f"{path}: not valid JSON ({error})") from error
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: expected a JSON object at the top level")
        return values
    return read_yaml(path)


def _config_file_in(folder):
    for name in CONFIG_FILE_NAMES:
        if (folder / name).is_file():
            return folder / name
    raise ConfigError(f"{folder}: no {' / '.join(CONFIG_FILE_NAMES)} in this folder")


class AutoConfig:
    """The model config a file describes, whatever its layout.

    Accepts a training YAML (``model_type`` + ``<model_type>_params``), our saved
    ``config.yml``, a flat old ``config.json`` (``model_type`` next to the model's keys),
    or a folder holding one of them.
    """

    @staticmethod
    def from_pretrained(pretrained_path, model_type=None):
        """Args:
            pretrained_path: a YAML/JSON config file or a folder with ``config.yml``.
            model_type: another model block of a training YAML, e.g. its discriminator
                (``"hifigan_discriminator"``); default the file's ``model_type``.

        Returns the config object (e.g. FastSpeech2Config). Raises ConfigError naming the
        file and the problem.
        """
        path = Path(pretrained_path)
        if path.is_dir():
            path = _config_file_in(path)
        values = _read_config_file(path)
        return model_config_from_dict(values, model_type=model_type, source=str(path))

    @staticmethod
    def from_dict(values, model_type=None, source="config"):
        """The same from an already-read mapping (either layout)."""
        return model_config_from_dict(values, model_type=model_type, source=source)


def model_class_for(config):
    """The model class that a config builds."""
    try:
        return MODEL_CLASSES[config.model_type]
    except KeyError:
        raise ConfigError(f"no model class for model_type {config.model_type!r}") from None


def build_model(model, num_mels=80):
    """Create every weight of ``model`` (a cheap call on a tiny input, or a symbolic build)."""
    # Without autograph: converting every layer's call only to create weights took seconds
    # of a fresh process's start (our models need no conversion, see export.serving_function).
    return tf.autograph.experimental.do_not_convert(_build_model)(model, num_mels)


def _build_model(model, num_mels):
    if isinstance(model, ServableModel):  # acoustic models: one call on ~10 tokens; vocoders: num_mels
        return model.build_once(num_mels)
    model.build((None, None, 1))  # discriminators: audio (B, T, 1)
    return model


def first_kernel_input_size(path):
    """The input channels of the first 3-D weight in Keras load order that reads more than one
    channel (a vocoder's mel bins; Parallel WaveGAN's first kernel reads its 1-channel noise), or None."""
    with h5py.File(path, "r") as h5:
        for layer_name in h5.attrs.get("layer_names", []):
            group = h5[layer_name.decode() if isinstance(layer_name, bytes) else layer_name]
            for weight_name in group.attrs.get("weight_names", []):
                weight = group[weight_name.decode() if isinstance(weight_name, bytes) else weight_name]
                if len(weight.shape) == 3 and weight.shape[1] > 1:
                    return weight.shape[1]
    return None


def _checkpoint_first_conv_input_size(prefix):
    """A vocoder checkpoint's mel bins: the input channels of the conv that reads the mels (``first_conv``;
    Parallel WaveGAN's ``conv_in``, its ``first_conv`` reads 1-channel noise), or None."""
    for name, shape in tf.train.list_variables(prefix):
        if ("/first_conv/" in name or "/conv_in/" in name) and "optimizer" not in name and len(shape) == 3 \
                and shape[1] > 1:
            return shape[1]
    return None


def _checkpoint_prefix(path):
    """A tf.train checkpoint prefix for a prefix, a folder holding checkpoints, or None."""
    path = Path(path)
    if Path(str(path) + ".index").is_file():
        return str(path)
    if path.is_dir():
        for folder in (path, path / "checkpoints"):
            latest = tf.train.latest_checkpoint(str(folder))
            if latest is not None:
                return latest
    return None


def _checkpoint_key(config):
    # The names under which our trainers put the model (see trainers/): seq2seq "model",
    # GAN "generator" and "discriminator".
    if config.model_type.endswith("_generator"):
        return "generator"
    if config.model_type.endswith("_discriminator"):
        return "discriminator"
    return "model"


def restore_checkpoint(model, prefix, key):
    """Restore ``model`` from the trainer checkpoint ``prefix``, where it is saved as ``key``.

    Only the model is read (no optimizer, no step). Every weight of the (built) model must
    be in the checkpoint.
    """
    keys = {name.split("/", 1)[0] for name, _ in tf.train.list_variables(prefix)}
    if key not in keys:
        models = sorted(keys & {"model", "generator", "discriminator"})
        if len(models) != 1:
            raise PretrainedError(f"{prefix}: no {key!r} model in this checkpoint (it holds {', '.join(sorted(keys))})")
        key = models[0]
    try:
        status = tf.train.Checkpoint(**{key: model}).restore(prefix)
        status.expect_partial()
        status.assert_existing_objects_matched()
    except (AssertionError, ValueError, tf.errors.OpError) as error:
        raise PretrainedError(f"{prefix}: the {key!r} model in this checkpoint does not fit {model.name}: {error}") from None
    logger.info("restored %s from %s (%s)", model.name, prefix, key)


def load_h5(model, path, allow_partial=False):
    """Load our ``model.h5`` or an old TensorFlowTTS ``.h5`` (detected) into a built model.

    Returns the LoadReport of an old file, None for ours. A file of another model family
    raises `WeightFileError` saying in one line what it holds.
    """
    path = str(path)
    if is_legacy_h5(path):
        if not isinstance(model, LEGACY_LOADABLE):
            raise PretrainedError(f"{path}: loading TensorFlowTTS 1.8 weights into {type(model).__name__} is not supported")
        return model.load_weights(path, allow_partial=allow_partial)
    check_weight_file(model, path)  # another model's file: one line, not Keras' layer count
    try:
        # tf_keras' own HDF5 reader: layers and weights by position, shapes checked.
        tf.keras.Model.load_weights(model, path)
    except (ValueError, OSError) as error:
        raise PretrainedError(f"{path}: does not fit {type(model).__name__} with this config: {error}") from None
    return None


class TFAutoModel:
    """Builds the model a config names and loads its weights."""

    @staticmethod
    def from_pretrained(pretrained_path=None, config=None, allow_partial=False, num_mels=None, **kwargs):
        """Args:
            pretrained_path: None (random weights), a ``save_pretrained`` folder, a ``.h5``
                (ours or TensorFlowTTS 1.8's), a trainer checkpoint (``.../ckpt-N``) or a
                folder of checkpoints (its latest).
            config: a config object, a config file or folder, or a mapping; default: the
                ``config.yml`` of the folder (or beside the file) ``pretrained_path``.
            allow_partial: an old ``.h5`` may miss tensors or have extra ones (logged).
            num_mels: vocoders' mel bins; default read from the weight file, else 80.
            kwargs: passed to the model class (e.g. ``name``); 1.8's ``is_build`` is accepted
                and ignored (the model is always built).

        Returns the built model with its weights loaded. 1.8's older argument order,
        ``from_pretrained(config, pretrained_path)``, is recognised by the config object first.
        """
        kwargs.pop("is_build", None)
        if isinstance(pretrained_path, BaseConfig):
            pretrained_path, config = config, pretrained_path
        path = Path(pretrained_path) if pretrained_path is not None else None
        if path is not None and not path.exists() and _checkpoint_prefix(path) is None:
            raise PretrainedError(f"{path}: no such file, folder or checkpoint")
        config = _resolve_config(config, path)
        model = model_class_for(config)(config, **kwargs)

        weights = checkpoint = None
        if path is not None:
            if path.is_dir() and (path / WEIGHTS_FILE_NAME).is_file():
                weights = path / WEIGHTS_FILE_NAME
            elif path.is_file() and h5py.is_hdf5(path):
                weights = path
            else:
                checkpoint = _checkpoint_prefix(path)
                if checkpoint is None:
                    raise PretrainedError(
                        f"{path}: expected a {WEIGHTS_FILE_NAME} folder, an .h5 weight file or a trainer checkpoint"
                    )
        if num_mels is None and weights is not None:
            num_mels = first_kernel_input_size(weights)
        elif num_mels is None and checkpoint is not None:
            num_mels = _checkpoint_first_conv_input_size(checkpoint)
        build_model(model, num_mels or 80)
        if weights is not None:
            load_h5(model, weights, allow_partial=allow_partial)
        elif checkpoint is not None:
            restore_checkpoint(model, checkpoint, _checkpoint_key(config))
        return model


def _resolve_config(config, path):
    if isinstance(config, BaseConfig):
        if config.model_type not in MODEL_CONFIGS:
            raise ConfigError(f"{type(config).__name__} is not a model config")
        return config
    if isinstance(config, dict):
        return AutoConfig.from_dict(config)
    if config is not None:
        return AutoConfig.from_pretrained(config)
    if path is None:
        raise ConfigError("TFAutoModel.from_pretrained: pass config= (a config, a file or a folder) or pretrained_path=")
    folder = path if path.is_dir() else path.parent
    # A checkpoint folder sits inside the experiment folder that holds the config.
    for candidate in (folder, folder.parent):
        if any((candidate / name).is_file() for name in CONFIG_FILE_NAMES):
            return AutoConfig.from_pretrained(candidate)
    raise ConfigError(
        f"{path}: no {' / '.join(CONFIG_FILE_NAMES)} in {folder} or {folder.parent}; pass config= (a config, a file or a folder)"
    )


class AutoProcessor:
    """The text processor a mapper JSON names (its ``processor_name``)."""

    @staticmethod
    def from_pretrained(pretrained_path):
        """Args: a mapper JSON (ours or TensorFlowTTS 1.8's), or a folder with
        ``processor.json`` or one ``*_mapper.json``. Returns e.g. an LJSpeechProcessor."""
        return load_processor(pretrained_path)


__all__ = ["AutoConfig", "TFAutoModel", "AutoProcessor", "MODEL_CLASSES", "build_model", "model_class_for"]
