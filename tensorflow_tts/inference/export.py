"""SavedModel export: named serving signatures with dynamic time axes, loadable by plain TensorFlow.

Also what every exported format shares: which kind of model a Keras model is, the facts an
exported file records about it (`model_info`), the serving functions themselves and loading
a trained Keras model (through TFAutoModel) with those facts.
"""

import json
import logging
import os
from pathlib import Path

import tensorflow as tf

from tensorflow_tts.configs.base_config import ConfigError
from tensorflow_tts.configs.registry import read_yaml
from tensorflow_tts.inference.auto import TFAutoModel
from tensorflow_tts.inference.pairing import pair_mismatch
from tensorflow_tts.inference.pretrained import PretrainedError
from tensorflow_tts.inference.streaming import receptive_field_frames
from tensorflow_tts.layers import kernels
from tensorflow_tts.models import registry
from tensorflow_tts.models.serving import function_over

logger = logging.getLogger(__name__)

ACOUSTIC_TYPES = tuple(entry.name for entry in registry.of_role(registry.ACOUSTIC))
VOCODER_TYPES = tuple(entry.name for entry in registry.of_role(registry.VOCODER))

# The file, inside a SavedModel folder, that records `model_info` (assets.extra is where
# SavedModel keeps files TensorFlow itself does not read).
METADATA_FILE = os.path.join("assets.extra", "tensorflow_tts.json")
METADATA_VERSION = 1


class ExportError(Exception):
    """A model that cannot be loaded or exported as asked; the message says why and what to do."""


def model_type_of(model):
    """The `model_type` of a Keras model of ours, e.g. "fastspeech2" or "hifigan_generator"."""
    try:
        return registry.model_type_of(model).name
    except registry.UnknownModelType:
        exportable = registry.of_role(registry.ACOUSTIC) + registry.of_role(registry.VOCODER)
        raise ExportError(f"{type(model).__name__} is not an exportable model; expected one of "
                          f"{', '.join(entry.model_class.__name__ for entry in exportable)}") from None


def model_info(model, sampling_rate=None, hop_size=None):
    """What an exported file records about a model, so a synthesizer can check a pairing.

    Keys: model_type, role ("acoustic" or "vocoder"), num_mels, hop_size and sampling_rate
    (None when unknown: an acoustic config knows neither), for vocoders
    receptive_field_frames (the streaming context), and for acoustic models
    vocab_size, n_speakers, max_position_embeddings (0: no limit) and mel_output.
    """
    model_type = model_type_of(model)
    info = {"format_version": METADATA_VERSION, "model_type": model_type, "sampling_rate": sampling_rate}
    config = model.config
    if model_type in VOCODER_TYPES:
        if not model.built:
            raise ExportError(f"{model_type}: build the vocoder first (model.build_once(num_mels))")
        if hop_size is not None and int(hop_size) != config.hop_size:
            raise ExportError(f"{model_type}: hop_size {hop_size} given, but the config upsamples by {config.hop_size}")
        info.update(role="vocoder", num_mels=model.num_mels, hop_size=config.hop_size,
                    receptive_field_frames=receptive_field_frames(config))
    else:
        info.update(
            role="acoustic",
            num_mels=model.num_mels,
            hop_size=None if hop_size is None else int(hop_size),
            vocab_size=config.vocab_size,
            n_speakers=config.n_speakers,
            max_position_embeddings=getattr(config, "max_position_embeddings", 0),
            mel_output=model.mel_output,
        )
    return info

def combined_info(acoustic_info, vocoder_info):
    """`model_info` of a token-ids -> waveform model made of the two."""
    check_pair(acoustic_info, vocoder_info)
    info = dict(acoustic_info)
    info.update(
        role="text2wav",
        model_type=f"{acoustic_info['model_type']}+{vocoder_info['model_type']}",
        hop_size=vocoder_info["hop_size"],
        sampling_rate=vocoder_info["sampling_rate"] or acoustic_info["sampling_rate"],
        vocoder_type=vocoder_info["model_type"],
    )
    return info


def check_pair(acoustic_info, vocoder_info):
    """Raise ExportError when the vocoder was made for other features than the acoustic model's."""
    mismatch = pair_mismatch(acoustic_info, vocoder_info)
    if mismatch:
        raise ExportError(mismatch)


# --------------------------------------------------------------------------- serving functions
def input_signature(model, batch_size=None):
    """Named TensorSpecs of a model's serving inputs; time axes are None (any length)."""
    model_type_of(model)  # an ExportError naming the model when it is not one of ours
    return model.serving_signature(batch_size)


def serving_function(model, batch_size=None):
    """A tf.function taking the named inputs of `input_signature` and returning a dict.

    FastSpeech2: input_ids (B, T), speaker_ids, speed_ratios, f0_ratios, energy_ratios (B,)
    -> mel_before, mel_after (B, F, num_mels), durations (B, T), f0_outputs, energy_outputs.
    FastSpeech: the same without f0/energy. Tacotron2: input_ids, input_lengths, speaker_ids
    -> decoder_output, mel_outputs, stop_logits (+ alignment_history unless batch_size is 1).
    Vocoders: mels (B, F, num_mels) -> audio (B, F * hop_size, 1).
    (Each model's `serving_signature` and `serve`; see models/serving.py.)
    """
    model_type_of(model)  # an ExportError naming the model when it is not one of ours
    return model.serving_function(batch_size)


def text2wav_function(acoustic, vocoder, batch_size=1):
    """A tf.function: the acoustic model's inputs -> {"audio": (B, N, 1)}, the vocoder run on its mels."""
    acoustic_type, vocoder_type = model_type_of(acoustic), model_type_of(vocoder)
    if acoustic_type not in ACOUSTIC_TYPES or vocoder_type not in VOCODER_TYPES:
        raise ExportError(f"text2wav needs an acoustic model and a vocoder, got {acoustic_type} and {vocoder_type}")
    if not acoustic.built:
        acoustic.build_once()
    check_pair(model_info(acoustic), model_info(vocoder))

    def serve(inputs):
        mels = acoustic.serve(inputs, batch_size)[acoustic.mel_output]
        return vocoder.serve({"mels": mels}, batch_size)

    return function_over(acoustic.serving_signature(batch_size), serve)


# --------------------------------------------------------------------------- SavedModel
def export_saved_model(model, outdir, sampling_rate=None, hop_size=None):
    """Write `model` as a SavedModel with the `serving_default` signature of `serving_function`.

    Batch and time axes are dynamic. Only variables and the traced graph are saved (no Keras
    objects), so `tf.saved_model.load(outdir).signatures["serving_default"](input_ids=...)`
    works without tensorflow_tts. `model_info` goes to `<outdir>/assets.extra/tensorflow_tts.json`.
    Returns the info.
    """
    info = model_info(model, sampling_rate=sampling_rate, hop_size=hop_size)
    function = serving_function(model)
    module = tf.Module()
    # Tracking the variables (not the Keras model) keeps Keras' own serialisation out.
    module.model_variables = list(model.variables)
    module.serve = function
    outdir = Path(outdir)
    with kernels.portable():  # loaded without tensorflow_tts, the graph may hold TensorFlow's ops only
        tf.saved_model.save(module, str(outdir), signatures={"serving_default": function.get_concrete_function()})
    metadata_path = outdir / METADATA_FILE
    metadata_path.parent.mkdir(parents=True, exist_ok=True)
    metadata_path.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    logger.info("wrote SavedModel %s (%s)", outdir, info["model_type"])
    return info


def is_saved_model(path):
    return Path(path).is_dir() and (Path(path) / "saved_model.pb").is_file()


def read_saved_model_info(path):
    """The `model_info` recorded by `export_saved_model`, or None if the folder has none."""
    metadata_path = Path(path) / METADATA_FILE
    if not metadata_path.is_file():
        return None
    try:
        return json.loads(metadata_path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise ExportError(f"{metadata_path}: not valid JSON ({error})") from error


# --------------------------------------------------------------------------- loading Keras models
CONFIG_NAMES = ("config.yml", "config.yaml", "config.json")


def _config_file_near(path):
    """The config file of a model folder, or of the folder (or its parent) holding a weight file."""
    folder = path if path.is_dir() else path.parent
    for candidate in (folder, folder.parent):
        for name in CONFIG_NAMES:
            if (candidate / name).is_file():
                return candidate / name
    return None


def load_keras_model(path=None, config=None, checkpoint=None):
    """A trained Keras model and its `model_info`, through `TFAutoModel.from_pretrained`.

    Args:
        path: a `save_pretrained` folder (config.yml + model.h5) or a training run's folder.
        config: a config file (training YAML, config.yml or 1.8's config.json); its top-level
            sampling_rate and hop_size, when present, are recorded in the export.
        checkpoint: an .h5 (ours or TensorFlowTTS 1.8's) or a trainer checkpoint (`ckpt-N`
            or the folder holding them); used instead of `path`.

    Returns: (model, info). Raises ExportError with the file and the fix on bad input.
    """
    source = checkpoint if checkpoint is not None else path
    if source is None:
        raise ExportError("pass a model folder, or a config and its weights (an .h5 or a checkpoint)")
    source = Path(source)
    if not source.exists() and not Path(f"{source}.index").exists():
        raise ExportError(f"{source}: no such model folder, weight file or checkpoint")
    config_path = Path(config) if config is not None else _config_file_near(source)
    if config_path is None:
        raise ExportError(f"{source}: no config.yml next to the weights; pass the training YAML (--config)")
    if source.is_dir() and (source / "checkpoints").is_dir() and not (source / "model.h5").is_file():
        source = source / "checkpoints"  # a training run's folder: its latest checkpoint
    try:
        model = TFAutoModel.from_pretrained(str(source), config=str(config_path))
        values = read_yaml(config_path) if config_path.suffix != ".json" else {}
    except (ConfigError, PretrainedError, ValueError, OSError, tf.errors.OpError) as error:
        raise ExportError(f"{source}: cannot load the model ({error})") from None
    model_type = model_type_of(model)
    hop_size = values.get("hop_size")
    if model_type in VOCODER_TYPES and hop_size is not None and int(hop_size) != model.config.hop_size:
        raise ExportError(f"{config_path}: hop_size {hop_size}, but the generator upsamples by {model.config.hop_size}")
    info = model_info(model, sampling_rate=values.get("sampling_rate"),
                      hop_size=None if model_type in VOCODER_TYPES else hop_size)
    return model, info
