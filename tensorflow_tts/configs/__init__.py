"""Configs: one dataclass per model, all loaded from YAML through BaseConfig."""

from tensorflow_tts.configs.base_config import BaseConfig, ConfigError
from tensorflow_tts.configs.preprocess import PreprocessConfig
from tensorflow_tts.configs.fastspeech import FastSpeechConfig
from tensorflow_tts.configs.fastspeech2 import FastSpeech2Config
from tensorflow_tts.configs.tacotron2 import Tacotron2Config
from tensorflow_tts.configs.melgan import MelGANDiscriminatorConfig, MelGANGeneratorConfig
from tensorflow_tts.configs.mb_melgan import MultiBandMelGANDiscriminatorConfig, MultiBandMelGANGeneratorConfig
from tensorflow_tts.configs.hifigan import HifiGANDiscriminatorConfig, HifiGANGeneratorConfig
from tensorflow_tts.configs.parallel_wavegan import ParallelWaveGANDiscriminatorConfig, ParallelWaveGANGeneratorConfig
