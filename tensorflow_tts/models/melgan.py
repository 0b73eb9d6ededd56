"""MelGAN generator and multi-scale discriminator, plus what every vocoder generator shares:
config handling, ``inference`` with a dynamic time axis and loading TensorFlowTTS 1.8 weights.
"""

import os
import re

import h5py
import numpy as np
import tensorflow as tf

from tensorflow_tts.configs.melgan import MelGANDiscriminatorConfig, MelGANGeneratorConfig
from tensorflow_tts.layers.residual_stack import (
    TFReflectionPad1d,
    TFResidualStack,
    make_activation,
    seeded_initializer,
)
from tensorflow_tts.layers.upsample import TFConvTranspose1d
from tensorflow_tts.layers.weight_norm import conv1d
from tensorflow_tts.utils.legacy_weights import is_legacy_h5, load_legacy_weights, normalize_weight_name

# The weight-norm wrapper of TensorFlowTTS 1.8 stored a boolean "initialized" flag per
# conv; our weight norm has no such state.
LEGACY_IGNORE = (r".*/initialized",)

# The old generators kept their layers in a Keras Sequential, the h5 group "sequential";
# the variable names inside it normally lack that scope, but accept it if present.
SEQ = r"(?:sequential/)?"
# A plain conv and a weight-normalised one were stored under different layer names.
CONV = r"(?:conv1d|weight_normalization)"
UPSAMPLE = r"(?:conv2d_transpose|weight_normalization)"
VAR = r"(kernel|bias|g)"


def legacy_renamer(rules, ignore=LEGACY_IGNORE, prefix=""):
    """A renamer for ``load_legacy_weights`` that can tell repeated names apart by occurrence.

    Args:
        rules: ``(pattern, replacement)`` pairs tried in order; the first pattern that
            fully matches the old (counter-free) name wins. ``replacement`` is a
            ``re.Match.expand`` template, a list of templates indexed by occurrence (the
            old file repeats names such as ``sequential/conv1d/kernel`` once the Keras
            counters are gone), or a callable ``(match, occurrence) -> name``.
        ignore: patterns of old names to drop on purpose.
        prefix: our model's variable scope, prepended to every target name.

    Old names that match no rule are returned unchanged, so the loader reports them.
    """
    compiled = [(re.compile(pattern), replacement) for pattern, replacement in rules]
    ignored = [re.compile(pattern) for pattern in ignore]

    def rename(name, occurrence):
        if any(pattern.fullmatch(name) for pattern in ignored):
            return None
        for pattern, replacement in compiled:
            match = pattern.fullmatch(name)
            if match is None:
                continue
            if callable(replacement):
                target = replacement(match, occurrence)
            elif isinstance(replacement, (list, tuple)):
                if occurrence >= len(replacement):
                    return name
                target = match.expand(replacement[occurrence])
            else:
                target = match.expand(replacement)
            return prefix + target
        return name

    return rename


class BaseVocoderGenerator(tf.keras.Model):
    """A generator built from one config; mels ``(B, T, num_mels)`` -> audio ``(B, T * hop, C)``.

    Subclasses set ``config_class``, build their layers in ``__init__``, implement
    ``call`` and ``legacy_rules`` (how TensorFlowTTS 1.8 named their weights).
    """

    config_class = None
    default_name = None

    def __init__(self, config=None, **kwargs):
        kwargs.setdefault("name", self.default_name)
        super().__init__(**kwargs)
        if config is None:
            config = self.config_class()
        elif isinstance(config, dict):
            config = self.config_class.from_dict(config)
        self.config = config

    def _build_frame(self, make_stage):
        """The layout MelGAN and HiFi-GAN share: reflect-padded first conv; per upsampling scale
        a transposed conv followed by the layers ``make_stage(stage, channels)`` returns;
        reflect-padded last conv. Channels halve at every stage."""
        config = self.config
        seed, weight_norm = config.initializer_seed, config.is_weight_norm
        self.activation = make_activation(config.nonlinear_activation, config.nonlinear_activation_params)
        pad = (config.kernel_size - 1) // 2
        self.first_pad = TFReflectionPad1d(pad, padding_type=config.padding_type, name="first_reflect_padding")
        self.first_conv = conv1d(
            config.filters, config.kernel_size, weight_norm=weight_norm, use_bias=config.use_bias,
            kernel_initializer=seeded_initializer(seed, 0), name="first_conv",
        )
        self.upsamples, self.stages = [], []
        for i, scale in enumerate(config.upsample_scales):
            channels = config.filters // (2 ** (i + 1))
            self.upsamples.append(
                TFConvTranspose1d(
                    channels, kernel_size=2 * scale, strides=scale, use_bias=config.use_bias,
                    is_weight_norm=weight_norm, kernel_initializer=seeded_initializer(seed, 1000 * (i + 1)),
                    name=f"conv_transpose_._{i}",
                )
            )
            self.stages.append(make_stage(i, channels))
        self.last_pad = TFReflectionPad1d(pad, padding_type=config.padding_type, name="last_reflect_padding")
        self.last_conv = conv1d(
            config.out_channels, config.kernel_size, weight_norm=weight_norm, use_bias=config.use_bias,
            kernel_initializer=seeded_initializer(seed, 1), name="last_conv",
        )

    def _generate(self, mels, training=False):
        """Args: mels ``(B, T, num_mels)``. Returns ``(B, T * prod(upsample_scales), out_channels)``."""
        x = self.first_conv(self.first_pad(mels))
        for upsample, stage in zip(self.upsamples, self.stages):
            x = upsample(self.activation(x))
            for block in stage:
                x = block(x, training=training)
        x = self.last_conv(self.last_pad(self.activation(x)))
        if self.config.use_final_nolinear_activation:
            x = tf.math.tanh(x)
        return x

    @property
    def hop_size(self):
        return self.config.hop_size

    @tf.function(reduce_retracing=True)
    def inference(self, mels):
        """Args: mels ``(B, T, num_mels)``, any T. Returns audio ``(B, T * hop_size, 1)``."""
        return self(mels, training=False)

    def build_for(self, num_mels=80):
        """Create the weights for ``num_mels`` mel bins (traces ``call`` symbolically; no audio is made)."""
        self.build((None, None, num_mels))
        return self

    # --- TensorFlowTTS 1.8 checkpoints -------------------------------------------------

    def legacy_rules(self):
        """``(old name pattern, our name)`` rules; see ``legacy_renamer``."""
        raise NotImplementedError

    def _scope_prefix(self):
        # Our variables are named "<model scope>/<layer>/...": the scope is what all share.
        names = [normalize_weight_name(weight.name) for weight in self.weights]
        common = os.path.commonprefix(names)
        return common[: common.rfind("/") + 1]

    def legacy_renamer(self):
        """Maps old counter-free weight names to ours (the model must be built)."""
        return legacy_renamer(self.legacy_rules(), prefix=self._scope_prefix())

    @staticmethod
    def _is_old_checkpoint(filepath):
        # The old generators kept every layer in one Keras Sequential, so their files have a
        # "sequential" group; a plain Keras save_weights(".h5") of our models has none.
        if not (str(filepath).endswith(".h5") and is_legacy_h5(filepath)):
            return False
        with h5py.File(filepath, "r") as h5:
            groups = [name.decode() if isinstance(name, bytes) else str(name) for name in h5.attrs["layer_names"]]
        return any(re.fullmatch(r"sequential(_\d+)?", group) for group in groups)

    def load_weights(self, filepath, *args, allow_partial=False, num_mels=80, **kwargs):
        """Load our own weights, or an ``.h5`` written by TensorFlowTTS 1.8.

        An old file is matched by name through ``legacy_rules``; any missing, unused or
        mis-shaped tensor raises ``LegacyWeightsError`` naming it, unless
        ``allow_partial``. An unbuilt model is first built for ``num_mels`` mel bins.
        """
        if self._is_old_checkpoint(filepath):
            if not self.built:
                self.build_for(num_mels)
            return load_legacy_weights(self, filepath, self.legacy_renamer(), allow_partial=allow_partial)
        return super().load_weights(filepath, *args, **kwargs)

    def get_config(self):
        return {"config": self.config.to_dict(), "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(config=cls.config_class.from_dict(config["config"]), name=config.get("name"))


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


class TFMelGANDiscriminator(tf.keras.layers.Layer):
    """One MelGAN discriminator: conv, strided grouped convs, two convs; every feature map is returned."""

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
        x = self.first_pad(audio)
        features = []
        for conv in self.convs:
            x = self.activation(conv(x))
            features.append(x)
        features.append(self.output_conv(x))
        return features

    def get_config(self):
        return {
            **super().get_config(),
            "out_channels": self.out_channels,
            "kernel_sizes": self.kernel_sizes,
            "filters": self.filters,
            "max_downsample_filters": self.max_downsample_filters,
            "use_bias": self.use_bias,
            "downsample_scales": self.downsample_scales,
            "nonlinear_activation": self.nonlinear_activation,
            "nonlinear_activation_params": self.nonlinear_activation_params,
            "padding_type": self.padding_type,
            "is_weight_norm": self.is_weight_norm,
            "initializer_seed": self.initializer_seed,
        }


class TFMelGANMultiScaleDiscriminator(tf.keras.Model):
    """MelGAN multi-scale discriminator: ``scales`` discriminators, each on audio pooled once more."""

    def __init__(self, config=None, **kwargs):
        kwargs.setdefault("name", "melgan_discriminator")
        super().__init__(**kwargs)
        if config is None:
            config = MelGANDiscriminatorConfig()
        elif isinstance(config, dict):
            config = MelGANDiscriminatorConfig.from_dict(config)
        self.config = config
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
