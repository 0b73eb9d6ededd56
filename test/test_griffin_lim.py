"""Griffin-Lim inverts the one mel definition: same framing, frames * hop samples, converging."""

from pathlib import Path

import numpy as np
import pytest

from tensorflow_tts.audio import extract_features, load_for_features, stft
from tensorflow_tts.audio.griffin_lim import TFGriffinLim, TFMelSpectrogram, denormalize_mel
from tensorflow_tts.configs.preprocess import PreprocessConfig
from tensorflow_tts.dump.statistics import normalize_mel

REPO = Path(__file__).resolve().parents[1]
WAV = REPO / "test" / "files" / "corpus" / "ljspeech" / "wavs" / "LJ001-0001.wav"


@pytest.fixture(scope="module")
def features():
    config = PreprocessConfig.from_yaml(REPO / "preprocess" / "ljspeech_preprocess.yaml")
    audio, _ = load_for_features(WAV, config)
    return config, extract_features(audio, config)


def test_stft_frames_like_the_feature_stft(features):
    config, utterance = features
    griffin_lim = TFGriffinLim(config)
    ours = griffin_lim.stft(utterance.audio[np.newaxis]).numpy()[0]
    reference = stft(utterance.audio, config.fft_size, config.hop_size)
    assert ours.shape == reference.shape == (utterance.num_frames, config.fft_size // 2 + 1)
    np.testing.assert_allclose(ours, reference, atol=1e-3 * np.abs(reference).max())


def test_tf_log_mel_is_the_feature_mel(features):
    config, utterance = features
    ours = TFMelSpectrogram(config).log_mel(utterance.audio[np.newaxis]).numpy()[0]
    np.testing.assert_allclose(ours, utterance.mel, atol=2e-3)


def test_reconstructs_a_corpus_mel_with_decreasing_spectral_convergence(features):
    config, utterance = features
    audio, convergence = TFGriffinLim(config)(utterance.mel, n_iter=30, return_convergence=True)
    convergence = convergence.numpy()
    assert audio.shape == (utterance.num_frames * config.hop_size,)
    assert np.all(np.isfinite(audio.numpy()))
    assert convergence[29] < convergence[9] < convergence[0]
    assert convergence[29] < 0.5 * convergence[0]


def test_plain_griffin_lim_never_increases_the_inconsistency(features):
    config, utterance = features
    _, convergence = TFGriffinLim(config, momentum=0.0)(utterance.mel[:80], n_iter=15, return_convergence=True)
    assert np.all(np.diff(convergence.numpy()) <= 1e-4)


def test_normalised_mels_are_denormalised_with_the_stats(features):
    config, utterance = features
    stats = np.stack([utterance.mel.mean(axis=0), utterance.mel.std(axis=0) + 1e-3]).astype(np.float32)
    normalised = normalize_mel(utterance.mel, stats)
    np.testing.assert_allclose(denormalize_mel(normalised, stats), utterance.mel, atol=1e-4)
    raw_audio = TFGriffinLim(config)(utterance.mel[:40], n_iter=4).numpy()
    norm_audio = TFGriffinLim(config, stats=stats)(normalised[:40], n_iter=4).numpy()
    np.testing.assert_allclose(norm_audio, raw_audio, atol=1e-3)


def test_batches_of_mels_give_batches_of_audio(features):
    config, utterance = features
    mels = np.stack([utterance.mel[:50], utterance.mel[50:100]])
    audio = TFGriffinLim(config)(mels, n_iter=2)
    assert audio.shape == (2, 50 * config.hop_size)
