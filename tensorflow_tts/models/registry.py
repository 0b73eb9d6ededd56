"""The one table of model types: for each `model_type`, its config, its Keras class, its role and its discriminator.

Everything that needs to know which models exist (AutoConfig / TFAutoModel, export,
the synthesizer, the vocoder recipes, the tests that build every model) reads this
table. Adding a model type is one entry here plus the model's own files (its config
with `model_types`, its model class implementing `ServableModel` when it can be served).
"""

import dataclasses

from tensorflow_tts.configs.fastspeech import FastSpeechConfig
from tensorflow_tts.configs.fastspeech2 import FastSpeech2Config
from tensorflow_tts.configs.hifigan import (
    HifiGANDiscriminatorConfig,
    HifiGANGeneratorConfig,
)
from tensorflow_tts.configs.mb_melgan import (
    MultiBandMelGANDiscriminatorConfig,
    MultiBandMelGANGeneratorConfig,
)
from tensorflow_tts.configs.melgan import (
    MelGANDiscriminatorConfig,
    MelGANGeneratorConfig,
)
from tensorflow_tts.configs.parallel_wavegan import (
    ParallelWaveGANDiscriminatorConfig,
    ParallelWaveGANGeneratorConfig,
)
from tensorflow_tts.configs.tacotron2 import Tacotron2Config
from tensorflow_tts.models.fastspeech import TFFastSpeech
from tensorflow_tts.models.fastspeech2 import TFFastSpeech2
from tensorflow_tts.models.hifigan import (
    TFHifiGANGenerator,
    TFHifiGANMultiPeriodDiscriminator,
)
from tensorflow_tts.models.mb_melgan import TFMBMelGANGenerator
from tensorflow_tts.models.melgan import (
    TFMelGANGenerator,
    TFMelGANMultiScaleDiscriminator,
)
from tensorflow_tts.models.parallel_wavegan import (
    TFParallelWaveGANDiscriminator,
    TFParallelWaveGANGenerator,
)
from tensorflow_tts.models.tacotron2 import TFTacotron2

ACOUSTIC, VOCODER, DISCRIMINATOR = "acoustic", "vocoder", "discriminator"


@dataclasses.dataclass(frozen=True)
class ModelType:
    """One registered model type.

    name: the canonical `model_type` (a training YAML's `model_type`, its `<name>_params` block).
    role: "acoustic" (token ids -> mels), "vocoder" (mels -> audio) or "discriminator".
    discriminator: for a vocoder, the model_type of the discriminator its GAN recipe trains.
    """

    name: str
    config_class: type
    model_class: type
    role: str
    discriminator: str = None

    @property
    def aliases(self):
        """Every spelling of model_type that names this entry (the config's `model_types`)."""
        return self.config_class.model_types


MODEL_TYPES = (
    ModelType("fastspeech", FastSpeechConfig, TFFastSpeech, ACOUSTIC),
    ModelType("fastspeech2", FastSpeech2Config, TFFastSpeech2, ACOUSTIC),
    ModelType("tacotron2", Tacotron2Config, TFTacotron2, ACOUSTIC),
    ModelType("melgan_generator", MelGANGeneratorConfig, TFMelGANGenerator, VOCODER, "melgan_discriminator"),
    ModelType("multiband_melgan_generator", MultiBandMelGANGeneratorConfig, TFMBMelGANGenerator, VOCODER,
              "multiband_melgan_discriminator"),
    ModelType("hifigan_generator", HifiGANGeneratorConfig, TFHifiGANGenerator, VOCODER, "hifigan_discriminator"),
    ModelType("parallel_wavegan_generator", ParallelWaveGANGeneratorConfig, TFParallelWaveGANGenerator, VOCODER,
              "parallel_wavegan_discriminator"),
    ModelType("melgan_discriminator", MelGANDiscriminatorConfig, TFMelGANMultiScaleDiscriminator, DISCRIMINATOR),
    ModelType("multiband_melgan_discriminator", MultiBandMelGANDiscriminatorConfig, TFMelGANMultiScaleDiscriminator,
              DISCRIMINATOR),
    ModelType("hifigan_discriminator", HifiGANDiscriminatorConfig, TFHifiGANMultiPeriodDiscriminator, DISCRIMINATOR),
    ModelType("parallel_wavegan_discriminator", ParallelWaveGANDiscriminatorConfig, TFParallelWaveGANDiscriminator,
              DISCRIMINATOR),
)

# Every spelling of model_type, aliases included -> its entry.
REGISTRY = {alias: entry for entry in MODEL_TYPES for alias in entry.aliases}
# Canonical model_type -> model class (TFAutoModel's table, `tensorflow_tts.inference.MODEL_CLASSES`).
MODEL_CLASSES = {entry.name: entry.model_class for entry in MODEL_TYPES}
# Generator model_type -> the discriminator its GAN recipe trains.
DISCRIMINATOR_OF = {entry.name: entry.discriminator for entry in MODEL_TYPES if entry.discriminator}


class UnknownModelType(ValueError):
    """A model_type or a Keras class that the table does not know."""


def model_type(name):
    """The entry of a model_type spelling (aliases included)."""
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise UnknownModelType(f"unknown model_type {name!r}; known: {', '.join(sorted(REGISTRY))}") from None


def of_role(role):
    """The entries of one role ("acoustic", "vocoder" or "discriminator"), in table order."""
    return tuple(entry for entry in MODEL_TYPES if entry.role == role)


def model_type_of(model, roles=(ACOUSTIC, VOCODER)):
    """The entry of a Keras model (or class) of ours, among `roles`.

    The most derived registered class decides: TFFastSpeech2 is also a TFFastSpeech,
    TFMBMelGANGenerator a TFMelGANGenerator; a user's subclass of ours counts as its parent.
    """
    by_class = {entry.model_class: entry for entry in MODEL_TYPES if entry.role in roles}
    cls = model if isinstance(model, type) else type(model)
    for base in cls.__mro__:
        if base in by_class:
            return by_class[base]
    raise UnknownModelType(f"{cls.__name__} is not a registered model of role {' or '.join(roles)}; expected one of "
                           f"{', '.join(model_class.__name__ for model_class in by_class)}")
