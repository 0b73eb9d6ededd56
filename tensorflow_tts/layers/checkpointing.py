"""Gradient checkpointing: run a block so that the backward pass recomputes its activations
instead of keeping them, with dropout masks that the recomputation draws again identically.

A layer that runs a stack of blocks through `run_block` carries a ``gradient_checkpointing``
attribute (False by default); the trainer sets it on every such layer of a model when the
training YAML has ``gradient_checkpointing: true``.
"""

import tensorflow as tf

from tensorflow_tts.layers.dropout import Dropout
from tensorflow_tts.utils.step_random import next_seed, step_seed


def run_block(block, inputs, *args, training=False, recompute=False, **kwargs):
    """``block(inputs, *args, training=training, **kwargs)``, recomputed in the backward pass when
    ``recompute`` (and training).

    In training, the block's `Dropout` layers (if any) draw their masks from one seed drawn here
    from the training step's seed (`step_random`), or outside a training step from TensorFlow's
    global random state (so `tf.keras.utils.set_random_seed` repeats them), with or without
    ``recompute``: the recomputation replays the forward pass's masks, and a
    checkpointed step computes the same gradients as a plain one. The recomputation also runs
    the block's batch norms in training mode again; their moving statistics are put back
    afterwards, so they are updated once per step as without checkpointing.

    Only ``inputs`` (a float tensor, e.g. ``(B, T, C)``) receives a gradient; ``args`` and
    ``kwargs`` (masks, lengths) are held constant. Returns the block's output.
    """
    if not training:
        return block(inputs, *args, training=training, **kwargs)
    with_dropout = any(isinstance(layer, Dropout) and layer.rate > 0 for layer in block.submodules)
    seed = next_seed() if with_dropout else None
    if with_dropout and seed is None:
        seed = tf.random.uniform([2], maxval=tf.int32.max, dtype=tf.int32)
    if not recompute or not block.built:  # the first call builds the weights outside the recomputation
        with step_seed(seed):
            return block(inputs, *args, training=True, **kwargs)
    moving_statistics = block.non_trainable_variables
    forward_done = []

    def forward(block_inputs):
        replay = bool(forward_done)
        saved = [variable.read_value() for variable in moving_statistics] if replay else []
        with step_seed(seed):
            outputs = block(block_inputs, *args, training=True, **kwargs)
        for variable, value in zip(moving_statistics, saved):
            variable.assign(value)
        forward_done.append(True)
        return outputs

    return tf.recompute_grad(forward)(inputs)
