"""Learned upsampling along time: a transposed convolution, optionally weight-normalised, and
Parallel WaveGAN's conditioning upsampler (repeat, then smooth).

The transposed convolution is computed in its polyphase form (`conv_transpose1d`): a plain
convolution with ``strides * filters`` output channels over the input rate, then a reshape
to the output rate. It multiplies exactly the products of the transposed convolution (no
zero is inserted or multiplied), and oneDNN, XNNPACK and XLA run it as a dense GEMM-like
convolution, where TensorFlow's ``conv2d_transpose`` on CPU is 3-4x slower for the same FLOPs.
"""

import math

import tensorflow as tf

from tensorflow_tts.layers.bias import bias_add
from tensorflow_tts.layers.conv1d import Conv1D, conv1d, flipped_kernel
from tensorflow_tts.layers.hyperparameters import HyperParameterConfig
from tensorflow_tts.layers.residual_stack import make_activation, seeded_initializer, time_paddings, time_slice
from tensorflow_tts.layers.weight_norm import normalize_kernel


def polyphase_kernel(kernel, strides):
    """A transposed-conv kernel ``(K, C_out, C_in)`` -> the conv kernel ``(m, C_in, strides * C_out)``.

    ``m = ceil(K / strides)``; the kernel is zero-padded to ``m * strides`` taps. Output
    channel ``r * C_out + o`` of the result computes phase ``r`` (sample ``q * strides + r``)
    of output channel ``o``. Tap ``j * strides + r`` of the kernel is row block ``r`` of block
    ``j`` in ``(m, strides * C_out, C_in)``, and block j multiplies input q - j for output block
    q: the conv kernel is those blocks in reverse order, each transposed (`flipped_kernel`, one
    pass over the kernel).
    """
    taps, out_channels, in_channels = kernel.shape
    blocks = math.ceil(taps / strides)
    if blocks * strides != taps:
        kernel = tf.pad(kernel, [[0, blocks * strides - taps], [0, 0], [0, 0]])
    return flipped_kernel(tf.reshape(kernel, [blocks, strides * out_channels, in_channels]))


def conv_transpose1d(x, kernel, strides, pad_before, bias=None):
    """``y[n] = sum_i x[i] @ kernel[n + pad_before - i * strides]^T`` for ``n < T * strides`` (+ bias).

    That is a 1-D transposed convolution of stride ``strides`` with the first
    ``pad_before`` output samples cropped ("same" padding crops ``(K - strides) // 2``).

    Args:
        x: ``(B, T, C_in)``, or rows ``(B, 1, T, C_in)`` (the vocoders' inference layout,
            `residual_stack.fused_conv1d`).
        kernel: ``(K, C_out, C_in)``, tap k applied at output offset k (the layout of
            TensorFlow's ``conv2d_transpose`` filters, without their width axis).
        strides: the upsampling factor.
        pad_before: output samples cropped at the start,
            ``0 <= pad_before <= (ceil(K / strides) - 1) * strides``.
        bias: ``(C_out,)`` or None.

    Returns:
        ``(B, T * strides, C_out)``, or rows ``(B, 1, T * strides, C_out)``.
    """
    taps, out_channels, _ = kernel.shape
    blocks = math.ceil(taps / strides)
    cropped = (blocks - 1) * strides  # samples computed beyond T * strides, cropped at both ends
    if not 0 <= pad_before <= cropped:
        raise ValueError(f"pad_before must lie in [0, {cropped}] for {taps} taps and stride {strides}")
    pad_after = cropped - pad_before
    rows = len(x.shape) == 4
    # Output block q (samples q * strides + r) sums inputs q - blocks + 1 .. q: a conv of
    # `blocks` taps over the input padded by blocks - 1 on both sides (T + blocks - 1 blocks).
    padded = tf.pad(x, time_paddings(x, blocks - 1, blocks - 1)) if blocks > 1 else x
    kernel = polyphase_kernel(kernel, strides)
    if rows:  # the generators' inference layout: no gradient is taken
        y = tf.nn.conv2d(padded, kernel[tf.newaxis], strides=1, padding="VALID")
    else:
        y = conv1d(padded, kernel, "VALID")  # with the cheaper gradients
    if bias is not None:
        y = bias_add(y, tf.tile(bias, [strides]))  # the same bias for every phase
    # The reshape's time axis is inferred and the crop's bounds count from either end, so
    # both are constants of the graph: a TFLite file then runs them in XNNPACK, where
    # bounds computed from the input's length fall back to a slow single-threaded slice.
    # (B, (T + blocks - 1) * strides, C_out), or rows (B, 1, ..., C_out):
    y = tf.reshape(y, [tf.shape(x)[0]] + ([1] if rows else []) + [-1, out_channels])
    if rows:  # no gradient is taken: the plain slice
        return time_slice(y, pad_before, -pad_after or None)
    return crop_time(y, pad_before, pad_after)


def crop_time(x, before, after):
    """``x[:, before : T - after]`` for ``x`` ``(B, T, C)``, with a Pad for its gradient.

    Autodiff would send the gradient through StridedSliceGrad, which TensorFlow's CPU kernel
    runs at a fraction of a Pad's speed: on the MB-MelGAN v1 generator's training step the
    upsamplers' three crops took 4 % of its op time that way. The slice's bounds are constants
    of the graph (see `conv_transpose1d`).
    """

    @tf.custom_gradient
    def crop(x):
        def gradient(dy):
            return tf.pad(dy, time_paddings(dy, before, after))

        return time_slice(x, before, -after or None), gradient

    return crop(x)


class TFConvTranspose1d(tf.keras.layers.Layer):
    """1-D transposed convolution with "same" padding: ``(B, T, C_in) -> (B, T * strides, filters)``.

    TensorFlowTTS 1.8 computed it as a 2-D transposed convolution over ``(B, T, 1, C_in)``;
    its weights keep that layout: ``kernel`` ``(kernel_size, 1, filters, C_in)``, ``bias``
    ``(filters,)``, and with ``is_weight_norm`` a magnitude ``g`` ``(filters,)`` (the kernel
    is then the direction v). The computation is `conv_transpose1d`, equal up to float rounding.
    """

    def __init__(
        self,
        filters,
        kernel_size,
        strides,
        padding="same",
        is_weight_norm=False,
        initializer_seed=None,
        use_bias=True,
        kernel_initializer=None,
        **kwargs,
    ):
        # The first six arguments keep 1.8's order; kernel_initializer, when given, wins over
        # initializer_seed (a seeded Glorot-normal initializer, as in 1.8).
        super().__init__(**kwargs)
        if str(padding).lower() != "same":
            raise ValueError(f"TFConvTranspose1d supports only padding='same', got {padding!r}")
        if kernel_size < strides:
            raise ValueError(f"kernel_size ({kernel_size}) must be at least strides ({strides})")
        self.filters = filters
        self.kernel_size = kernel_size
        self.strides = strides
        self.padding = "same"
        self.use_bias = use_bias
        self.is_weight_norm = is_weight_norm
        self.initializer_seed = initializer_seed
        if kernel_initializer is None:
            kernel_initializer = seeded_initializer(initializer_seed)
        self.kernel_initializer = tf.keras.initializers.get(kernel_initializer)

    def build(self, input_shape):
        in_channels = int(input_shape[-1])
        self.kernel = self.add_weight(
            name="kernel",
            shape=(self.kernel_size, 1, self.filters, in_channels),
            initializer=self.kernel_initializer,
        )
        self.bias = self.add_weight(name="bias", shape=(self.filters,), initializer="zeros") if self.use_bias else None
        if self.is_weight_norm:
            self.g = self.add_weight(name="g", shape=(self.filters,), initializer="ones")
            with tf.init_scope():  # start at ||v||: the initial kernel is the raw one
                self.g.assign(tf.sqrt(tf.reduce_sum(tf.square(self.kernel), axis=[0, 1, 3])))
        super().build(input_shape)

    def call(self, x):
        """Args: x ``(B, T, C_in)`` or rows ``(B, 1, T, C_in)``. Returns ``(B, T * strides, filters)`` or rows."""
        kernel = self.kernel
        if self.is_weight_norm:
            kernel = normalize_kernel(kernel, self.g, output_axis=-2)
        kernel = tf.reshape(kernel, [self.kernel_size, self.filters, -1])  # (K, filters, C_in)
        # conv2d_transpose's "same" padding crops (K - strides) // 2 samples at the start.
        pad_before = (self.kernel_size - self.strides) // 2
        return conv_transpose1d(x, kernel, self.strides, pad_before, bias=self.bias)

    def get_config(self):
        return {
            **super().get_config(),
            "filters": self.filters,
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding,
            "use_bias": self.use_bias,
            "is_weight_norm": self.is_weight_norm,
            "initializer_seed": self.initializer_seed,
            "kernel_initializer": tf.keras.initializers.serialize(self.kernel_initializer),
        }


class TFConvInUpsampleNetWork(HyperParameterConfig, tf.keras.layers.Layer):
    """Parallel WaveGAN's conditioning network: mels ``(B, T, C_in)`` -> ``(B, T * prod(upsample_scales), aux_channels)``.

    A "same" conv of ``2 * aux_context_window + 1`` frames (no bias), then per scale: every
    frame repeated ``scale`` times and smoothed along time by one ``(2 * scale + 1)``-tap
    kernel shared by all channels (a 1-channel Conv2D over ``(B, T', C, 1)``, the layout of
    TensorFlowTTS 1.8's weights ``(2 * scale + 1, 1, 1, 1)``), then the optional activation.
    The name is 1.8's.
    """

    hyperparameters = ("upsample_scales", "aux_channels", "aux_context_window", "nonlinear_activation",
        "nonlinear_activation_params", "initializer_seed")

    def __init__(self, upsample_scales, aux_channels=80, aux_context_window=2, nonlinear_activation=None,
                 nonlinear_activation_params=None, initializer_seed=42, **kwargs):
        super().__init__(**kwargs)
        self.upsample_scales = [int(scale) for scale in upsample_scales]
        self.aux_channels = aux_channels
        self.aux_context_window = aux_context_window
        self.nonlinear_activation = nonlinear_activation
        self.nonlinear_activation_params = dict(nonlinear_activation_params or {})
        self.initializer_seed = initializer_seed
        self.conv_in = Conv1D(
            aux_channels, 2 * aux_context_window + 1, padding="same", use_bias=False,
            kernel_initializer=tf.keras.initializers.HeNormal(seed=initializer_seed), name="conv_in",
        )
        self.smoothing_convs = [
            tf.keras.layers.Conv2D(1, (2 * scale + 1, 1), padding="same", use_bias=False, name=f"smoothing_conv_._{i}")
            for i, scale in enumerate(self.upsample_scales)
        ]
        self.activations = [
            make_activation(nonlinear_activation, self.nonlinear_activation_params) if nonlinear_activation else None
            for _ in self.upsample_scales
        ]

    def call(self, mels):
        """Args: mels ``(B, T, C_in)``. Returns ``(B, T * prod(upsample_scales), aux_channels)``."""
        x = self.conv_in(mels)[..., tf.newaxis]  # (B, T, C, 1)
        for scale, conv, activation in zip(self.upsample_scales, self.smoothing_convs, self.activations):
            shape = tf.shape(x)
            # Nearest-neighbour stretch: frame t fills samples t * scale .. t * scale + scale - 1.
            x = tf.reshape(tf.tile(x[:, :, tf.newaxis], [1, 1, scale, 1, 1]), [shape[0], shape[1] * scale, shape[2], 1])
            x = conv(x)
            if activation is not None:
                x = activation(x)
        return x[..., 0]
