"""Parallel WaveGAN generator and discriminator (Yamamoto et al., 2020).

The generator turns Gaussian noise into audio, conditioned on the mels. The noise is drawn
inside ``call`` as TensorFlowTTS 1.8 did, or given (``noise=``), which makes the output a
function of its inputs: the serving signature takes it, so exported models are
deterministic and streamed chunks can reuse the one-shot noise (see inference/streaming.py).
"""

import math

import tensorflow as tf

from tensorflow_tts.layers.conv1d import Conv1D
from tensorflow_tts.configs.parallel_wavegan import (
    ParallelWaveGANDiscriminatorConfig,
    ParallelWaveGANGeneratorConfig,
)
from tensorflow_tts.layers.residual_stack import make_activation
from tensorflow_tts.layers.upsample import TFConvInUpsampleNetWork  # noqa: F401  (1.8 imported it from here)
from tensorflow_tts.layers.wavenet import TFWaveNetResidualBlock, he_normal
from tensorflow_tts.models.vocoder import VAR, BaseVocoderGenerator
from tensorflow_tts.utils import step_random

# 1.8's name of the WaveNet block, importable from where 1.8 defined it.
TFResidualBlock = TFWaveNetResidualBlock

# 1.8 prefixed its variables with the model's name, whatever it was built with.
_MODEL = r"[^/]+/"


class TFParallelWaveGANGenerator(BaseVocoderGenerator):
    """Noise ``(B, T * hop_size, 1)`` + mels ``(B, T, num_mels)`` -> audio ``(B, T * hop_size, out_channels)``.

    1x1 conv of the noise; ``n_layers`` WaveNet blocks conditioned on the upsampled mels,
    their skip outputs summed and scaled by ``sqrt(1 / n_layers)``; ReLU, 1x1 conv, ReLU,
    1x1 conv, tanh.
    """

    config_class = ParallelWaveGANGeneratorConfig
    default_name = "parallel_wavegan_generator"
    # 1.8's generator files start with the group of its first conv (ours: "first_conv").
    legacy_group = r"first_convolution(_\d+)?"

    def __init__(self, config=None, **kwargs):
        super().__init__(config, **kwargs)
        config = self.config
        seed = config.initializer_seed
        upsample = config.upsample_params
        self.upsample_net = TFConvInUpsampleNetWork(
            upsample.upsample_scales, aux_channels=config.aux_channels, aux_context_window=config.aux_context_window,
            nonlinear_activation=upsample.nonlinear_activation,
            nonlinear_activation_params=upsample.nonlinear_activation_params, initializer_seed=seed, name="upsample_net",
        )
        self.first_conv = Conv1D(
            config.residual_channels, 1, kernel_initializer=he_normal(seed, 0), name="first_conv"
        )
        self.residual_blocks = [
            TFWaveNetResidualBlock(
                kernel_size=config.kernel_size, residual_channels=config.residual_channels,
                gate_channels=config.gate_channels, skip_channels=config.skip_channels, dilation_rate=dilation,
                dropout_rate=config.dropout_rate, use_bias=config.use_bias,
                initializer_seed=None if seed is None else seed + 10 * (i + 1), name=f"residual_block_._{i}",
            )
            for i, dilation in enumerate(config.dilations)
        ]
        self.last_convs = [
            Conv1D(config.skip_channels, 1, use_bias=config.use_bias,
                                   kernel_initializer=he_normal(seed, 1), name="last_conv_._0"),
            Conv1D(config.out_channels, 1, kernel_initializer=he_normal(seed, 2), name="last_conv_._1"),
        ]

    def call(self, mels, training=False, noise=None):
        """Args:
            mels: ``(B, T, num_mels)``.
            noise: ``(B, N)`` or ``(B, N, 1)`` with ``N >= T * hop_size``; its first
                ``T * hop_size`` samples drive the generator. None: standard normal noise
                drawn here (as TensorFlowTTS 1.8).

        Returns: audio ``(B, T * hop_size, out_channels)``.
        """
        conditioning = self.upsample_net(mels)  # (B, L, aux_channels)
        batch_size, length = tf.shape(conditioning)[0], tf.shape(conditioning)[1]
        if noise is None:
            noise = step_random.normal([batch_size, length, 1], dtype=conditioning.dtype)
        else:
            noise = tf.cast(noise, conditioning.dtype)  # float16 under mixed precision
            if noise.shape.rank == 2:
                noise = noise[..., tf.newaxis]
            noise = noise[:, :length]
        x = self.first_conv(noise)
        skips = 0.0
        for block in self.residual_blocks:
            x, skip = block(x, conditioning, training=training)
            skips += skip
        x = skips * math.sqrt(1.0 / len(self.residual_blocks))
        x = self.last_convs[1](tf.nn.relu(self.last_convs[0](tf.nn.relu(x))))
        return tf.math.tanh(x)

    @tf.function(reduce_retracing=True, autograph=False)
    def inference(self, mels, noise=None):
        """Args: mels ``(B, T, num_mels)``, any T; noise as in ``call``. Returns audio ``(B, T * hop_size, 1)``."""
        return self(mels, training=False, noise=noise)

    @property
    def num_mels(self):
        """Mel bins the built generator reads: the input channels of its conditioning conv."""
        return int(self.upsample_net.conv_in.kernel.shape[-2])

    def serving_signature(self, batch_size=None):
        """mels (B, F, num_mels), noise (B, F * hop_size, 1): standard normal samples."""
        return [
            tf.TensorSpec([batch_size, None, self.num_mels], tf.float32, name="mels"),
            tf.TensorSpec([batch_size, None, 1], tf.float32, name="noise"),
        ]

    def serve(self, inputs, batch_size=None):
        """{mels (B, F, num_mels)[, noise (B, F * hop_size, 1)]} -> {audio (B, F * hop_size, 1)}.

        Without noise (a text2wav export feeds only mels) it is drawn inside.
        """
        return {"audio": self(inputs["mels"], training=False, noise=inputs.get("noise"))}

    def legacy_rules(self):
        upsample = _MODEL + r"tf_conv_in_upsample_net_work/"
        return [
            (_MODEL + "first_convolution/" + VAR, r"first_conv/\1"),
            (upsample + "conv_in/kernel", "upsample_net/conv_in/kernel"),
            # The smoothing convs were Keras-counted "conv2d", "conv2d_1", ...: their order.
            (upsample + "upsample_network/conv2d/kernel",
             lambda match, occurrence: f"upsample_net/smoothing_conv_._{occurrence}/kernel"),
            (_MODEL + r"(residual_block_\._\d+)/tf_conv1d/" + VAR, r"\1/dilated_conv/\2"),
            (_MODEL + r"(residual_block_\._\d+)/(conv1x1_aux|conv1x1_out|conv1x1_skip)/" + VAR, r"\1/\2/\3"),
            (_MODEL + "tf_conv1d1x1/" + VAR, [r"last_conv_._0/\1", r"last_conv_._1/\1"]),
        ]


class TFParallelWaveGANDiscriminator(tf.keras.Model):
    """``n_layers - 1`` dilated convs with activations, then a scoring conv: audio ``(B, T, 1)`` -> ``(B, T, out_channels)``."""

    def __init__(self, config=None, **kwargs):
        kwargs.setdefault("name", "parallel_wavegan_discriminator")
        super().__init__(**kwargs)
        self.config = config = ParallelWaveGANDiscriminatorConfig.coerce(config)
        seed = config.initializer_seed
        self.convs = [
            Conv1D(
                config.conv_channels, config.kernel_size, padding="same", dilation_rate=dilation,
                use_bias=config.use_bias, kernel_initializer=he_normal(seed, i), name=f"conv_._{i}",
            )
            for i, dilation in enumerate(config.dilations)
        ]
        self.activation = make_activation(config.nonlinear_activation, config.nonlinear_activation_params)
        self.output_conv = Conv1D(
            config.out_channels, config.kernel_size, padding="same", use_bias=config.use_bias,
            kernel_initializer=he_normal(seed, len(self.convs)), name="output_conv",
        )

    def call(self, audio, training=False):
        """Args: audio ``(B, T, 1)``. Returns scores ``(B, T, out_channels)`` (sigmoid with ``apply_sigmoid_at_last``)."""
        x = audio
        for conv in self.convs:
            x = self.activation(conv(x))
        x = self.output_conv(x)
        return tf.math.sigmoid(x) if self.config.apply_sigmoid_at_last else x

    def get_config(self):
        return {"config": self.config.to_dict(), "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(config=ParallelWaveGANDiscriminatorConfig.from_dict(config["config"]), name=config.get("name"))
