"""The `save_pretrained` folder: config.yml, model.h5 and processor.json, and writing it.

The layout is TensorFlowTTS 1.8's. `model.h5` is a Keras HDF5 weight file with one extra
root attribute (`legacy_weights.OWN_FORMAT_ATTRIBUTE`) so it is never taken for an old
file, which would be loaded by name through the renaming rules instead.
"""

import logging
import os
from pathlib import Path

import h5py

import tensorflow_tts
from tensorflow_tts.configs.base_config import CONFIG_FILE_NAME, BaseConfig  # noqa: F401  (part of the layout)
from tensorflow_tts.models.legacy_weights import OWN_FORMAT_ATTRIBUTE
from tensorflow_tts.processor.base_processor import BaseProcessor

logger = logging.getLogger(__name__)

WEIGHTS_FILE_NAME = "model.h5"
PROCESSOR_FILE_NAME = "processor.json"


class PretrainedError(ValueError):
    """A pretrained folder or weight file that does not fit the model asked for."""


def save_model_weights(model, path):
    """Write ``model``'s weights to the HDF5 file ``path``, marked as our own format.

    The file is written next to ``path`` first and moved into place, so an interrupted
    save never leaves a half-written ``model.h5``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    model.save_weights(str(partial), save_format="h5")
    with h5py.File(partial, "a") as h5:
        h5.attrs[OWN_FORMAT_ATTRIBUTE] = tensorflow_tts.__version__
    os.replace(partial, path)
    return path


def save_pretrained(obj, saved_dir):
    """Write a config, a model or a processor into the folder ``saved_dir``; returns the folder.

    * a config: ``config.yml`` (training-YAML layout: ``model_type`` + ``<model_type>_params``);
    * a model: its ``config.yml`` and ``model.h5`` (the model must be built);
    * a processor: ``processor.json`` (its mapper: symbol table, speakers, processor name).

    `tensorflow_tts.inference.AutoConfig`, `TFAutoModel` and `AutoProcessor` read them back.
    """
    saved_dir = Path(saved_dir)
    saved_dir.mkdir(parents=True, exist_ok=True)
    if isinstance(obj, BaseConfig):
        obj.save_pretrained(saved_dir)
    elif isinstance(obj, BaseProcessor):
        obj.save_mapper(saved_dir / PROCESSOR_FILE_NAME)
    elif isinstance(getattr(obj, "config", None), BaseConfig) and hasattr(obj, "save_weights"):
        if not obj.built:
            raise PretrainedError(f"{obj.name}: build the model (call it once) before saving its weights")
        obj.config.save_pretrained(saved_dir)
        save_model_weights(obj, saved_dir / WEIGHTS_FILE_NAME)
    else:
        raise TypeError(f"save_pretrained: expected a config, a model with a config or a processor, got {type(obj).__name__}")
    logger.info("saved %s to %s", type(obj).__name__, saved_dir)
    return saved_dir
