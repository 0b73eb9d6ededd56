"""Learned upsampling along time: a transposed convolution, optionally weight-normalised."""

import tensorflow as tf

from tensorflow_tts.layers.weight_norm import normalize_kernel


class TFConvTranspose1d(tf.keras.layers.Layer):
    """1-D transposed convolution with "same" padding: ``(B, T, C_in) -> (B, T * strides, filters)``.

    Computed, like TensorFlowTTS 1.8, as a 2-D transposed convolution over
    ``(B, T, 1, C_in)``, so its weights keep the old layout: ``kernel``
    ``(kernel_size, 1, filters, C_in)``, ``bias`` ``(filters,)``, and with
    ``is_weight_norm`` a magnitude ``g`` ``(filters,)`` (the kernel is then the direction v).
    """

    def __init__(
        self,
        filters,
        kernel_size,
        strides,
        padding="same",
        use_bias=True,
        is_weight_norm=False,
        kernel_initializer="glorot_normal",
        **kwargs,
    ):
        super().__init__(**kwargs)
        if str(padding).lower() != "same":
            raise ValueError(f"TFConvTranspose1d supports only padding='same', got {padding!r}")
        self.filters = filters
        self.kernel_size = kernel_size
        self.strides = strides
        self.padding = "same"
        self.use_bias = use_bias
        self.is_weight_norm = is_weight_norm
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
        """Args: x ``(B, T, C_in)``. Returns ``(B, T * strides, filters)``."""
        kernel = self.kernel
        if self.is_weight_norm:
            kernel = normalize_kernel(kernel, self.g, output_axis=-2)
        shape = tf.shape(x)
        output_shape = tf.stack([shape[0], shape[1] * self.strides, 1, self.filters])
        y = tf.nn.conv2d_transpose(
            tf.expand_dims(x, 2), kernel, output_shape, strides=[1, self.strides, 1, 1], padding="SAME"
        )
        if self.use_bias:
            y = tf.nn.bias_add(y, self.bias)
        return tf.squeeze(y, 2)

    def get_config(self):
        return {
            **super().get_config(),
            "filters": self.filters,
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding,
            "use_bias": self.use_bias,
            "is_weight_norm": self.is_weight_norm,
            "kernel_initializer": tf.keras.initializers.serialize(self.kernel_initializer),
        }
