"""BaseConfig: plain dataclass configs read from and written to YAML."""

import dataclasses
import typing
from pathlib import Path
from typing import ClassVar

import yaml

# What `save_pretrained` writes in a model folder (TensorFlowTTS 1.8 used the same name).
CONFIG_FILE_NAME = "config.yml"


class ConfigError(ValueError):
    """A config file or dict that cannot be turned into a config object."""


def _field_type(cls, field):
    hints = typing.get_type_hints(cls)
    return hints.get(field.name, field.type)


def read_yaml(path):
    """The mapping in a YAML file (safe_load only; an empty file is an empty mapping).

    Errors name the file: unreadable, not YAML, or not a mapping at the top level.
    """
    path = Path(path)
    try:
        with open(path, encoding="utf-8") as stream:
            values = yaml.safe_load(stream)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read config ({error.strerror})") from error
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML ({error})") from error
    if values is None:
        return {}
    if not isinstance(values, dict):
        raise ConfigError(f"{path}: expected a mapping of keys to values at the top level")
    return values


@dataclasses.dataclass
class BaseConfig:
    """Base of every config: built from a dict or YAML, unknown keys are errors.

    Subclasses are ordinary dataclasses whose fields all have defaults. A field whose
    type is itself a BaseConfig subclass is built recursively from a nested mapping.

    A model's config lists the ``model_type`` spellings it answers to in ``model_types``
    (the first is the one written back). ``model_type`` is not a field: ``from_dict``
    accepts the key and checks it names this class, ``to_dict`` writes it first.
    """

    model_types: ClassVar[tuple] = ()  # empty for configs that are not a model's
    # Other spellings of a field that YAML files in use write: {alias: field name}. Both given
    # with different values is an error naming the two.
    key_aliases: ClassVar[dict] = {}

    @property
    def model_type(self):
        """The canonical ``model_type`` of this config (None for non-model configs)."""
        return self.model_types[0] if self.model_types else None

    @classmethod
    def from_dict(cls, values, source="config"):
        if values is None:
            values = {}
        if not isinstance(values, dict):
            raise ConfigError(f"{source}: expected a mapping of keys to values, got {type(values).__name__}")
        values = dict(values)
        if cls.model_types and "model_type" in values:
            model_type = values.pop("model_type")
            if model_type not in cls.model_types:
                raise ConfigError(
                    f"{source}: model_type {model_type!r} does not fit {cls.__name__}; expected {cls.model_types[0]!r}"
                )
        fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
        for alias, name in cls.key_aliases.items():
            if alias not in values:
                continue
            value = values.pop(alias)
            if name in values and values[name] != value:
                raise ConfigError(
                    f"{source}: {alias} ({value!r}) and {name} ({values[name]!r}) both give {name}; keep one"
                )
            values[name] = value
        unknown = sorted(set(values) - set(fields))
        if unknown:
            raise ConfigError(
                f"{source}: unknown key(s) {', '.join(repr(k) for k in unknown)} for {cls.__name__}; "
                f"known keys are: {', '.join(sorted(fields))}"
            )
        kwargs = {}
        for name, value in values.items():
            field_type = _field_type(cls, fields[name])
            if isinstance(field_type, type) and issubclass(field_type, BaseConfig):
                value = field_type.from_dict(value, source=f"{source}: {name}")
            kwargs[name] = value
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as error:
            raise ConfigError(f"{source}: {error}") from error

    @classmethod
    def coerce(cls, config):
        """What a model's ``__init__`` was given as its config: None (the defaults), a mapping or a config."""
        if config is None:
            return cls()
        if isinstance(config, dict):
            return cls.from_dict(config)
        return config

    @classmethod
    def from_yaml(cls, path):
        return cls.from_dict(read_yaml(path), source=str(path))

    def to_dict(self):
        """Every field (nested configs as mappings), preceded by ``model_type`` for a model config."""
        values = dataclasses.asdict(self)
        if self.model_types:
            values = {"model_type": self.model_type, **values}
        return values

    def to_yaml(self, path):
        with open(path, "w", encoding="utf-8") as stream:
            yaml.safe_dump(self.to_dict(), stream, sort_keys=False)

    def to_training_yaml_dict(self):
        """``{model_type: ..., <model_type>_params: {...}}``: the layout of a training YAML."""
        if not self.model_types:
            raise ConfigError(f"{type(self).__name__} is not a model config (it has no model_type)")
        params = dataclasses.asdict(self)
        return {"model_type": self.model_type, f"{self.model_type}_params": params}

    def save_pretrained(self, saved_dir):
        """Write ``<saved_dir>/config.yml`` in the training-YAML layout; returns its path.

        TensorFlowTTS 1.8's AutoConfig reads that layout too, and so does ours
        (``tensorflow_tts.inference.AutoConfig.from_pretrained``).
        """
        saved_dir = Path(saved_dir)
        saved_dir.mkdir(parents=True, exist_ok=True)
        path = saved_dir / CONFIG_FILE_NAME
        with open(path, "w", encoding="utf-8") as stream:
            yaml.safe_dump(self.to_training_yaml_dict(), stream, sort_keys=False)
        return path
