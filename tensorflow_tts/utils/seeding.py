"""Seeded, repeatable training runs: one seed for every random draw of the process."""

import logging

logger = logging.getLogger(__name__)


def seed_everything(seed, deterministic=False):
    """Seed Python's, NumPy's and TensorFlow's global random state (weight initialisation,
    dropout, and every op without its own seed); with ``deterministic``, also turn on
    TensorFlow's op determinism, so two runs with the same seed compute the same weights.

    Call before building datasets and models. ``seed`` None leaves the process unseeded.
    Raises ValueError for ``deterministic`` without a seed (unseeded random ops cannot repeat).
    """
    import tensorflow as tf

    if seed is None:
        if deterministic:
            raise ValueError("deterministic: true needs a seed (the `seed` key or --seed)")
        return
    tf.keras.utils.set_random_seed(int(seed))
    if deterministic:
        # Deterministic kernels: same weights from the same seed on the same device type and
        # software; on a GPU some kernels are slower, and a few ops raise an error instead.
        tf.config.experimental.enable_op_determinism()
    logger.info("random seed %d%s", seed, ", op determinism on" if deterministic else "")
