"""Loading model weights from what users point at: a `.h5`, a `ckpt-N` prefix or a folder of checkpoints."""

import logging
import os

import tensorflow as tf

logger = logging.getLogger(__name__)

# Where the trainer writes its checkpoints, under the run's outdir (as TensorFlowTTS 1.8 did).
CHECKPOINTS_FOLDER = "checkpoints"
# The name TensorFlow gives a checkpoint folder's index file; the multi-GPU guide for 1.8 also
# calls the checkpoint folder so (`--checkpoint <outdir>/checkpoint/`).
INDEX_NAME = "checkpoint"


def checkpoint_location(path):
    """`path` with the other names users give a run's checkpoints resolved to the folder or file meant.

    `<outdir>/checkpoint/` (no such folder: the guide's spelling) and `<outdir>/checkpoints/checkpoint`
    (the index file) -> `<outdir>/checkpoints`; a run's `<outdir>` without checkpoints of its own ->
    `<outdir>/checkpoints`. Anything else is returned unchanged.
    """
    path = os.path.normpath(str(path))
    parent, name = os.path.split(path)
    if name == INDEX_NAME and not os.path.isdir(path):
        if os.path.isfile(path):
            return parent
        if os.path.isdir(os.path.join(parent, CHECKPOINTS_FOLDER)):
            return os.path.join(parent, CHECKPOINTS_FOLDER)
    run_checkpoints = os.path.join(path, CHECKPOINTS_FOLDER)
    if os.path.isdir(run_checkpoints) and not os.path.isfile(os.path.join(path, INDEX_NAME)):
        return run_checkpoints
    return path


def latest_checkpoint(path, label=""):
    """`path` itself for a `ckpt-N` prefix, else the latest checkpoint in the folder `path`
    (after `checkpoint_location`).

    `label` starts error messages (e.g. "--checkpoint "). Raises FileNotFoundError for a folder without one.
    """
    path = checkpoint_location(path)
    if not os.path.isdir(path):
        return path
    latest = tf.train.latest_checkpoint(path)
    if latest is None:
        raise FileNotFoundError(f"{label}{path}: no checkpoint in this directory")
    return latest


def restore_weights(models, path, label="", strict=True):
    """Load weights into ``models`` ({checkpoint name: model}) from a checkpoint or an .h5.

    ``path``: a `ckpt-N` prefix, a checkpoint directory (its latest; see `checkpoint_location`
    for the other names accepted), or a single model's `.h5` (then ``models`` must hold one
    model; TensorFlowTTS 1.8 files work too, through the model's own `load_weights`). Only the
    models are read (no optimizer, no step); with ``strict``, every weight of the models must
    be in the checkpoint. Logs and returns the path read.
    """
    path = str(path)
    if path.endswith(".h5"):
        if len(models) != 1:
            raise ValueError(f"{label}{path}: an .h5 file holds one model, expected a checkpoint for {sorted(models)}")
        next(iter(models.values())).load_weights(path)
    else:
        path = latest_checkpoint(path, label)
        status = tf.train.Checkpoint(**models).restore(path)
        status.expect_partial()
        if strict:
            status.assert_existing_objects_matched()
    logger.info("%sweights of %s read from %s", label, ", ".join(sorted(models)), path)
    return path
