"""Loading model weights from what users point at: a `.h5`, a `ckpt-N` prefix or a folder of checkpoints."""

import os

import tensorflow as tf


def latest_checkpoint(path, label=""):
    """`path` itself for a `ckpt-N` prefix, else the latest checkpoint in the folder `path`.

    `label` starts error messages (e.g. "--checkpoint "). Raises FileNotFoundError for a folder without one.
    """
    path = str(path)
    if not os.path.isdir(path):
        return path
    latest = tf.train.latest_checkpoint(path)
    if latest is None:
        raise FileNotFoundError(f"{label}{path}: no checkpoint in this directory")
    return latest


def restore_weights(models, path, label="", strict=True):
    """Load weights into ``models`` ({checkpoint name: model}) from a checkpoint or an .h5.

    ``path``: a `ckpt-N` prefix, a checkpoint directory (its latest), or a single model's
    `.h5` (then ``models`` must hold one model; TensorFlowTTS 1.8 files work too, through the
    model's own `load_weights`). Only the models are read (no optimizer, no step); with
    ``strict``, every weight of the models must be in the checkpoint. Returns the path read.
    """
    path = str(path)
    if path.endswith(".h5"):
        if len(models) != 1:
            raise ValueError(f"{label}{path}: an .h5 file holds one model, expected a checkpoint for {sorted(models)}")
        next(iter(models.values())).load_weights(path)
        return path
    path = latest_checkpoint(path, label)
    status = tf.train.Checkpoint(**models).restore(path)
    status.expect_partial()
    if strict:
        status.assert_existing_objects_matched()
    return path
