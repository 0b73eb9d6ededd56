"""The `save_pretrained` folder: config.yml, model.h5 and processor.json, and writing it.

The layout is TensorFlowTTS 1.8's; a model's files are written by `models.pretrained`.
"""

import logging
from pathlib import Path

from tensorflow_tts.configs.base_config import CONFIG_FILE_NAME, BaseConfig  # noqa: F401  (part of the layout)
from tensorflow_tts.models.pretrained import WEIGHTS_FILE_NAME, save_model, save_model_weights  # noqa: F401
from tensorflow_tts.processor.base_processor import PROCESSOR_FILE_NAME, BaseProcessor  # noqa: F401  (part of the layout)

logger = logging.getLogger(__name__)


class PretrainedError(ValueError):
    """A pretrained folder or weight file that does not fit the model asked for."""


def save_pretrained(obj, saved_dir):
    """Write a config, a model or a processor into the folder ``saved_dir``; returns the folder.

    * a config: ``config.yml`` (training-YAML layout: ``model_type`` + ``<model_type>_params``);
    * a model: its ``config.yml`` and ``model.h5`` (the model must be built);
    * a processor: ``processor.json`` (its mapper: symbol table, speakers, processor name).

    `tensorflow_tts.inference.AutoConfig`, `TFAutoModel` and `AutoProcessor` read them back.
    """
    saved_dir = Path(saved_dir)
    saved_dir.mkdir(parents=True, exist_ok=True)
    if isinstance(obj, (BaseConfig, BaseProcessor)):
        obj.save_pretrained(saved_dir)
    elif isinstance(getattr(obj, "config", None), BaseConfig) and hasattr(obj, "save_weights"):
        if not obj.built:
            raise PretrainedError(f"{obj.name}: build the model (call it once) before saving its weights")
        save_model(obj, saved_dir)
    else:
        raise TypeError(f"save_pretrained: expected a config, a model with a config or a processor, got {type(obj).__name__}")
    logger.info("saved %s to %s", type(obj).__name__, saved_dir)
    return saved_dir
