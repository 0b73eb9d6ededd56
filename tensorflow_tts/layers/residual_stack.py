"""Residual blocks of the GAN vocoders: MelGAN's residual stack and HiFi-GAN's MRF.

Also the two tiny helpers every vocoder uses: reflection padding along time and an
activation layer named in a config.
"""

import tensorflow as tf

from tensorflow_tts.layers import kernels
from tensorflow_tts.layers.conv1d import Conv1D
from tensorflow_tts.layers.hyperparameters import HyperParameterConfig
from tensorflow_tts.layers.weight_norm import conv1d, effective_kernel


def seeded_initializer(seed, offset=0):
    """Glorot-normal kernel initializer; ``seed + offset`` keeps same-shaped layers distinct."""
    return tf.keras.initializers.GlorotNormal(seed=None if seed is None else int(seed) + offset)


def make_activation(name, params=None, **kwargs):
    """``tf.keras.layers.<name>(**params)``, e.g. ``make_activation("LeakyReLU", {"alpha": 0.2})``."""
    layer_class = getattr(tf.keras.layers, name, None)
    if layer_class is None:
        raise ValueError(f"nonlinear_activation {name!r} is not a layer in tf.keras.layers (e.g. 'LeakyReLU', 'ReLU', 'ELU')")
    return layer_class(**dict(params or {}), **kwargs)


def time_slice(x, start=None, stop=None):
    """``x[:, start:stop]`` for ``(B, T, C)``, ``x[:, :, start:stop]`` for rows ``(B, 1, T, C)``: time is
    the second-to-last axis in both. One slice per axis, no ellipsis: the form the TFLite
    tests check stays on XNNPACK (`tflite.reference_kernel_ops`)."""
    return x[(slice(None),) * (len(x.shape) - 2) + (slice(start, stop),)]


def time_paddings(x, before, after):
    """``tf.pad`` paddings of ``before`` and ``after`` steps along the time axis of ``x`` (see `time_slice`)."""
    return [[0, 0]] * (len(x.shape) - 2) + [[before, after], [0, 0]]


def fused_conv1d(layer, x, activation=None, residual=None):
    """``activation(layer(x))`` or ``layer(x) + residual`` outside training, for a stride-1 "valid"
    Conv1D layer (dilated or not), in the form TensorFlow fuses into one conv.

    Keras runs a Conv1D as ExpandDims, Conv2D, Squeeze, BiasAdd (and a dilated one through
    SpaceToBatchND and BatchToSpaceND: two more copies of the signal). The graph optimizer
    fuses only Conv2D -> BiasAdd -> activation, or -> AddV2, on 4-D tensors; the Squeeze in
    between keeps the activation and the residual sum as passes of their own over the signal.
    Here the conv runs on ``(B, 1, T, C)`` with its dilation, and bias, activation and sum follow
    it directly: with oneDNN (on by default for AVX-512 CPUs) they become the conv's post-ops.
    The same products and sums: on the MB-MelGAN v1 vocoder the values equalled Keras' bit for
    bit, with oneDNN and without (`test_residual_blocks.py` checks them to float tolerance).

    ``x`` may already be rows ``(B, 1, T, C_in)``, the layout the vocoder generators keep from
    their first conv to their last in inference (`BaseVocoderGenerator._generate`): the
    result is then rows too, with no reshape around the conv.

    Args: x ``(B, T, C_in)`` or ``(B, 1, T, C_in)``; residual ``(B, T', filters)`` or
        ``(B, 1, T', filters)`` like x, ``T' = T - dilation * (K - 1)``.
    Returns ``(B, T', filters)`` or ``(B, 1, T', filters)``, like x.
    """
    rows = len(x.shape) == 4
    kernel = tf.cast(effective_kernel(layer), x.dtype)[tf.newaxis]  # (1, K, C_in, filters)
    y = tf.nn.conv2d(x if rows else tf.expand_dims(x, 1), kernel, strides=1, padding="VALID",
                     dilations=[1, 1, layer.dilation_rate[0], 1])
    if layer.use_bias:
        y = tf.nn.bias_add(y, tf.cast(layer.bias, x.dtype))
    if activation is not None:
        y = activation(y)
    if residual is not None:
        y = y + (residual if rows else tf.expand_dims(residual, 1))
    # expand_dims / squeeze, not x[:, tf.newaxis] / y[:, 0]: in a TFLite file those slices
    # stay out of XNNPACK (tflite.reference_kernel_ops).
    return y if rows else tf.squeeze(y, 1)


def keras_form(training, convs):
    """Whether a block runs its convs as Keras layers: in training (TensorFlow's CPU gradient
    kernels without oneDNN have no dilated version; ``Conv1D`` brings its own gradients), on the
    first call (it creates the weights) and for grouped convs; otherwise ``fused_conv1d``."""
    return training or any(not conv.built or conv.groups != 1 for conv in convs)


def reflect_pad(x, size, training=False):
    """``tf.pad(x, mode="REFLECT")`` along time, by `size` >= 1 on both sides.

    Same values and gradient, cheaper on the CPU: the pad is a concat (TensorFlow's MirrorPad
    kernel is ~2x slower: the pads were ~10% of MB-MelGAN's inference time). In training its
    gradient is one MirrorPadGrad, where autodiff through the concat would slice out the
    middle, write two full-size StridedSliceGrads for the reflected edges and sum the three
    (0.6-0.8x the time on the MB-MelGAN generator's shapes). Outside training the plain
    concat is traced: the custom gradient's identity ops cost the inference graph speed.

    Args: x ``(B, T, C)`` or rows ``(B, 1, T, C)``, T > size. Returns ``(B, T + 2 * size, C)``
    (``(B, 1, T + 2 * size, C)``).
    """
    axis = len(x.shape) - 2

    def pad(x):
        left = tf.reverse(time_slice(x, 1, size + 1), axis=[axis])
        right = tf.reverse(time_slice(x, -size - 1, -1), axis=[axis])
        return tf.concat([left, x, right], axis=axis)

    if not training:
        return pad(x)

    @tf.custom_gradient
    def pad_with_gradient(x):
        def gradient(dy):
            return tf.raw_ops.MirrorPadGrad(input=dy, paddings=time_paddings(x, size, size), mode="REFLECT")

        return pad(x), gradient

    return pad_with_gradient(x)


def pad_activated(pad, activation, x, training=False):
    """``pad(activation(x), training=training)`` for a `TFReflectionPad1d` ``pad``.

    In float32 training, for a LeakyReLU and reflect padding, one compiled op each way where
    the compiled kernels are usable (`layers.kernels`, activated_pad.cc): TensorFlow writes
    the activation, then copies it between the reflected edges, and its gradient is two passes
    again (MirrorPadGrad, LeakyReluGrad). The same values and gradients, bit for bit. The
    harness's MB-MelGAN generator step took 0.964 (quartiles 0.942-1.016) of the time with it
    (ours against ours, 40 alternated pairs in one process, 2-core AMD EPYC Zen 5).

    Args: x ``(B, T, C)`` (or rows ``(B, 1, T, C)``, which keep TensorFlow's ops), T > the padding.
    Returns ``(B, T + 2 * pad.padding_size, C)``, like ``pad``.
    """
    if (training and pad.padding_size and pad.padding_type.upper() == "REFLECT" and len(x.shape) == 3
            and isinstance(activation, tf.keras.layers.LeakyReLU) and activation.compute_dtype == "float32"
            and kernels.usable(x)):
        return kernels.ops().tts_leaky_reflect_pad(x, size=pad.padding_size, alpha=float(activation.alpha))
    return pad(activation(x), training=training)


@tf.RegisterGradient("TtsLeakyReflectPad")
def _leaky_reflect_pad_gradient(op, upstream):
    return kernels.ops().tts_leaky_reflect_pad_grad(
        upstream, op.inputs[0], size=op.get_attr("size"), alpha=op.get_attr("alpha"))


@tf.RegisterGradient("TtsLeakyReflectPadGrad")
def _leaky_reflect_pad_gradient_gradient(op, upstream):
    """The gradient op is linear in dy (LeakyReluGrad's slopes after MirrorPadGrad): d/d dy is the
    reflect pad of the upstream times the slopes; x only picks the slopes, d/d x is zero, as for
    TensorFlow's LeakyReluGrad. So second derivatives pass through it as through TensorFlow's ops."""
    x = op.inputs[1]
    size = op.get_attr("size")
    sloped = tf.raw_ops.LeakyReluGrad(gradients=upstream, features=x, alpha=op.get_attr("alpha"))
    return tf.pad(sloped, time_paddings(x, size, size), mode="REFLECT"), tf.zeros_like(x)


class TFReflectionPad1d(tf.keras.layers.Layer):
    """Pad the time axis on both sides (reflect by default)."""

    def __init__(self, padding_size, padding_type="REFLECT", **kwargs):
        super().__init__(**kwargs)
        self.padding_size = int(padding_size)
        self.padding_type = padding_type

    def call(self, x, training=False):
        """Args: x ``(B, T, C)`` or rows ``(B, 1, T, C)``, T > padding_size.
        Returns ``(B, T + 2 * padding_size, C)`` (``(B, 1, T + 2 * padding_size, C)``)."""
        size = self.padding_size
        if size == 0:
            return x
        if self.padding_type.upper() == "REFLECT":
            return reflect_pad(x, size, training)
        return tf.pad(x, time_paddings(x, size, size), mode=self.padding_type)

    def get_config(self):
        return {**super().get_config(), "padding_size": self.padding_size, "padding_type": self.padding_type}


class _ResidualBlock(HyperParameterConfig, tf.keras.layers.Layer):
    """The arguments both vocoder residual blocks take, in TensorFlowTTS 1.8's order; a subclass
    builds its convs from them."""

    hyperparameters = ("kernel_size", "filters", "dilation_rate", "use_bias", "nonlinear_activation",
        "nonlinear_activation_params", "is_weight_norm", "initializer_seed", "padding_type")

    def __init__(
        self,
        kernel_size,
        filters,
        dilation_rate,
        use_bias=True,
        nonlinear_activation="LeakyReLU",
        nonlinear_activation_params=None,
        is_weight_norm=False,
        initializer_seed=42,
        padding_type="REFLECT",
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.kernel_size = kernel_size
        self.filters = filters
        self.dilation_rate = dilation_rate
        self.use_bias = use_bias
        self.nonlinear_activation = nonlinear_activation
        self.nonlinear_activation_params = dict(nonlinear_activation_params or {"alpha": 0.2})
        self.is_weight_norm = is_weight_norm
        self.initializer_seed = initializer_seed
        self.padding_type = padding_type
        self.activation = make_activation(nonlinear_activation, self.nonlinear_activation_params)

    def _keras_form_on_rows(self, x, training):
        """``call`` on rows ``x`` ``(B, 1, T, C)`` where the convs run as Keras layers, which take
        ``(B, T, C)``. The generators pass rows only outside training, but Keras' own saving
        (``model.save``) traces every layer's call with the inputs it saw, in training too."""
        return tf.expand_dims(self.call(tf.squeeze(x, 1), training=training), 1)


class TFResidualStack(_ResidualBlock):
    """MelGAN residual block: ``shortcut(x) + conv1x1(act(conv_dilated(pad(act(x)))))``.

    In float32 inference on the CPU it runs as one compiled op where it can (`layers.kernels`).

    Weights: ``dilated_conv`` (K, C, C), ``pointwise_conv`` (1, C, C), ``shortcut`` (1, C, C).
    """

    def __init__(self, kernel_size, filters, dilation_rate, *args, **kwargs):
        super().__init__(kernel_size, filters, dilation_rate, *args, **kwargs)
        self.pad = TFReflectionPad1d((kernel_size - 1) // 2 * dilation_rate, padding_type=self.padding_type)
        common = dict(use_bias=self.use_bias, weight_norm=self.is_weight_norm)
        seed = self.initializer_seed
        self.dilated_conv = conv1d(
            filters, kernel_size, dilation_rate=dilation_rate, name="dilated_conv",
            kernel_initializer=seeded_initializer(seed, 0), **common,
        )
        self.pointwise_conv = conv1d(filters, 1, name="pointwise_conv", kernel_initializer=seeded_initializer(seed, 1), **common)
        self.shortcut = conv1d(filters, 1, name="shortcut", kernel_initializer=seeded_initializer(seed, 2), **common)

    def call(self, x, training=False):
        """Args: x ``(B, T, filters)`` or rows ``(B, 1, T, filters)``. Returns the same shape."""
        if keras_form(training, (self.dilated_conv, self.pointwise_conv, self.shortcut)):
            if len(x.shape) == 4:
                return self._keras_form_on_rows(x, training)
            padded = pad_activated(self.pad, self.activation, x, training)
            return self.shortcut(x) + self.pointwise_conv(self.activation(self.dilated_conv(padded)))
        if self._fusable() and kernels.usable(x):
            return self._fused(x)
        # The shortcut before the main branch: run side by side, as TensorFlow's default
        # inter-op threads would, the two branches' convs compete for the same cores (the
        # MB-MelGAN v1 vocoder on 2 cores took 1.06x the time; in training the side-by-side
        # gradients are the faster order, so only inference is ordered).
        shortcut = fused_conv1d(self.shortcut, x)
        with tf.control_dependencies([shortcut]):
            padded = self.pad(self.activation(x))
        y = fused_conv1d(self.dilated_conv, padded, activation=self.activation)
        return fused_conv1d(self.pointwise_conv, y, residual=shortcut)

    def _fusable(self):
        """Whether the compiled kernel (`layers.kernels`) computes this block: LeakyReLU, reflect
        padding, an odd kernel, biases, and channels in multiples of 16."""
        return (isinstance(self.activation, tf.keras.layers.LeakyReLU) and self.padding_type.upper() == "REFLECT"
                and self.kernel_size % 2 == 1 and self.filters % 16 == 0 and self.use_bias)

    def _fused(self, x):
        """The block as one compiled op: TensorFlow's ~10 ops per block each pass over the
        signal; the kernel makes one pass, with the weights and a tile of the signal in the cache.

        Args: x ``(B, T, filters)`` or rows ``(B, 1, T, filters)``. Returns the same shape.
        """
        rows = len(x.shape) == 4
        y = kernels.ops().tts_residual_stack(
            tf.squeeze(x, 1) if rows else x,
            effective_kernel(self.dilated_conv), self.dilated_conv.bias,
            effective_kernel(self.pointwise_conv)[0], self.pointwise_conv.bias,
            effective_kernel(self.shortcut)[0], self.shortcut.bias,
            dilation=int(self.dilation_rate), alpha=float(self.activation.alpha),
        )
        return tf.expand_dims(y, 1) if rows else y


class TFHifiResBlock(_ResidualBlock):
    """HiFi-GAN residual block (type 1): for each dilation d,
    ``x = x + conv(pad(act(conv_d(pad(act(x))))))``.

    Weights: ``dilated_conv_._i`` (dilation ``dilation_rate[i]``) and ``conv_._i``
    (dilation 1), all (K, C, C). TensorFlowTTS 1.8 never weight-normalised these convs,
    even with ``is_weight_norm``; we keep that so its checkpoints load: ``is_weight_norm``
    is accepted (1.8's arguments, in 1.8's order) and has no effect.
    """

    def __init__(self, kernel_size, filters, dilation_rate, *args, **kwargs):
        super().__init__(kernel_size, filters, list(dilation_rate), *args, **kwargs)
        seed, padding_type = self.initializer_seed, self.padding_type
        self.dilated_pads, self.dilated_convs, self.pads, self.convs = [], [], [], []
        for i, dilation in enumerate(self.dilation_rate):
            self.dilated_pads.append(TFReflectionPad1d((kernel_size - 1) // 2 * dilation, padding_type=padding_type))
            self.dilated_convs.append(
                Conv1D(
                    filters, kernel_size, dilation_rate=dilation, use_bias=self.use_bias,
                    kernel_initializer=seeded_initializer(seed, 2 * i), name=f"dilated_conv_._{i}",
                )
            )
            self.pads.append(TFReflectionPad1d((kernel_size - 1) // 2, padding_type=padding_type))
            self.convs.append(
                Conv1D(
                    filters, kernel_size, use_bias=self.use_bias,
                    kernel_initializer=seeded_initializer(seed, 2 * i + 1), name=f"conv_._{i}",
                )
            )

    def call(self, x, training=False):
        """Args: x ``(B, T, filters)`` or rows ``(B, 1, T, filters)``. Returns the same shape."""
        keras = keras_form(training, self.dilated_convs + self.convs)
        if keras and len(x.shape) == 4:
            return self._keras_form_on_rows(x, training)
        for dilated_pad, dilated_conv, pad, conv in zip(self.dilated_pads, self.dilated_convs, self.pads, self.convs):
            padded = pad_activated(dilated_pad, self.activation, x, training)
            if keras:
                x = x + conv(pad_activated(pad, self.activation, dilated_conv(padded), training))
            else:
                y = fused_conv1d(dilated_conv, padded, activation=self.activation)
                x = fused_conv1d(conv, pad(y, training=training), residual=x)
        return x


class TFMultiHifiResBlock(tf.keras.layers.Layer):
    """HiFi-GAN multi-receptive-field fusion: the mean of several TFHifiResBlocks.

    ``kernel_sizes[j]`` and ``dilation_rates[j]`` configure block ``hifigan_resblock_._j``.
    """

    def __init__(self, kernel_sizes, dilation_rates, filters, initializer_seed=42, **block_kwargs):
        name = block_kwargs.pop("name", None)
        super().__init__(name=name)
        self.kernel_sizes = list(kernel_sizes)
        self.dilation_rates = [list(d) for d in dilation_rates]
        self.filters = filters
        self.initializer_seed = initializer_seed
        self.block_kwargs = block_kwargs
        if len(self.kernel_sizes) != len(self.dilation_rates):
            raise ValueError(
                f"one dilation list per kernel size expected: got {len(self.kernel_sizes)} kernel sizes "
                f"and {len(self.dilation_rates)} dilation lists"
            )
        self.resblocks = [
            TFHifiResBlock(
                kernel_size, filters, dilations,
                initializer_seed=None if initializer_seed is None else initializer_seed + 100 * j,
                name=f"hifigan_resblock_._{j}", **block_kwargs,
            )
            for j, (kernel_size, dilations) in enumerate(zip(self.kernel_sizes, self.dilation_rates))
        ]

    def call(self, x, training=False):
        """Args: x ``(B, T, filters)`` (or rows, see TFHifiResBlock). Returns the same shape."""
        total = self.resblocks[0](x, training=training)
        for resblock in self.resblocks[1:]:
            total += resblock(x, training=training)
        return total / len(self.resblocks)

    def get_config(self):
        return {
            **super().get_config(),
            "kernel_sizes": self.kernel_sizes,
            "dilation_rates": self.dilation_rates,
            "filters": self.filters,
            "initializer_seed": self.initializer_seed,
            **self.block_kwargs,
        }
