"""Inference: AutoConfig, TFAutoModel, AutoProcessor and the `save_pretrained` folder they read."""

from tensorflow_tts.inference.auto import (
    MODEL_CLASSES,
    AutoConfig,
    AutoProcessor,
    TFAutoModel,
)
from tensorflow_tts.inference.pretrained import (
    CONFIG_FILE_NAME,
    PROCESSOR_FILE_NAME,
    WEIGHTS_FILE_NAME,
    PretrainedError,
    save_model_weights,
    save_pretrained,
)

__all__ = [
    "AutoConfig",
    "AutoProcessor",
    "TFAutoModel",
    "MODEL_CLASSES",
    "PretrainedError",
    "save_pretrained",
    "save_model_weights",
    "CONFIG_FILE_NAME",
    "WEIGHTS_FILE_NAME",
    "PROCESSOR_FILE_NAME",
]
