"""A model's half of the `save_pretrained` folder: ``config.yml`` beside ``model.h5``, marked as ours.

`model.h5` is a Keras HDF5 weight file with one extra root attribute
(`legacy_weights.OWN_FORMAT_ATTRIBUTE`), so it is never taken for a TensorFlowTTS 1.8 file,
which would be loaded by name through the renaming rules instead.
"""

import os
from pathlib import Path

import h5py

import tensorflow_tts
from tensorflow_tts.models.legacy_weights import OWN_FORMAT_ATTRIBUTE

WEIGHTS_FILE_NAME = "model.h5"


def save_model_weights(model, path):
    """Write ``model``'s weights to the HDF5 file ``path``, marked as our own format.

    The file is written next to ``path`` first and moved into place, so an interrupted
    save never leaves a half-written ``model.h5``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    model.save_weights(str(partial), save_format="h5")
    with h5py.File(partial, "a") as h5:
        h5.attrs[OWN_FORMAT_ATTRIBUTE] = tensorflow_tts.__version__
    os.replace(partial, path)
    return path


def save_model(model, saved_dir):
    """Write a built model's ``config.yml`` (training-YAML layout) and ``model.h5`` into ``saved_dir``."""
    saved_dir = Path(saved_dir)
    saved_dir.mkdir(parents=True, exist_ok=True)
    model.config.save_pretrained(saved_dir)
    save_model_weights(model, saved_dir / WEIGHTS_FILE_NAME)
    return saved_dir
