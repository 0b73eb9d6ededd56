"""What a Keras ``.h5`` weight file holds, and a one-line refusal when it is another model's.

Training writes ``fastspeech2-N.h5``, ``aligner-N.h5``, ``generator-N.h5`` and
``discriminator-N.h5`` side by side, so the wrong one is easy to pass. A file's direct
sub-layer groups (the HDF5 root's ``layer_names``) tell its model family apart, ours and
TensorFlowTTS 1.8's alike; a model's own sub-layers are read the same way, so both sides
are named by one table.
"""

import logging
import re

import h5py

logger = logging.getLogger(__name__)

# (a direct sub-layer name, full match; the family a model with it belongs to; what to call it).
# The first row that any sub-layer matches wins: FastSpeech2 has a duration predictor too.
FAMILIES = (
    (r"f0_predictor", "fastspeech2", "FastSpeech2"),
    (r"duration_predictor", "fastspeech", "FastSpeech"),
    (r"(key|query)_conv_\d+", "aligner", "FastSpeech2 aligner"),
    (r"decoder_cell", "tacotron2", "Tacotron2"),
    (r"pqmf", "generator", "Multi-band MelGAN generator"),
    (r"multi_hifigan_resblock_\._\d+", "generator", "HiFi-GAN generator"),
    (r"first_conv", "generator", "MelGAN generator"),
    (r"sequential(_\d+)?", "generator", "vocoder generator (TensorFlowTTS 1.8)"),
    (r"first_convolution", "generator", "Parallel WaveGAN generator"),
    (r"(melgan_discriminator_scale|hifigan_period_discriminator)_\._\d+", "discriminator", "GAN discriminator"),
)


class WeightFileError(ValueError):
    """A weight file that does not fit the model it is loaded into; the message says what it holds."""


def attribute_text(value):
    """An HDF5 name attribute (bytes or str) as str."""
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def family_of(layer_names):
    """Direct sub-layer names -> (family, description), or (None, None) when none is known."""
    for pattern, family, description in FAMILIES:
        if any(re.fullmatch(pattern, name) for name in layer_names):
            return family, description
    return None, None


def read_contents(path):
    """(direct sub-layer group names, every tensor name) of a Keras HDF5 weight file, or None if it is not one."""
    try:
        with h5py.File(path, "r") as h5:
            if "layer_names" not in h5.attrs:
                return None
            groups = [attribute_text(name) for name in h5.attrs["layer_names"]]
            tensors = [attribute_text(name) for group in groups for name in h5[group].attrs.get("weight_names", [])]
    except OSError:
        return None
    return groups, tensors


def check_weight_file(model, path):
    """Raise `WeightFileError` in one line when ``path`` holds another family of model than ``model``.

    The line says what the file holds (its family, tensor count and model name) and what
    was expected; both weight lists go to the debug log. Files and models of unknown
    family pass, so the loader's own, detailed checks still apply to them.
    """
    contents = read_contents(path)
    if contents is None:
        return
    groups, tensors = contents
    file_family, file_description = family_of(groups)
    model_family, model_description = family_of([layer.name for layer in model.layers])
    if file_family is None or model_family is None or file_family == model_family:
        return
    logger.debug("%s holds %d tensors: %s", path, len(tensors), ", ".join(tensors))
    logger.debug("%s expects %d weights: %s", model.name, len(model.weights), ", ".join(w.name for w in model.weights))
    stored_name = tensors[0].split("/")[0] if tensors and "/" in tensors[0] else None
    named = f", model name {stored_name!r}" if stored_name and stored_name not in groups else ""
    raise WeightFileError(
        f"{path}: holds a {file_description} ({len(tensors)} tensors{named}), but a {model_description} "
        f"was expected ({type(model).__name__}, {len(model.weights)} weights); pass that model's weight file "
        "(the full lists are logged at debug level)"
    )
