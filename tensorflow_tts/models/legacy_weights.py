"""Load weight files written by TensorFlowTTS <= 1.8 into our models, by name.

The old framework saved Keras HDF5 weight files and loaded them by position. Our
layers are organised differently, so we read every old tensor with its name, drop
Keras' automatic counters (``conv1d_7`` -> ``conv1d``), rename it with an explicit
per-model map and assign it to the one of our weights with that (counter-free) name.
Names that occur several times after the counters are gone are paired in order.
"""

import dataclasses
import logging
import re
from collections import defaultdict
from typing import Callable, Sequence

import h5py
import numpy as np

from tensorflow_tts.models.weight_files import WeightFileError, attribute_text, check_weight_file

logger = logging.getLogger(__name__)

# Our own save_pretrained marks its files with this root attribute.
OWN_FORMAT_ATTRIBUTE = "tensorflow_tts_format"

# A Keras counter is "_<digits>" right after a letter or digit at the end of a name
# component ("dense_3", "conv1d_7"); "layer_._0" keeps its index because a "." precedes it.
_COUNTER = re.compile(r"(?<=[A-Za-z0-9])_\d+(?=/|$)")


class LegacyWeightsError(WeightFileError):
    """An old weight file that does not fit the model it is loaded into."""


def normalize_weight_name(name):
    """``'tf_fast_speech2/dense_3/kernel:0'`` -> ``'tf_fast_speech2/dense/kernel'``."""
    name = name.split(":")[0]
    return _COUNTER.sub("", name)


@dataclasses.dataclass
class LegacyWeight:
    path: str  # the HDF5 dataset path, for messages
    name: str  # the variable name without counters and without ":0"
    value: np.ndarray


def is_legacy_h5(path):
    """True for a Keras HDF5 weight file that our own save_pretrained did not write."""
    try:
        with h5py.File(path, "r") as h5:
            return "layer_names" in h5.attrs and OWN_FORMAT_ATTRIBUTE not in h5.attrs
    except OSError:
        return False


def read_legacy_h5(path):
    """Every tensor of an old weight file, in the order Keras would load them."""
    weights = []
    with h5py.File(path, "r") as h5:
        if "layer_names" not in h5.attrs:
            raise LegacyWeightsError(f"{path}: not a Keras HDF5 weight file (no 'layer_names' attribute)")
        for layer_name in map(attribute_text, h5.attrs["layer_names"]):
            group = h5[layer_name]
            for weight_name in map(attribute_text, group.attrs.get("weight_names", [])):
                weights.append(
                    LegacyWeight(
                        path=f"{layer_name}/{weight_name}",
                        name=normalize_weight_name(weight_name),
                        value=np.asarray(group[weight_name]),
                    )
                )
    return weights


Renamer = Callable[[str, int], "str | None"]


def regex_renamer(rules: Sequence[tuple[str, str]], ignore: Sequence[str] = ()) -> Renamer:
    """A renamer applying ``re.sub(pattern, replacement)`` for every rule in turn.

    Old names matching one of ``ignore`` (full match) map to None: they are dropped
    on purpose (e.g. weight-norm ``initialized`` flags our layers do not keep).
    """
    compiled = [(re.compile(pattern), replacement) for pattern, replacement in rules]
    ignored = [re.compile(pattern) for pattern in ignore]

    def rename(name, occurrence):
        if any(pattern.fullmatch(name) for pattern in ignored):
            return None
        for pattern, replacement in compiled:
            name = pattern.sub(replacement, name)
        return name

    return rename


@dataclasses.dataclass
class LoadReport:
    loaded: list
    ignored: list
    missing: list  # our weights the file did not provide
    unexpected: list  # old tensors that matched none of our weights
    mismatched: list  # (name, old shape, our shape)

    @property
    def complete(self):
        return not (self.missing or self.unexpected or self.mismatched)

    def describe(self):
        lines = []
        if self.missing:
            lines.append("missing from the file: " + ", ".join(self.missing))
        if self.unexpected:
            lines.append("not used by the model: " + ", ".join(self.unexpected))
        for name, old_shape, our_shape in self.mismatched:
            lines.append(f"wrong shape for {name}: file has {old_shape}, model expects {our_shape}")
        return "; ".join(lines)


def load_legacy_weights(model, path, rename: Renamer, allow_partial=False):
    """Assign the tensors of an old weight file to ``model``'s (built) weights.

    Args:
        model: a built Keras model.
        path: the old ``.h5`` weight file.
        rename: maps (old counter-free name, its occurrence index) to our counter-free
            weight name, or None to drop that tensor on purpose.
        allow_partial: load what fits and log the rest instead of raising.

    Returns:
        A LoadReport. Raises LegacyWeightsError naming every missing, unexpected or
        mis-shaped tensor unless ``allow_partial``.
    """
    ours = defaultdict(list)
    for variable in model.weights:
        ours[normalize_weight_name(variable.name)].append(variable)

    seen = defaultdict(int)
    taken = defaultdict(int)
    loaded, ignored, unexpected, mismatched = [], [], [], []
    assignments = []
    for weight in read_legacy_h5(path):
        occurrence = seen[weight.name]
        seen[weight.name] += 1
        target = rename(weight.name, occurrence)
        if target is None:
            ignored.append(weight.path)
            continue
        candidates = ours.get(target, [])
        index = taken[target]
        if index >= len(candidates):
            unexpected.append(f"{weight.path} (as {target})")
            continue
        taken[target] += 1
        variable = candidates[index]
        if tuple(variable.shape) != weight.value.shape:
            mismatched.append((variable.name, weight.value.shape, tuple(variable.shape)))
            continue
        assignments.append((variable, weight.value))
        loaded.append(variable.name)

    missing = [v.name for name, vs in ours.items() for v in vs[taken[name]:]]
    report = LoadReport(loaded, ignored, missing, unexpected, mismatched)
    if not report.complete:
        message = f"{path}: {report.describe()}"
        if not allow_partial:
            raise LegacyWeightsError(message + " (pass allow_partial=True / --allow-partial to load the rest)")
        logger.warning("loading only part of %s", message)
    for variable, value in assignments:
        variable.assign(value.astype(variable.dtype.as_numpy_dtype))
    logger.info("loaded %d tensors from %s (%d ignored on purpose)", len(loaded), path, len(ignored))
    return report


class LegacyWeightsMixin:
    """``load_weights`` that also accepts a TensorFlowTTS 1.8 ``.h5`` (detected, loaded by name).

    Put it before ``tf.keras.Model`` in the bases. The model supplies ``_build()`` and
    ``_legacy_renamer(prefix, filepath)``, the renamer of an old file given our name prefix.
    """

    def load_weights(self, filepath, *args, allow_partial=False, **kwargs):
        """Load our own weights, or a TensorFlowTTS 1.8 ``.h5`` (detected, renamed by name).

        For an old file, every tensor must find its weight and every weight its tensor
        unless ``allow_partial``; otherwise `LegacyWeightsError` names what is missing,
        unexpected or mis-shaped; a file of another model family (an aligner-N.h5 given to
        FastSpeech2, a vocoder's file given to an acoustic model) is refused in one line
        (`weight_files.WeightFileError`). Returns the `LoadReport` for an old file.
        """
        check_weight_file(self, filepath)
        if not is_legacy_h5(filepath):
            return super().load_weights(filepath, *args, **kwargs)
        if not self.built:
            self.build_once()
        # Our weight names, as the loader compares them: "<model name>/...", counters removed.
        prefix = normalize_weight_name(self.weights[0].name).split("/")[0]
        return load_legacy_weights(self, filepath, self._legacy_renamer(prefix, filepath), allow_partial=allow_partial)
