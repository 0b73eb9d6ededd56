"""HiFi-GAN generator and multi-period discriminator configs (keys as in TensorFlowTTS 1.8).

HiFi-GAN's multi-scale discriminator is MelGAN's: see MelGANDiscriminatorConfig.
"""

import dataclasses
from typing import ClassVar

from tensorflow_tts.configs.base_config import BaseConfig
from tensorflow_tts.configs.melgan import UpsamplingGeneratorConfig


@dataclasses.dataclass
class HifiGANGeneratorConfig(UpsamplingGeneratorConfig, BaseConfig):
    """HiFi-GAN generator (Kong et al., 2020); defaults are those of ``hifigan.v1.yaml``."""

    model_types: ClassVar[tuple] = ("hifigan_generator",)

    out_channels: int = 1
    kernel_size: int = 7  # kernel of the first and last conv
    filters: int = 512  # halved by every upsampling stage
    use_bias: bool = True
    upsample_scales: list = dataclasses.field(default_factory=lambda: [8, 8, 2, 2])  # product = hop size
    stacks: int = 3  # residual blocks fused after each upsampling
    stack_kernel_size: list = dataclasses.field(default_factory=lambda: [3, 7, 11])  # one per block
    stack_dilation_rate: list = dataclasses.field(default_factory=lambda: [[1, 3, 5], [1, 3, 5], [1, 3, 5]])
    nonlinear_activation: str = "LeakyReLU"
    nonlinear_activation_params: dict = dataclasses.field(default_factory=lambda: {"alpha": 0.2})
    padding_type: str = "REFLECT"
    use_final_nolinear_activation: bool = True  # tanh on the output (old spelling kept)
    # Weight norm on the first, upsampling and last convs; like TensorFlowTTS 1.8, never
    # on the residual-block convs.
    is_weight_norm: bool = False
    initializer_seed: int = 42

    def __post_init__(self):
        if not self.stacks == len(self.stack_kernel_size) == len(self.stack_dilation_rate):
            raise ValueError(
                f"stacks ({self.stacks}), len(stack_kernel_size) ({len(self.stack_kernel_size)}) and "
                f"len(stack_dilation_rate) ({len(self.stack_dilation_rate)}) must be equal"
            )
        self.check_upsampling()


@dataclasses.dataclass
class HifiGANDiscriminatorConfig(BaseConfig):
    """HiFi-GAN multi-period discriminator; defaults are those of ``hifigan.v1.yaml``."""

    model_types: ClassVar[tuple] = ("hifigan_discriminator",)

    out_channels: int = 1
    period_scales: list = dataclasses.field(default_factory=lambda: [2, 3, 5, 7, 11])  # one discriminator each
    n_layers: int = 5  # strided convs per period discriminator
    kernel_size: int = 5
    strides: int = 3
    filters: int = 8  # of the first conv; times filter_scales per layer, capped at max_filters
    filter_scales: int = 4
    max_filters: int = 1024
    nonlinear_activation: str = "LeakyReLU"
    nonlinear_activation_params: dict = dataclasses.field(default_factory=lambda: {"alpha": 0.2})
    is_weight_norm: bool = False
    initializer_seed: int = 42
