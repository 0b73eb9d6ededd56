"""Gradient checkpointing: run a block so that the backward pass recomputes its activations
instead of keeping them, with dropout masks that the recomputation draws again identically.

A layer that runs a stack of blocks through `run_block` carries a ``gradient_checkpointing``
attribute (False by default); the trainer sets it on every such layer of a model when the
training YAML has ``gradient_checkpointing: true``.
"""

import contextlib
import threading

import tensorflow as tf

_dropout_seed = threading.local()  # one per replica thread of a MirroredStrategy


@contextlib.contextmanager
def seeded_dropout(seed):
    """Within: every `Dropout` called in training draws its mask from ``seed`` (2,) int32 and
    its call order, statelessly; the same calls in the same order draw the same masks.
    ``seed`` None: Keras' own dropout within."""
    previous = getattr(_dropout_seed, "state", None)
    _dropout_seed.state = None if seed is None else {"seed": seed, "calls": 0}
    try:
        yield
    finally:
        _dropout_seed.state = previous


class Dropout(tf.keras.layers.Dropout):
    """Keras' Dropout (same arguments, no weights); inside `seeded_dropout`, masks are stateless."""

    def call(self, inputs, training=None):
        """inputs (..., C) -> same shape."""
        state = getattr(_dropout_seed, "state", None)
        if state is None or training is not True or self.rate == 0:
            return super().call(inputs, training=training)
        seed = tf.random.experimental.stateless_fold_in(state["seed"], state["calls"])
        state["calls"] += 1
        return tf.nn.experimental.stateless_dropout(
            inputs, rate=self.rate, seed=seed, noise_shape=self._get_noise_shape(inputs)
        )


def run_block(block, inputs, *args, training=False, recompute=False, **kwargs):
    """``block(inputs, *args, training=training, **kwargs)``, recomputed in the backward pass when
    ``recompute`` (and training).

    In training, the block's `Dropout` layers (if any) draw their masks from one seed drawn here from
    TensorFlow's global random state (so `tf.keras.utils.set_random_seed` repeats them), with or
    without ``recompute``: the recomputation replays the forward pass's masks, and a
    checkpointed step computes the same gradients as a plain one. The recomputation also runs
    the block's batch norms in training mode again; their moving statistics are put back
    afterwards, so they are updated once per step as without checkpointing.

    Only ``inputs`` (a float tensor, e.g. ``(B, T, C)``) receives a gradient; ``args`` and
    ``kwargs`` (masks, lengths) are held constant. Returns the block's output.
    """
    if not training:
        return block(inputs, *args, training=training, **kwargs)
    with_dropout = any(isinstance(layer, Dropout) and layer.rate > 0 for layer in block.submodules)
    seed = tf.random.uniform([2], maxval=tf.int32.max, dtype=tf.int32) if with_dropout else None
    if not recompute or not block.built:  # the first call builds the weights outside the recomputation
        with seeded_dropout(seed):
            return block(inputs, *args, training=True, **kwargs)
    moving_statistics = block.non_trainable_variables
    forward_done = []

    def forward(block_inputs):
        replay = bool(forward_done)
        saved = [variable.read_value() for variable in moving_statistics] if replay else []
        with seeded_dropout(seed):
            outputs = block(block_inputs, *args, training=True, **kwargs)
        for variable, value in zip(moving_statistics, saved):
            variable.assign(value)
        forward_done.append(True)
        return outputs

    return tf.recompute_grad(forward)(inputs)
