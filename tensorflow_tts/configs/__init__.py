"""Configs: one dataclass per model, all loaded from YAML through BaseConfig."""

from tensorflow_tts.configs.base_config import BaseConfig, ConfigError
