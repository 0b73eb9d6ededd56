"""Parallel WaveGAN generator and discriminator configs (keys as in TensorFlowTTS 1.8)."""

import dataclasses
import math
import typing
from typing import ClassVar

from tensorflow_tts.configs.base_config import BaseConfig


@dataclasses.dataclass
class ConditioningUpsampleConfig(BaseConfig):
    """`upsample_params` of the Parallel WaveGAN generator: how mels reach the audio rate.

    Per scale: repeat every frame ``scale`` times, then smooth along time with one shared
    ``(2 * scale + 1)``-tap kernel (applied to every mel channel alike), then the optional
    activation.
    """

    upsample_scales: typing.List[int] = dataclasses.field(default_factory=lambda: [4, 4, 4, 4])  # product = hop size
    nonlinear_activation: typing.Optional[str] = None  # a tf.keras.layers class name after each smoothing conv
    nonlinear_activation_params: dict = dataclasses.field(default_factory=dict)
    interpolate_mode: str = "nearest"  # only "nearest" (1.8 offered no other in its recipes)
    freq_axis_kernel_size: int = 1  # only 1: the smoothing never mixes mel channels

    def __post_init__(self):
        if not self.upsample_scales or any(int(scale) < 1 for scale in self.upsample_scales):
            raise ValueError(f"upsample_scales: expected whole numbers >= 1, got {self.upsample_scales!r}")
        if self.interpolate_mode != "nearest":
            raise ValueError(f"interpolate_mode: only 'nearest' is supported, got {self.interpolate_mode!r}")
        if self.freq_axis_kernel_size != 1:
            raise ValueError(f"freq_axis_kernel_size: only 1 is supported, got {self.freq_axis_kernel_size!r}")


@dataclasses.dataclass
class ParallelWaveGANGeneratorConfig(BaseConfig):
    """Parallel WaveGAN generator (Yamamoto et al., 2020); defaults are those of ``parallel_wavegan.v1.yaml``.

    Gaussian noise ``(B, T * hop_size, 1)`` runs through ``n_layers`` gated WaveNet blocks
    (dilation ``2 ** (i % (n_layers / stacks))``), each conditioned on the mels upsampled
    to the audio rate; the output is audio ``(B, T * hop_size, out_channels)``.
    """

    model_types: ClassVar[tuple] = ("parallel_wavegan_generator",)

    out_channels: int = 1
    kernel_size: int = 3  # of the dilated convs
    n_layers: int = 30  # residual blocks
    stacks: int = 3  # dilation cycles; n_layers must be a multiple
    residual_channels: int = 64
    gate_channels: int = 128  # the dilated conv's output, split in a tanh and a sigmoid half
    skip_channels: int = 64
    aux_channels: int = 80  # channels of the conditioning after its first conv
    aux_context_window: int = 2  # frames on each side the conditioning's first conv sees
    dropout_rate: float = 0.0
    dropout: typing.Optional[float] = None  # 1.8 recipes wrote this key (1.8 ignored it); if given, = dropout_rate
    use_bias: bool = True
    use_causal_conv: bool = False  # only false (1.8's causal variant was never published)
    upsample_conditional_features: bool = True  # only true: the mels are always upsampled
    upsample_params: ConditioningUpsampleConfig = dataclasses.field(default_factory=ConditioningUpsampleConfig)
    initializer_seed: int = 42

    def __post_init__(self):
        if isinstance(self.upsample_params, dict):
            self.upsample_params = ConditioningUpsampleConfig.from_dict(self.upsample_params, source="upsample_params")
        if self.dropout is not None:
            self.dropout_rate = float(self.dropout)
        if self.n_layers % self.stacks != 0:
            raise ValueError(f"n_layers ({self.n_layers}) must be a multiple of stacks ({self.stacks})")
        if self.kernel_size % 2 != 1:
            raise ValueError(f"kernel_size ({self.kernel_size}) must be odd")
        if self.gate_channels % 2 != 0:
            raise ValueError(f"gate_channels ({self.gate_channels}) must be even: it is split in two halves")
        if self.use_causal_conv:
            raise ValueError("use_causal_conv: only false is supported")
        if not self.upsample_conditional_features:
            raise ValueError("upsample_conditional_features: only true is supported")

    @property
    def upsample_scales(self):
        return list(self.upsample_params.upsample_scales)

    @property
    def hop_size(self):
        """Audio samples per mel frame."""
        return math.prod(self.upsample_scales)

    @property
    def dilations(self):
        """The dilation of each residual block, in order."""
        per_stack = self.n_layers // self.stacks
        return [2 ** (layer % per_stack) for layer in range(self.n_layers)]


@dataclasses.dataclass
class ParallelWaveGANDiscriminatorConfig(BaseConfig):
    """Parallel WaveGAN discriminator: a stack of dilated convs scoring every sample."""

    model_types: ClassVar[tuple] = ("parallel_wavegan_discriminator",)

    out_channels: int = 1
    kernel_size: int = 3
    n_layers: int = 10  # convs; the last one scores
    conv_channels: int = 64
    use_bias: bool = True
    dilation_factor: int = 1  # 1: dilation i for conv i (1 for the first); else dilation_factor ** i
    nonlinear_activation: str = "LeakyReLU"
    nonlinear_activation_params: dict = dataclasses.field(default_factory=lambda: {"alpha": 0.2})
    initializer_seed: int = 42
    apply_sigmoid_at_last: bool = False

    def __post_init__(self):
        if self.kernel_size % 2 != 1:
            raise ValueError(f"kernel_size ({self.kernel_size}) must be odd")
        if self.dilation_factor < 1:
            raise ValueError(f"dilation_factor ({self.dilation_factor}) must be at least 1")

    @property
    def dilations(self):
        """The dilation of each conv but the last (which has none)."""
        return [1 if i == 0 else (i if self.dilation_factor == 1 else self.dilation_factor**i) for i in range(self.n_layers - 1)]
