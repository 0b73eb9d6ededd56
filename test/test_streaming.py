"""Streaming: vocoding overlapping mel chunks gives the one-shot audio; time to first audio is measured."""

import math

import numpy as np
import pytest

import tensorflow_tts  # noqa: F401  (before tensorflow: tf.keras is Keras 2)

from tensorflow_tts.inference.streaming import measure_stream, receptive_field_frames, stream_vocoder  # noqa: E402
from tensorflow_tts.inference.synthesizer import Synthesizer  # noqa: E402
from tensorflow_tts.inference.tflite import TFLiteModel  # noqa: E402
from test_export import LJSPEECH_MAPPER, NUM_MELS, shared_models, shared_tflite  # noqa: E402

VOCODERS = ("melgan_generator", "multiband_melgan_generator", "hifigan_generator")


def random_mels(frames=41, seed=0):
    return np.random.default_rng(seed).normal(size=[frames, NUM_MELS]).astype(np.float32)


@pytest.mark.parametrize("name", VOCODERS)
@pytest.mark.parametrize("chunk_frames", [1, 5, 16])
def test_streamed_audio_equals_one_shot_audio(name, chunk_frames):
    vocoder = shared_models()[name]
    mels = random_mels()
    one_shot = vocoder(mels[np.newaxis]).numpy().reshape(-1)
    context = receptive_field_frames(vocoder.config)
    chunks = list(stream_vocoder(lambda window: vocoder(window).numpy(), mels, vocoder.hop_size, context, chunk_frames))
    assert len(chunks) == -(-len(mels) // chunk_frames)
    streamed = np.concatenate(chunks)
    assert streamed.shape == one_shot.shape
    difference = np.abs(streamed - one_shot).max()
    print(f"{name}, chunks of {chunk_frames}, context {context}: max abs difference {difference:.2e}")
    assert difference < 1e-5


def test_without_context_the_chunk_edges_differ():
    vocoder = shared_models()["multiband_melgan_generator"]
    mels = random_mels(40)  # whole chunks: a 1-frame chunk cannot be reflection-padded without context
    one_shot = vocoder(mels[np.newaxis]).numpy().reshape(-1)
    streamed = np.concatenate(list(stream_vocoder(lambda w: vocoder(w).numpy(), mels, vocoder.hop_size, 0, 5)))
    assert np.abs(streamed - one_shot).max() > 1e-2  # measured 0.3, with audio peaking at 0.36


def test_tflite_vocoder_streams_with_its_recorded_context():
    tflite = TFLiteModel(shared_tflite("multiband_melgan_generator"))
    mels = random_mels(30, seed=1)
    one_shot = tflite(mels=mels[np.newaxis])["audio"].reshape(-1)
    context = tflite.info["receptive_field_frames"]
    vocode = lambda window: tflite(mels=window)["audio"]  # noqa: E731
    streamed = np.concatenate(list(stream_vocoder(vocode, mels, tflite.info["hop_size"], context, 7)))
    assert np.abs(streamed - one_shot).max() < 1e-5


def test_synthesizer_stream_equals_synthesize_and_reports_time_to_first_audio():
    models = shared_models()
    synthesizer = Synthesizer(models["fastspeech2"], models["hifigan_generator"], processor=LJSPEECH_MAPPER)
    text = "Streaming starts early. Then it goes on."
    audio, first, total = measure_stream(synthesizer.stream(text, chunk_frames=4))
    np.testing.assert_allclose(audio, synthesizer.synthesize(text), atol=1e-5)
    assert 0 < first <= total
    assert synthesizer.time_to_first_audio(text, chunk_frames=4) > 0


def test_cli_stream_flag_reports_time_to_first_audio(tmp_path, caplog):
    import logging

    from tensorflow_tts.bin.synthesize import main
    from test_export import save_model_folder

    models = shared_models()
    acoustic = save_model_folder(models["fastspeech2"], tmp_path / "fs2")
    vocoder = save_model_folder(models["melgan_generator"], tmp_path / "melgan")
    argv = ["--text", "Hello.", "--acoustic", str(acoustic), "--vocoder", str(vocoder), "--processor",
            LJSPEECH_MAPPER, "--out", str(tmp_path / "x.wav"), "--stream", "--chunk-frames", "3"]
    with caplog.at_level(logging.INFO, logger="tensorflow_tts"):
        assert main(argv) == 0
    assert "time to first audio" in caplog.text


@pytest.mark.parametrize("chunk_frames", [1, 5, 16])
def test_parallel_wavegan_streams_its_one_shot_audio_when_given_the_same_noise(chunk_frames):
    vocoder = shared_models()["parallel_wavegan_generator"]
    mels = random_mels()
    noise = np.random.default_rng(5).standard_normal([1, len(mels) * vocoder.hop_size, 1]).astype(np.float32)
    one_shot = vocoder(mels[np.newaxis], noise=noise).numpy().reshape(-1)
    context = receptive_field_frames(vocoder.config)
    vocode = lambda window, window_noise: vocoder(window, noise=window_noise).numpy()  # noqa: E731
    streamed = np.concatenate(list(stream_vocoder(vocode, mels, vocoder.hop_size, context, chunk_frames, noise=noise)))
    assert streamed.shape == one_shot.shape
    assert np.abs(streamed - one_shot).max() < 1e-5
    # Fresh noise per window would give other audio: the noise slices are what makes them agree.
    fresh = np.concatenate(list(stream_vocoder(lambda window: vocoder(window).numpy(), mels, vocoder.hop_size, context,
                                               chunk_frames)))
    assert np.abs(fresh - one_shot).max() > 1e-3


def test_parallel_wavegan_receptive_field_counts_every_dilated_conv():
    config = shared_models()["parallel_wavegan_generator"].config  # dilations 1, 2, 1, 2; scales 2, 3; window 2
    assert receptive_field_frames(config) == math.ceil(2 + 2 / 2 + 3 / 6 + (1 + 2 + 1 + 2) / 6) + 1
    # The published v1: 30 blocks with dilations up to 512 reach 12 frames beyond the 3.3 of the conditioning.
    from tensorflow_tts.configs import ParallelWaveGANGeneratorConfig

    assert receptive_field_frames(ParallelWaveGANGeneratorConfig()) == 17


def test_synthesizer_streams_parallel_wavegan_with_the_noise_it_would_vocode_with():
    models = shared_models()
    synthesizer = Synthesizer(models["fastspeech2"], models["parallel_wavegan_generator"], processor=LJSPEECH_MAPPER)
    text = "Noise driven. Still the same audio."
    np.random.seed(11)  # the synthesizer draws each piece's noise from numpy's global generator
    one_shot = synthesizer.synthesize(text)
    np.random.seed(11)
    streamed, _, _ = measure_stream(synthesizer.stream(text, chunk_frames=3))
    np.testing.assert_allclose(streamed, one_shot, atol=1e-5)
