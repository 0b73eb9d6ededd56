"""Multi-band MelGAN configs (keys as in TensorFlowTTS 1.8)."""

import dataclasses
import math
from typing import ClassVar

from tensorflow_tts.configs.melgan import MelGANDiscriminatorConfig, MelGANGeneratorConfig


@dataclasses.dataclass
class MultiBandMelGANGeneratorConfig(MelGANGeneratorConfig):
    """MelGAN generator that predicts ``out_channels`` = ``subbands`` bands, merged by a PQMF.

    Defaults are those of ``multiband_melgan.v1.yaml``; hop size is
    ``prod(upsample_scales) * subbands`` (v1: 8 * 4 * 2 * 4 = 256).
    """

    model_types: ClassVar[tuple] = ("multiband_melgan_generator", "mb_melgan_generator")

    out_channels: int = 4
    filters: int = 384
    upsample_scales: list = dataclasses.field(default_factory=lambda: [8, 4, 2])
    stacks: int = 4
    is_weight_norm: bool = False
    subbands: int = 4  # PQMF bands
    taps: int = 62  # PQMF prototype order (even)
    cutoff_ratio: float = 0.142  # PQMF prototype cutoff, fraction of Nyquist
    beta: float = 9.0  # PQMF Kaiser window parameter

    def __post_init__(self):
        super().__post_init__()
        if self.out_channels != self.subbands:
            raise ValueError(f"out_channels ({self.out_channels}) must equal subbands ({self.subbands})")

    @property
    def hop_size(self):
        return math.prod(self.upsample_scales) * self.subbands


@dataclasses.dataclass
class MultiBandMelGANDiscriminatorConfig(MelGANDiscriminatorConfig):
    """Multi-scale discriminator of ``multiband_melgan.v1.yaml``."""

    model_types: ClassVar[tuple] = ("multiband_melgan_discriminator",)

    max_downsample_filters: int = 512
    downsample_scales: list = dataclasses.field(default_factory=lambda: [4, 4, 4])
    is_weight_norm: bool = False
