"""MelGAN generator and multi-scale discriminator (the shared generator frame is in models/vocoder.py)."""


import numpy as np
import tensorflow as tf

from tensorflow_tts.configs.melgan import (
    MelGANDiscriminatorConfig,
    MelGANGeneratorConfig,
)
from tensorflow_tts.layers.hyperparameters import HyperParameterConfig
from tensorflow_tts.layers.residual_stack import (
    TFReflectionPad1d,
    TFResidualStack,
    make_activation,
    seeded_initializer,
)
from tensorflow_tts.layers.upsample import TFConvTranspose1d  # noqa: F401  (1.8's import path)
from tensorflow_tts.layers.weight_norm import conv1d

# BaseVocoderGenerator and the legacy name patterns were defined here; this path keeps them importable.
from tensorflow_tts.models.vocoder import (  # noqa: F401
    CONV,
    SEQ,
    UPSAMPLE,
    VAR,
    BaseVocoderGenerator,
    legacy_renamer,
)



def feature_maps(x, convs, activation, output_conv):
    """What a GAN discriminator returns: the activation of each conv in turn, then the score map.

    Feature matching compares the maps; the adversarial loss reads the last one.
    """
    features = []
    for conv in convs:
        x = activation(conv(x))
        features.append(x)
    features.append(output_conv(x))
    return features

class TFMelGANGenerator(BaseVocoderGenerator):
    """MelGAN generator: conv, then per upsampling scale a transposed conv and residual stacks, then conv (+ tanh)."""

    config_class = MelGANGeneratorConfig
    default_name = "melgan_generator"

    def __init__(self, config=None, **kwargs):
        super().__init__(config, **kwargs)
        config = self.config
        seed = config.initializer_seed

        def residual_stacks(stage, channels):
            return [
                TFResidualStack(
                    kernel_size=config.stack_kernel_size,
                    filters=channels,
                    dilation_rate=config.stack_kernel_size**j,
                    use_bias=config.use_bias,
                    nonlinear_activation=config.nonlinear_activation,
                    nonlinear_activation_params=config.nonlinear_activation_params,
                    padding_type=config.padding_type,
                    is_weight_norm=config.is_weight_norm,
                    initializer_seed=None if seed is None else seed + 1000 * (stage + 1) + 10 * (j + 1),
                    name=f"residual_stack_._{stage}._._{j}",
                )
                for j in range(config.stacks)
            ]

        self._build_frame(residual_stacks)

    def call(self, mels, training=False):
        """Args: mels ``(B, T, num_mels)``. Returns audio ``(B, T * hop_size, out_channels)``."""
        return self._generate(mels, training)

    def legacy_rules(self):
        stack = r"residual_stack_\._(\d+)\._\._(\d+)/"
        return [
            (SEQ + CONV + "/" + VAR, [r"first_conv/\1", r"last_conv/\1"]),
            (SEQ + r"conv_transpose_\._(\d+)/" + UPSAMPLE + "/" + VAR, r"conv_transpose_._\1/\2"),
            # Plain: conv1d, conv1d, shortcut. Weight-normalised: three weight_normalization.
            (SEQ + stack + CONV + "/" + VAR, [
                r"residual_stack_._\1._._\2/dilated_conv/\3",
                r"residual_stack_._\1._._\2/pointwise_conv/\3",
                r"residual_stack_._\1._._\2/shortcut/\3",
            ]),
            (SEQ + stack + "shortcut/" + VAR, r"residual_stack_._\1._._\2/shortcut/\3"),
        ]


class TFMelGANDiscriminator(HyperParameterConfig, tf.keras.layers.Layer):
    """One MelGAN discriminator: conv, strided grouped convs, two convs; every feature map is returned."""

    hyperparameters = ("out_channels", "kernel_sizes", "filters", "max_downsample_filters", "use_bias",
        "downsample_scales", "nonlinear_activation", "nonlinear_activation_params", "padding_type",
        "is_weight_norm", "initializer_seed")

    def __init__(
        self,
        out_channels=1,
        kernel_sizes=(5, 3),
        filters=16,
        max_downsample_filters=1024,
        use_bias=True,
        downsample_scales=(4, 4, 4, 4),
        nonlinear_activation="LeakyReLU",
        nonlinear_activation_params=None,
        padding_type="REFLECT",
        is_weight_norm=True,
        initializer_seed=42,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.out_channels = out_channels
        self.kernel_sizes = list(kernel_sizes)
        self.filters = filters
        self.max_downsample_filters = max_downsample_filters
        self.use_bias = use_bias
        self.downsample_scales = list(downsample_scales)
        self.nonlinear_activation = nonlinear_activation
        self.nonlinear_activation_params = dict(nonlinear_activation_params or {"alpha": 0.2})
        self.padding_type = padding_type
        self.is_weight_norm = is_weight_norm
        self.initializer_seed = initializer_seed

        common = dict(use_bias=use_bias, weight_norm=is_weight_norm)
        first_kernel = int(np.prod(self.kernel_sizes))
        self.activation = make_activation(nonlinear_activation, self.nonlinear_activation_params)
        self.first_pad = TFReflectionPad1d((first_kernel - 1) // 2, padding_type=padding_type)
        self.convs = [
            conv1d(filters, first_kernel, kernel_initializer=seeded_initializer(initializer_seed, 0), name="conv_._0", **common)
        ]
        channels = filters
        for i, scale in enumerate(self.downsample_scales):
            out_channels_i = min(channels * scale, max_downsample_filters)
            self.convs.append(
                conv1d(
                    out_channels_i, scale * 10 + 1, strides=scale, padding="same", groups=max(channels // 4, 1),
                    kernel_initializer=seeded_initializer(initializer_seed, i + 1), name=f"conv_._{i + 1}", **common,
                )
            )
            channels = out_channels_i
        self.convs.append(
            conv1d(
                min(channels * 2, max_downsample_filters), self.kernel_sizes[0], padding="same",
                kernel_initializer=seeded_initializer(initializer_seed, len(self.convs)),
                name=f"conv_._{len(self.convs)}", **common,
            )
        )
        self.output_conv = conv1d(
            out_channels, self.kernel_sizes[1], padding="same",
            kernel_initializer=seeded_initializer(initializer_seed, len(self.convs)), name="output_conv", **common,
        )

    def call(self, audio):
        """Args: audio ``(B, T, 1)``. Returns the feature maps ``[(B, T_l, C_l), ...]``; the last is the score map."""
        return feature_maps(self.first_pad(audio), self.convs, self.activation, self.output_conv)


class TFMelGANMultiScaleDiscriminator(tf.keras.Model):
    """MelGAN multi-scale discriminator: ``scales`` discriminators, each on audio pooled once more."""

    def __init__(self, config=None, **kwargs):
        kwargs.setdefault("name", "melgan_discriminator")
        super().__init__(**kwargs)
        self.config = config = MelGANDiscriminatorConfig.coerce(config)
        seed = config.initializer_seed
        self.discriminators = [
            TFMelGANDiscriminator(
                out_channels=config.out_channels,
                kernel_sizes=config.kernel_sizes,
                filters=config.filters,
                max_downsample_filters=config.max_downsample_filters,
                use_bias=config.use_bias,
                downsample_scales=config.downsample_scales,
                nonlinear_activation=config.nonlinear_activation,
                nonlinear_activation_params=config.nonlinear_activation_params,
                padding_type=config.padding_type,
                is_weight_norm=config.is_weight_norm,
                initializer_seed=None if seed is None else seed + 100 * i,
                name=f"melgan_discriminator_scale_._{i}",
            )
            for i in range(config.scales)
        ]
        pooling_class = getattr(tf.keras.layers, config.downsample_pooling, None)
        if pooling_class is None:
            raise ValueError(f"downsample_pooling {config.downsample_pooling!r} is not a layer in tf.keras.layers")
        self.pooling = pooling_class(**config.downsample_pooling_params)

    def call(self, audio, training=False):
        """Args: audio ``(B, T, 1)``. Returns one list of feature maps per scale (see TFMelGANDiscriminator)."""
        outputs = []
        for i, discriminator in enumerate(self.discriminators):
            if i > 0:
                audio = self.pooling(audio)
            outputs.append(discriminator(audio))
        return outputs

    def get_config(self):
        return {"config": self.config.to_dict(), "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(config=MelGANDiscriminatorConfig.from_dict(config["config"]), name=config.get("name"))
