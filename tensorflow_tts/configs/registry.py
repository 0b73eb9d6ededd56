"""Which config class a `model_type` names, and reading the model part of a config file.

A TensorFlowTTS training YAML holds `model_type: "fastspeech2"` and the model's keys under
`fastspeech2_params:`; GAN recipes add `<name>_discriminator_params:`. Everything else in
the file (batching, optimizer, loop) belongs to the data and trainer configs. Old
`config.json` files are flat instead: `model_type` next to the model's keys.
"""

import dataclasses

from tensorflow_tts.configs.base_config import BaseConfig, ConfigError, read_yaml  # noqa: F401  (read_yaml re-exported)


def model_config_classes():
    """Every config class that names model types (its `model_types`), subclasses included.

    The classes say it themselves, so this list is never kept by hand; `tensorflow_tts.configs`
    imports every config module, and `tensorflow_tts.models.registry` pairs each with its model.
    """
    found, pending = [], [BaseConfig]
    while pending:
        for subclass in pending.pop().__subclasses__():
            pending.append(subclass)
            if subclass.__dict__.get("model_types"):
                found.append(subclass)
    return found


# Every spelling of model_type, aliases included, -> its config class.
MODEL_CONFIGS = {model_type: cls for cls in model_config_classes() for model_type in cls.model_types}


def config_class(model_type, source="config"):
    try:
        return MODEL_CONFIGS[model_type]
    except (KeyError, TypeError):
        raise ConfigError(
            f"{source}: unknown model_type {model_type!r}; known: {', '.join(sorted(MODEL_CONFIGS))}"
        ) from None


def model_config_from_yaml(values, model_type=None, source="config"):
    """The config of `model_type` (default: the file's `model_type`) from a training YAML mapping.

    Reads the `<model_type>_params` block; a missing block gives the model's defaults.
    """
    model_type = model_type or values.get("model_type")
    if not model_type:
        raise ConfigError(f"{source}: no 'model_type' key; expected e.g. model_type: fastspeech2")
    cls = config_class(model_type, source)
    params = dict(values.get(f"{model_type}_params") or {})
    return cls.from_dict(params, source=f"{source}: {model_type}_params")


def is_flat_model_config(values, model_type=None):
    """True for a flat `{model_type, <the model's keys>}` mapping (an old config.json).

    A training YAML has `<model_type>_params` blocks (and other `*_params` blocks that are
    not keys of the model); a flat mapping has neither.
    """
    model_type = model_type or values.get("model_type")
    cls = config_class(model_type)
    if f"{model_type}_params" in values:
        return False
    fields = {field.name for field in dataclasses.fields(cls)}
    return not any(key.endswith("_params") and key not in fields for key in values)


def model_config_from_dict(values, model_type=None, source="config"):
    """The model config in either layout: a training YAML (`<model_type>_params`) or flat.

    `model_type` picks another block of a training YAML (e.g. its discriminator); a flat
    mapping must then carry that model_type itself.
    """
    if not isinstance(values, dict):
        raise ConfigError(f"{source}: expected a mapping of keys to values, got {type(values).__name__}")
    chosen = model_type or values.get("model_type")
    if not chosen:
        raise ConfigError(f"{source}: no 'model_type' key; expected e.g. model_type: fastspeech2")
    cls = config_class(chosen, source)
    if is_flat_model_config(values, chosen):
        return cls.from_dict(values, source=source)
    return model_config_from_yaml(values, chosen, source=source)


def split_training_yaml(values):
    """(model blocks, the rest): `model_type` and every `*_params` block vs. data/trainer keys."""
    model_keys = {"model_type"} | {key for key in values if key.endswith("_params") and key[: -len("_params")] in MODEL_CONFIGS}
    return (
        {key: values[key] for key in values if key in model_keys},
        {key: values[key] for key in values if key not in model_keys},
    )
