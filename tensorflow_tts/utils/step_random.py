"""Random draws of a training step that the step's seed fixes, so a resumed run repeats them.

Stateful random ops (`tf.random.normal`, Keras' `Dropout`) keep their state in the process, not
in the checkpoint: a run resumed at step n would draw what the uninterrupted run drew at step 1.
So the trainer runs each training step under `step_seed(seed)`, ``seed`` a pure function of the
run's checkpointed seed, the step and the replica, and the random layers ask `next_seed` for a
stateless seed in call order. Outside a training step `next_seed` gives None and they fall back
to the stateful ops (inference, evaluation, a user's own loop).
"""

import contextlib
import threading

import tensorflow as tf

_active = threading.local()  # one per replica thread of a MirroredStrategy


@contextlib.contextmanager
def step_seed(seed):
    """Within: `next_seed` derives seeds from ``seed`` ((2,) int32 or int64) and its call count,
    so the same calls in the same order get the same seeds. ``seed`` None: no seed within."""
    previous = getattr(_active, "state", None)
    _active.state = None if seed is None else {"seed": seed, "calls": 0}
    try:
        yield
    finally:
        _active.state = previous


def next_seed():
    """A (2,) seed for the next stateless random op, or None outside `step_seed`."""
    state = getattr(_active, "state", None)
    if state is None:
        return None
    seed = tf.random.experimental.stateless_fold_in(state["seed"], state["calls"])
    state["calls"] += 1
    return seed


def uniform(shape, dtype=tf.float32):
    """Uniform [0, 1) noise of ``shape``: stateless inside `step_seed`, else `tf.random.uniform`."""
    seed = next_seed()
    if seed is None:
        return tf.random.uniform(shape, dtype=dtype)
    return tf.random.stateless_uniform(shape, seed, dtype=dtype)


def normal(shape, dtype=tf.float32):
    """Standard normal noise of ``shape``: stateless inside `step_seed`, else `tf.random.normal`."""
    seed = next_seed()
    if seed is None:
        return tf.random.normal(shape, dtype=dtype)
    return tf.random.stateless_normal(shape, seed, dtype=dtype)
