"""Tacotron2 exports: builtin-only TFLite (inference_tflite) and SavedModel match Keras inference."""

import subprocess
import sys

import numpy as np
import pytest
import tensorflow_tts  # noqa: F401
import tensorflow as tf

from tensorflow_tts.configs import Tacotron2Config
from tensorflow_tts.inference.export import export_saved_model
from tensorflow_tts.inference.tflite import TFLiteModel, convert_model, operator_names
from tensorflow_tts.models import TFTacotron2
from helpers.tiny import TACOTRON2_V1_SHAPE

LENGTHS = (2, 3, 4, 5, 7, 8, 10, 12, 15, 19)


@pytest.fixture(scope="module", params=["lsa", "sma"])
def tacotron2(request):
    # Seeded: with random weights a stop logit can land next to the threshold, where float
    # rounding differences between Keras and TFLite decide the number of decoder steps.
    tf.keras.utils.set_random_seed(0)
    config = Tacotron2Config.from_dict(dict(
        vocab_size=20, embedding_hidden_size=16, n_conv_encoder=2, encoder_conv_filters=16,
        encoder_lstm_units=8, prenet_units=16, decoder_lstm_units=16, attention_dim=8,
        attention_filters=4, attention_kernel=5, n_mels=10, n_conv_postnet=2,
        postnet_conv_filters=16, **dict(TACOTRON2_V1_SHAPE, reduction_factor=2), attention_type=request.param,
    ))
    model = TFTacotron2(config)
    model.setup_maximum_iterations(9)
    # Greedy and deterministic, so Keras and the exports can be compared.
    model.setup_prenet_dropout(enabled=False)
    return model


def inputs(length):
    ids = (np.arange(length, dtype=np.int32) % 19 + 1)[None]
    return ids, np.array([length], np.int32), np.zeros([1], np.int32)


@pytest.fixture(scope="module")
def flatbuffer(tacotron2):
    tacotron2.inference(*inputs(4))  # builds the weights
    return convert_model(tacotron2)


def test_tflite_holds_builtin_ops_only(flatbuffer):
    names = operator_names(flatbuffer)
    assert "WHILE" in names
    assert not [name for name in names if name.startswith("Flex") or name == "CUSTOM"]


@pytest.mark.parametrize("length", LENGTHS)
def test_tflite_matches_keras_inference(tacotron2, flatbuffer, length):
    ids, lengths, speakers = inputs(length)
    decoder_output, mel_outputs, stop_logits, _ = tacotron2.inference(ids, lengths, speakers)
    outputs = TFLiteModel(flatbuffer)(input_ids=ids, input_lengths=lengths, speaker_ids=speakers)
    assert outputs["mel_outputs"].shape == tuple(mel_outputs.shape)
    np.testing.assert_allclose(outputs["mel_outputs"], mel_outputs, atol=1e-4)


def test_saved_model_runs_without_the_package_and_matches(tacotron2, tmp_path):
    ids, lengths, speakers = inputs(7)
    expected = tacotron2.inference(ids, lengths, speakers)[1].numpy()
    export_saved_model(tacotron2, tmp_path / "tacotron2")
    np.save(tmp_path / "expected.npy", expected)
    script = f"""
import numpy as np, tensorflow as tf, sys
assert "tensorflow_tts" not in sys.modules
model = tf.saved_model.load({str(tmp_path / "tacotron2")!r})
out = model.signatures["serving_default"](input_ids=tf.constant({ids.tolist()}, tf.int32),
    input_lengths=tf.constant({lengths.tolist()}, tf.int32), speaker_ids=tf.constant({speakers.tolist()}, tf.int32))
np.testing.assert_allclose(out["mel_outputs"].numpy(), np.load({str(tmp_path / "expected.npy")!r}), atol=1e-4)
print("match")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert "match" in result.stdout, result.stderr[-2000:]
