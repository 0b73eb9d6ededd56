"""Weight normalization (Salimans & Kingma, 2016) for convolution kernels.

A weight-normalised layer keeps a direction ``v`` (stored as ``kernel``, so old
TensorFlowTTS checkpoints load unchanged) and one magnitude ``g`` per output channel;
the kernel it convolves with is ``g * v / ||v||``, the norm taken over every axis but
the output-channel axis.
"""

import tensorflow as tf

from tensorflow_tts.layers.bias import KerasConvBias
from tensorflow_tts.layers.grouped_conv import GroupedConv1D


def normalize_kernel(v, g, output_axis=-1):
    """The effective kernel ``g * v / ||v||``.

    Args:
        v: the direction, any rank, e.g. a Conv1D kernel ``(K, C_in, C_out)``.
        g: ``(C_out,)``, one magnitude per output channel.
        output_axis: the axis of ``v`` that indexes output channels (-1 for Conv1D and
            Conv2D kernels, -2 for transposed-conv kernels ``(K, 1, C_out, C_in)``).

    Returns:
        A tensor shaped like ``v``.
    """
    rank = v.shape.rank
    output_axis = output_axis % rank
    norm_axes = [axis for axis in range(rank) if axis != output_axis]
    g_shape = [1] * rank
    g_shape[output_axis] = -1
    return tf.nn.l2_normalize(v, axis=norm_axes) * tf.reshape(g, g_shape)


class _WeightNormConvMixin:
    """Adds ``g`` to a Keras convolution and convolves with the normalised kernel.

    Keras' Conv layers route every convolution through ``convolution_op(inputs,
    kernel)``, so overriding that one method is enough; ``kernel`` stays the raw ``v``.
    """

    def build(self, input_shape):
        super().build(input_shape)
        # g starts at ||v||, so the layer initially computes exactly what the plain
        # conv with the same kernel would (the "no data init" choice of the paper).
        self.g = self.add_weight(
            name="g",
            shape=(self.filters,),
            initializer="ones",
            trainable=True,
            dtype=self.dtype,
        )
        norm_axes = list(range(self.kernel.shape.rank - 1))
        # init_scope: run once, eagerly, even when build happens while tracing a graph.
        with tf.init_scope():
            self.g.assign(tf.sqrt(tf.reduce_sum(tf.square(self.kernel), axis=norm_axes)))

    def convolution_op(self, inputs, kernel):
        return super().convolution_op(inputs, normalize_kernel(kernel, self.g, output_axis=-1))


class WeightNormConv1D(_WeightNormConvMixin, GroupedConv1D):
    """``tf.keras.layers.Conv1D`` with weight normalization; same arguments (grouped convs run fast on the CPU).

    Weights: ``kernel`` (v) ``(K, C_in / groups, C_out)``, ``bias`` ``(C_out,)``,
    ``g`` ``(C_out,)``. Input ``(B, T, C_in)``, output ``(B, T', C_out)``.
    """


class Conv2D(KerasConvBias, tf.keras.layers.Conv2D):
    """tf.keras Conv2D (same arguments, weights, names and results) whose bias gradient stays
    accurate in bfloat16 (`layers.bias`)."""


class WeightNormConv2D(_WeightNormConvMixin, Conv2D):
    """``tf.keras.layers.Conv2D`` with weight normalization; same arguments.

    Weights: ``kernel`` (v) ``(KH, KW, C_in, C_out)``, ``bias``, ``g`` ``(C_out,)``.
    """


def effective_kernel(layer):
    """The kernel a Keras conv layer convolves with: ``g * v / ||v||`` when weight-normalised."""
    if isinstance(layer, _WeightNormConvMixin):
        return normalize_kernel(layer.kernel, layer.g, output_axis=-1)
    return layer.kernel


def conv1d(filters, kernel_size, weight_norm=False, **kwargs):
    """A Conv1D (fast when grouped), weight-normalised when ``weight_norm`` is true."""
    layer_class = WeightNormConv1D if weight_norm else GroupedConv1D
    return layer_class(filters=filters, kernel_size=kernel_size, **kwargs)


def conv2d(filters, kernel_size, weight_norm=False, **kwargs):
    """A Conv2D, weight-normalised when ``weight_norm`` is true."""
    layer_class = WeightNormConv2D if weight_norm else Conv2D
    return layer_class(filters=filters, kernel_size=kernel_size, **kwargs)


def WeightNormalization(layer, data_init=False):  # noqa: N802 (TensorFlowTTS 1.8's class name)
    """TensorFlowTTS 1.8's wrapper, ``WeightNormalization(tf.keras.layers.Conv1D(...))``: the
    weight-normalised copy of an unbuilt Conv1D or Conv2D (same arguments, same name).

    ``data_init`` is accepted and ignored: ``g`` starts at ``||v||``, so the new layer first
    computes what the plain layer would (1.8 rescaled from the first batch's statistics).
    """
    del data_init
    for plain, normalised in ((tf.keras.layers.Conv1D, WeightNormConv1D), (tf.keras.layers.Conv2D, WeightNormConv2D)):
        if isinstance(layer, plain):
            if layer.built:
                raise ValueError(f"WeightNormalization: {layer.name} is already built; wrap the layer before its first call")
            return normalised.from_config(layer.get_config())
    raise TypeError(f"WeightNormalization: expected a tf.keras Conv1D or Conv2D layer, got {type(layer).__name__}")
