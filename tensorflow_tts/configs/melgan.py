"""MelGAN generator and multi-scale discriminator configs (keys as in TensorFlowTTS 1.8)."""

import dataclasses
import math
from typing import ClassVar

from tensorflow_tts.configs.base_config import BaseConfig


class UpsamplingGeneratorConfig:
    """What every generator config that halves its channels per upsampling stage shares."""

    def check_upsampling(self):
        if self.filters % (2 ** len(self.upsample_scales)) != 0:
            raise ValueError(
                f"filters ({self.filters}) must be divisible by 2 ** len(upsample_scales) = {2 ** len(self.upsample_scales)}"
            )

    @property
    def hop_size(self):
        """Audio samples per mel frame."""
        return math.prod(self.upsample_scales)


@dataclasses.dataclass
class MelGANGeneratorConfig(UpsamplingGeneratorConfig, BaseConfig):
    """MelGAN generator (Kumar et al., 2019); defaults are those of ``melgan.v1.yaml``.

    Mels ``(B, T, num_mels)`` become audio ``(B, T * prod(upsample_scales), out_channels)``.
    """

    model_types: ClassVar[tuple] = ("melgan_generator",)

    out_channels: int = 1  # audio channels (MB-MelGAN: subbands)
    kernel_size: int = 7  # kernel of the first and last conv
    filters: int = 512  # channels after the first conv; halved by every upsampling stage
    use_bias: bool = True
    upsample_scales: list = dataclasses.field(default_factory=lambda: [8, 8, 2, 2])  # product = hop size
    stack_kernel_size: int = 3  # residual stack kernel; stack j has dilation stack_kernel_size ** j
    stacks: int = 3  # residual stacks after each upsampling
    nonlinear_activation: str = "LeakyReLU"  # a tf.keras.layers class name
    nonlinear_activation_params: dict = dataclasses.field(default_factory=lambda: {"alpha": 0.2})
    padding_type: str = "REFLECT"  # tf.pad mode of the "same"-length convs
    use_final_nolinear_activation: bool = True  # tanh on the output (old spelling kept)
    is_weight_norm: bool = True  # weight norm on every conv
    initializer_seed: int = 42

    def __post_init__(self):
        if self.kernel_size % 2 != 1 or self.stack_kernel_size % 2 != 1:
            raise ValueError(f"kernel_size ({self.kernel_size}) and stack_kernel_size ({self.stack_kernel_size}) must be odd")
        self.check_upsampling()


@dataclasses.dataclass
class MelGANDiscriminatorConfig(BaseConfig):
    """MelGAN multi-scale discriminator; defaults are those of ``melgan.v1.yaml``."""

    model_types: ClassVar[tuple] = ("melgan_discriminator",)

    out_channels: int = 1
    scales: int = 3  # discriminators, each on audio average-pooled once more
    downsample_pooling: str = "AveragePooling1D"  # a tf.keras.layers class name
    downsample_pooling_params: dict = dataclasses.field(default_factory=lambda: {"pool_size": 4, "strides": 2})
    kernel_sizes: list = dataclasses.field(default_factory=lambda: [5, 3])  # first conv uses their product
    filters: int = 16
    max_downsample_filters: int = 1024
    use_bias: bool = True
    downsample_scales: list = dataclasses.field(default_factory=lambda: [4, 4, 4, 4])
    nonlinear_activation: str = "LeakyReLU"
    nonlinear_activation_params: dict = dataclasses.field(default_factory=lambda: {"alpha": 0.2})
    padding_type: str = "REFLECT"
    is_weight_norm: bool = True
    initializer_seed: int = 42

    def __post_init__(self):
        if len(self.kernel_sizes) != 2 or any(k % 2 != 1 for k in self.kernel_sizes):
            raise ValueError(f"kernel_sizes must be two odd numbers, got {self.kernel_sizes}")
