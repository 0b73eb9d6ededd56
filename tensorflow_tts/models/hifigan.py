"""HiFi-GAN generator and discriminators (multi-period; the multi-scale one is MelGAN's)."""

import tensorflow as tf

from tensorflow_tts.configs.hifigan import (
    HifiGANDiscriminatorConfig,
    HifiGANGeneratorConfig,
)
from tensorflow_tts.layers.hyperparameters import HyperParameterConfig
from tensorflow_tts.layers.residual_stack import (
    TFHifiResBlock,  # noqa: F401  (1.8's import path)
    TFMultiHifiResBlock,
    make_activation,
    seeded_initializer,
)
from tensorflow_tts.layers.weight_norm import conv2d
from tensorflow_tts.models.melgan import feature_maps
from tensorflow_tts.models.vocoder import CONV, SEQ, UPSAMPLE, VAR, BaseVocoderGenerator


class TFHifiGANGenerator(BaseVocoderGenerator):
    """HiFi-GAN generator: conv, then per upsampling scale a transposed conv and a
    multi-receptive-field fusion of residual blocks, then conv (+ tanh)."""

    config_class = HifiGANGeneratorConfig
    default_name = "hifigan_generator"

    def __init__(self, config=None, **kwargs):
        super().__init__(config, **kwargs)
        config = self.config
        seed = config.initializer_seed

        def resblock(stage, channels):
            return [
                TFMultiHifiResBlock(
                    kernel_sizes=config.stack_kernel_size,
                    dilation_rates=config.stack_dilation_rate,
                    filters=channels,
                    use_bias=config.use_bias,
                    nonlinear_activation=config.nonlinear_activation,
                    nonlinear_activation_params=config.nonlinear_activation_params,
                    padding_type=config.padding_type,
                    initializer_seed=None if seed is None else seed + 1000 * (stage + 1) + 1,
                    name=f"multi_hifigan_resblock_._{stage}",
                )
            ]

        self._build_frame(resblock)

    def call(self, mels, training=False):
        """Args: mels ``(B, T, num_mels)``. Returns audio ``(B, T * hop_size, out_channels)``."""
        return self._generate(mels, training)

    def legacy_rules(self):
        dilations = self.config.stack_dilation_rate

        def resblock_conv(match, occurrence):
            # The old block stored its dilated convs first, then the dilation-1 convs.
            stage, block, variable = match.group(1), match.group(2), match.group(3)
            count = len(dilations[int(block)]) if int(block) < len(dilations) else 0
            if occurrence >= 2 * count:
                return match.group(0)
            layer = f"dilated_conv_._{occurrence}" if occurrence < count else f"conv_._{occurrence - count}"
            return f"multi_hifigan_resblock_._{stage}/hifigan_resblock_._{block}/{layer}/{variable}"

        return [
            (SEQ + CONV + "/" + VAR, [r"first_conv/\1", r"last_conv/\1"]),
            (SEQ + r"conv_transpose_\._(\d+)/" + UPSAMPLE + "/" + VAR, r"conv_transpose_._\1/\2"),
            (SEQ + r"multi_hifigan_resblock_\._(\d+)/hifigan_resblock_\._(\d+)/conv1d/" + VAR, resblock_conv),
        ]


class TFHifiGANPeriodDiscriminator(HyperParameterConfig, tf.keras.layers.Layer):
    """Looks at audio folded into ``period`` columns: ``(B, T, 1) -> (B, T / period, period, 1)``, then strided 2-D convs."""

    hyperparameters = ("period", "out_channels", "n_layers", "kernel_size", "strides", "filters",
        "filter_scales", "max_filters", "nonlinear_activation", "nonlinear_activation_params",
        "initializer_seed", "is_weight_norm")

    def __init__(
        self,
        period,
        out_channels=1,
        n_layers=5,
        kernel_size=5,
        strides=3,
        filters=8,
        filter_scales=4,
        max_filters=1024,
        nonlinear_activation="LeakyReLU",
        nonlinear_activation_params=None,
        initializer_seed=42,
        is_weight_norm=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.period = period
        self.out_channels = out_channels
        self.n_layers = n_layers
        self.kernel_size = kernel_size
        self.strides = strides
        self.filters = filters
        self.filter_scales = filter_scales
        self.max_filters = max_filters
        self.nonlinear_activation = nonlinear_activation
        self.nonlinear_activation_params = dict(nonlinear_activation_params or {"alpha": 0.2})
        self.initializer_seed = initializer_seed
        self.is_weight_norm = is_weight_norm

        self.activation = make_activation(nonlinear_activation, self.nonlinear_activation_params)
        self.convs = []
        channels = filters
        for i in range(n_layers):
            self.convs.append(
                conv2d(
                    channels, (kernel_size, 1), strides=(strides, 1), padding="same", weight_norm=is_weight_norm,
                    kernel_initializer=seeded_initializer(initializer_seed, i), name=f"conv_._{i}",
                )
            )
            channels = min(channels * filter_scales, max_filters)
        self.output_conv = conv2d(
            out_channels, (3, 1), padding="same", weight_norm=is_weight_norm,
            kernel_initializer=seeded_initializer(initializer_seed, n_layers), name="output_conv",
        )

    def call(self, audio):
        """Args: audio ``(B, T, 1)``. Returns feature maps ``[(B, T_l, period, C_l), ...]``; the last is the score map."""
        batch_size, length = tf.shape(audio)[0], tf.shape(audio)[1]
        pad = (self.period - length % self.period) % self.period
        x = tf.pad(audio, [[0, 0], [0, pad], [0, 0]], mode="REFLECT")
        x = tf.reshape(x, [batch_size, -1, self.period, 1])
        return feature_maps(x, self.convs, self.activation, self.output_conv)


class TFHifiGANMultiPeriodDiscriminator(tf.keras.Model):
    """One TFHifiGANPeriodDiscriminator per entry of ``period_scales``."""

    def __init__(self, config=None, **kwargs):
        kwargs.setdefault("name", "hifigan_multi_period_discriminator")
        super().__init__(**kwargs)
        self.config = config = HifiGANDiscriminatorConfig.coerce(config)
        seed = config.initializer_seed
        self.discriminators = [
            TFHifiGANPeriodDiscriminator(
                period,
                out_channels=config.out_channels,
                n_layers=config.n_layers,
                kernel_size=config.kernel_size,
                strides=config.strides,
                filters=config.filters,
                filter_scales=config.filter_scales,
                max_filters=config.max_filters,
                nonlinear_activation=config.nonlinear_activation,
                nonlinear_activation_params=config.nonlinear_activation_params,
                initializer_seed=None if seed is None else seed + 100 * i,
                is_weight_norm=config.is_weight_norm,
                name=f"hifigan_period_discriminator_._{i}",
            )
            for i, period in enumerate(config.period_scales)
        ]

    def call(self, audio, training=False):
        """Args: audio ``(B, T, 1)``. Returns one list of feature maps per period."""
        return [discriminator(audio) for discriminator in self.discriminators]

    def get_config(self):
        return {"config": self.config.to_dict(), "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(config=HifiGANDiscriminatorConfig.from_dict(config["config"]), name=config.get("name"))


class TFHifiGANDiscriminator(tf.keras.Model):
    """HiFi-GAN's full discriminator: the multi-period one and MelGAN's multi-scale one, outputs concatenated."""

    def __init__(self, multiperiod_discriminator, multiscale_discriminator, **kwargs):
        kwargs.setdefault("name", "hifigan_discriminator")
        super().__init__(**kwargs)
        self.multiperiod_discriminator = multiperiod_discriminator
        self.multiscale_discriminator = multiscale_discriminator

    def call(self, audio, training=False):
        """Args: audio ``(B, T, 1)``. Returns the multi-period lists followed by the multi-scale lists."""
        return self.multiperiod_discriminator(audio, training=training) + self.multiscale_discriminator(
            audio, training=training
        )
