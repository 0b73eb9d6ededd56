"""BaseConfig: plain dataclass configs read from and written to YAML."""

import dataclasses
import typing
from pathlib import Path

import yaml


class ConfigError(ValueError):
    """A config file or dict that cannot be turned into a config object."""


def _field_type(cls, field):
    hints = typing.get_type_hints(cls)
    return hints.get(field.name, field.type)


@dataclasses.dataclass
class BaseConfig:
    """Base of every config: built from a dict or YAML, unknown keys are errors.

    Subclasses are ordinary dataclasses whose fields all have defaults. A field whose
    type is itself a BaseConfig subclass is built recursively from a nested mapping.
    """

    @classmethod
    def from_dict(cls, values, source="config"):
        if values is None:
            values = {}
        if not isinstance(values, dict):
            raise ConfigError(f"{source}: expected a mapping of keys to values, got {type(values).__name__}")
        fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
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
    def from_yaml(cls, path):
        path = Path(path)
        try:
            with open(path, encoding="utf-8") as stream:
                values = yaml.safe_load(stream)
        except OSError as error:
            raise ConfigError(f"{path}: cannot read config ({error.strerror})") from error
        except yaml.YAMLError as error:
            raise ConfigError(f"{path}: not valid YAML ({error})") from error
        return cls.from_dict(values, source=str(path))

    def to_dict(self):
        return dataclasses.asdict(self)

    def to_yaml(self, path):
        with open(path, "w", encoding="utf-8") as stream:
            yaml.safe_dump(self.to_dict(), stream, sort_keys=False)
