"""What every vocoder generator shares: one frame built from its config, serving, and loading TensorFlowTTS 1.8 weights by name."""

import os
import re

import h5py
import tensorflow as tf

from tensorflow_tts.layers import kernels
from tensorflow_tts.layers.checkpointing import run_block
from tensorflow_tts.layers.residual_stack import (
    TFReflectionPad1d,
    fused_conv1d,
    make_activation,
    pad_activated,
    seeded_initializer,
)
from tensorflow_tts.layers.upsample import TFConvTranspose1d
from tensorflow_tts.layers.weight_norm import conv1d
from tensorflow_tts.models.legacy_weights import (
    is_legacy_h5,
    load_legacy_weights,
    normalize_weight_name,
)
from tensorflow_tts.models.serving import ServableModel
from tensorflow_tts.models.weight_files import check_weight_file

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


class BaseVocoderGenerator(ServableModel, tf.keras.Model):
    """A generator built from one config; mels ``(B, T, num_mels)`` -> audio ``(B, T * hop, C)``.

    Subclasses set ``config_class``, build their layers in ``__init__``, implement
    ``call`` and ``legacy_rules`` (how TensorFlowTTS 1.8 named their weights).

    With ``gradient_checkpointing``, training recomputes the activations of each residual
    stack / MRF block in the backward pass (`layers.checkpointing`).
    """

    config_class = None
    default_name = None
    # An h5 with a top-level group of this name was written by TensorFlowTTS 1.8: the old
    # MelGAN/HiFi-GAN generators kept every layer in one Keras Sequential.
    legacy_group = r"sequential(_\d+)?"
    gradient_checkpointing = False

    def __init__(self, config=None, **kwargs):
        kwargs.setdefault("name", self.default_name)
        super().__init__(**kwargs)
        self.config = config = self.config_class.coerce(config)
        self._inference_tflite = None  # see inference_tflite

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
        """Args: mels ``(B, T, num_mels)``. Returns ``(B, T * prod(upsample_scales), out_channels)``.

        Outside training, once built, the signal runs as rows ``(B, 1, T, C)`` from the first
        conv to the last: every conv is a Conv2D over rows (`residual_stack.fused_conv1d`), so
        the convs need no reshape of the signal before and after. TensorFlow's reshapes are
        free, but in a TFLite file XNNPACK copied the signal at many of them (memmove took 19 %
        of the MB-MelGAN v1 int8 vocoder's CPU samples, 7 % in rows); in rows the int8 vocoder
        took 0.80-0.85 of the time, the text2wav file 0.93-0.94, with the same values.
        """
        rows = not training and self.last_conv.built  # built: the first call builds the layers in order
        x = tf.expand_dims(mels, 1) if rows else mels
        x = self._conv(self.first_conv, self.first_pad(x), rows)
        for upsample, stage in zip(self.upsamples, self.stages):
            x = upsample(self.activation(x))
            for block in stage:
                x = run_block(block, x, training=training, recompute=self.gradient_checkpointing)
        x = self._conv(self.last_conv, pad_activated(self.last_pad, self.activation, x, training), rows)
        if self.config.use_final_nolinear_activation:
            x = tf.math.tanh(x)
        return tf.squeeze(x, 1) if rows else x

    @staticmethod
    def _conv(layer, x, rows):
        # In rows the conv is no Keras call: cast to the layer's compute dtype as Keras would.
        return fused_conv1d(layer, tf.cast(x, layer.compute_dtype)) if rows else layer(x)

    @property
    def hop_size(self):
        return self.config.hop_size

    @tf.function(reduce_retracing=True, autograph=False)
    def inference(self, mels):
        """Args: mels ``(B, T, num_mels)``, any T. Returns audio ``(B, T * hop_size, 1)``."""
        return self(mels, training=False)

    @property
    def inference_tflite(self):
        """1.8's batch-1 tf.function for TFLite conversion: mels ``(1, T, num_mels)`` -> audio ``(1, T * hop_size, 1)``.

        Made on first use, when the mel bins are known (a static channel axis keeps the
        convolutions builtin TFLite ops).
        """
        if self._inference_tflite is None:
            if not self.built:
                self.build_once()

            def inference_tflite(mels):
                with kernels.portable():  # for the TFLite converter, which knows builtin ops only
                    return self(mels, training=False)

            self._inference_tflite = tf.function(
                inference_tflite, input_signature=self.serving_signature(1), autograph=False
            )
        return self._inference_tflite

    def build_once(self, num_mels=80):
        """Create the weights for ``num_mels`` mel bins (traces ``call`` symbolically; no audio is made)."""
        self.build((None, None, num_mels))
        return self

    @property
    def num_mels(self):
        """Mel bins the built generator reads: the input channels of its first conv."""
        return int(self.first_conv.kernel.shape[-2])

    def serving_signature(self, batch_size=None):
        """mels (B, F, num_mels)."""
        return [tf.TensorSpec([batch_size, None, self.num_mels], tf.float32, name="mels")]

    def serve(self, inputs, batch_size=None):
        """{mels (B, F, num_mels)} -> {audio (B, F * hop_size, 1)}."""
        return {"audio": self(inputs["mels"], training=False)}

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

    @classmethod
    def _is_old_checkpoint(cls, filepath):
        # Old files have a `legacy_group`; a plain Keras save_weights(".h5") of our models has none.
        if not (str(filepath).endswith(".h5") and is_legacy_h5(filepath)):
            return False
        with h5py.File(filepath, "r") as h5:
            groups = [name.decode() if isinstance(name, bytes) else str(name) for name in h5.attrs["layer_names"]]
        return any(re.fullmatch(cls.legacy_group, group) for group in groups)

    def load_weights(self, filepath, *args, allow_partial=False, num_mels=80, **kwargs):
        """Load our own weights, or an ``.h5`` written by TensorFlowTTS 1.8.

        An old file is matched by name through ``legacy_rules``; any missing, unused or
        mis-shaped tensor raises ``LegacyWeightsError`` naming it, unless
        ``allow_partial``. An unbuilt model is first built for ``num_mels`` mel bins. An
        acoustic model's file is refused in one line (`weight_files.WeightFileError`).
        """
        check_weight_file(self, filepath)
        if self._is_old_checkpoint(filepath):
            if not self.built:
                self.build_once(num_mels)
            return load_legacy_weights(self, filepath, self.legacy_renamer(), allow_partial=allow_partial)
        return super().load_weights(filepath, *args, **kwargs)

    def get_config(self):
        return {"config": self.config.to_dict(), "name": self.name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(config=cls.config_class.from_dict(config["config"]), name=config.get("name"))
