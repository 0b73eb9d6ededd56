"""Inference: AutoConfig, TFAutoModel, AutoProcessor and the `save_pretrained` folder they read.

The names below load on first use (PEP 562), so that `tensorflow_tts.inference.tflite` and a
Synthesizer over .tflite files run with LiteRT alone: importing this package imports no TensorFlow.
"""

import importlib

_WHERE = {
    "AutoConfig": "auto",
    "AutoProcessor": "auto",
    "TFAutoModel": "auto",
    "MODEL_CLASSES": "auto",
    "PretrainedError": "pretrained",
    "save_pretrained": "pretrained",
    "save_model_weights": "pretrained",
    "CONFIG_FILE_NAME": "pretrained",
    "WEIGHTS_FILE_NAME": "pretrained",
    "PROCESSOR_FILE_NAME": "pretrained",
}

__all__ = list(_WHERE)


def __getattr__(name):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(_WHERE))
