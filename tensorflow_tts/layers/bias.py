"""Adding a bias along the last axis, with a bias gradient that bfloat16 does not ruin.

TensorFlow's CPU kernel for the bias gradient (``BiasAddGrad``) sums a bfloat16 gradient in
bfloat16: over the 16,384-65,536 rows of an MB-MelGAN generator step's later stages (8
items of 2048-8192 samples) the sums came out 80-90 % off (largest error over the largest
sum, against a float64 sum of the same values), so under ``mixed_bfloat16`` those convs'
biases learnt mostly from noise. ``tf.reduce_sum`` of the same bfloat16 values accumulates
in float: 0.2-0.3 % off, the rounding of its bfloat16 result. It also took 0.36-0.68 of
``BiasAddGrad``'s time on the generator step's shapes, and the harness's generator step
under ``mixed_bfloat16`` took 0.918 (quartiles 0.864-1.010) of the time (one process, 30
alternated steps, 2-core Intel Xeon with AMX).
"""

import tensorflow as tf


def bias_add(x, bias):
    """``tf.nn.bias_add(x, bias)``; for bfloat16 ``x`` its bias gradient is a ``tf.reduce_sum``.

    Other dtypes get TensorFlow's own op and gradient, unchanged.

    Args: x (..., C); bias (C,). Returns (..., C).
    """
    if x.dtype != tf.bfloat16:
        return tf.nn.bias_add(x, bias)

    @tf.custom_gradient
    def add(x, bias):
        def gradient(dy):
            return dy, tf.reduce_sum(dy, axis=list(range(len(dy.shape) - 1)))

        return tf.nn.bias_add(x, bias), gradient

    # A variable read inside a custom gradient would need its own gradient path: read it here.
    return add(x, tf.convert_to_tensor(bias))
