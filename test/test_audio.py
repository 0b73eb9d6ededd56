"""Audio features: loading any common file, trimming, and mel / F0 / energy on one time axis."""

from pathlib import Path

import librosa
import numpy as np
import pytest
import soundfile as sf

from tensorflow_tts.audio import (
    AudioError,
    extract_features,
    frame_energy,
    load_audio,
    load_for_features,
    log_mel_spectrogram,
    magnitude_stft,
    mel_filterbank_for,
    trim_silence,
)
from tensorflow_tts.configs import PreprocessConfig

CORPUS = Path(__file__).parent / "files" / "corpus"
SPEECH_WAV = CORPUS / "ljspeech" / "wavs" / "LJ001-0002.wav"
BROKEN_WAVS = CORPUS / "broken" / "wavs"


@pytest.fixture(scope="module")
def config():
    return PreprocessConfig.from_yaml(Path(__file__).parents[1] / "preprocess" / "ljspeech_preprocess.yaml")


@pytest.fixture(scope="module")
def speech(config):
    audio, conversions = load_audio(SPEECH_WAV, config.sampling_rate)
    assert conversions == []
    return audio


def harmonic_tone(f0, seconds, sampling_rate):
    time = np.arange(int(seconds * sampling_rate)) / sampling_rate
    return (0.3 * sum(np.sin(2 * np.pi * k * f0 * time) / k for k in range(1, 6))).astype(np.float32)


@pytest.mark.parametrize("length_in_hops", [4.0, 4.0 + 1 / 256, 10.0, 10.5, 37.0 - 1 / 256, None])
def test_mel_f0_energy_and_audio_share_one_frame_count(config, speech, length_in_hops):
    length = len(speech) if length_in_hops is None else int(length_in_hops * config.hop_size)
    features = extract_features(speech[:length], config)

    frames = features.num_frames
    assert frames == -(-length // config.hop_size)  # every sample lands in a frame
    assert features.mel.shape == (frames, config.num_mels)
    assert features.f0.shape == (frames,)
    assert features.energy.shape == (frames,)
    assert len(features.audio) == frames * config.hop_size
    np.testing.assert_array_equal(features.audio[:length], speech[:length])  # padding only appends


def test_mel_matches_a_direct_librosa_computation(config, speech):
    features = extract_features(speech, config)

    spectrum = librosa.stft(
        features.audio,
        n_fft=config.fft_size,
        hop_length=config.hop_size,
        win_length=config.win_length,
        window=config.window,
        center=True,
        pad_mode="reflect",
    )
    basis = librosa.filters.mel(
        sr=config.sampling_rate, n_fft=config.fft_size, n_mels=config.num_mels, fmin=config.fmin, fmax=config.fmax
    )
    expected = np.log10(np.maximum(basis @ np.abs(spectrum), 1e-10)).T[: features.num_frames]
    np.testing.assert_allclose(features.mel, expected, atol=1e-4)


def test_energy_is_the_l2_norm_of_each_magnitude_frame(config, speech):
    features = extract_features(speech, config)

    spectrum = librosa.stft(features.audio, n_fft=config.fft_size, hop_length=config.hop_size, pad_mode="reflect")
    magnitude = np.abs(spectrum)
    expected = np.linalg.norm(magnitude, axis=0)[: features.num_frames]
    np.testing.assert_allclose(features.energy, expected, rtol=1e-4, atol=1e-5)


def test_log_mel_spectrogram_is_the_feature_mel(config, speech):
    # Griffin-Lim and losses call the function; preprocessing goes through extract_features.
    features = extract_features(speech, config)
    mel = log_mel_spectrogram(
        features.audio,
        config.sampling_rate,
        config.fft_size,
        config.hop_size,
        config.num_mels,
        config.fmin,
        config.fmax,
        config.win_length,
        config.window,
    )
    np.testing.assert_array_equal(mel, features.mel)
    assert mel_filterbank_for(config).shape == (config.num_mels, config.fft_size // 2 + 1)
    assert magnitude_stft(features.audio, config.fft_size, config.hop_size).shape == (features.num_frames, 513)


def test_silence_clamps_the_mel_at_minus_ten_and_has_zero_energy(config):
    features = extract_features(np.zeros(4 * config.fft_size, dtype=np.float32), config)
    np.testing.assert_allclose(features.mel, -10.0, atol=1e-5)
    np.testing.assert_array_equal(features.energy, 0.0)
    np.testing.assert_array_equal(features.f0, 0.0)


def test_f0_follows_a_harmonic_tone(config):
    tone = harmonic_tone(150.0, 1.0, config.sampling_rate)
    f0 = extract_features(tone, config).f0
    voiced = f0[f0 > 0]
    assert len(voiced) > 0.8 * len(f0)
    assert abs(np.median(voiced) - 150.0) < 3.0


def test_speech_has_voiced_and_unvoiced_frames(config, speech):
    f0 = extract_features(speech, config).f0
    assert 0.2 < np.mean(f0 > 0) < 0.95
    assert np.all((f0 == 0) | ((f0 > config.f0_floor * 0.9) & (f0 < config.f0_ceil)))


def test_energy_scales_linearly_with_amplitude(config, speech):
    # Energy is linear in amplitude: twice the signal, twice the energy.
    features = extract_features(speech, config)
    louder = extract_features(2 * speech, config)
    np.testing.assert_allclose(louder.energy, 2 * features.energy, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(frame_energy(np.ones((3, 4))), [2.0, 2.0, 2.0])


# --- loading -------------------------------------------------------------------------------


def test_stereo_is_mixed_down_to_mono():
    audio, conversions = load_audio(BROKEN_WAVS / "stereo.wav", 22050)
    left_right, _ = sf.read(BROKEN_WAVS / "stereo.wav", dtype="float32")
    np.testing.assert_allclose(audio, left_right.mean(axis=1), atol=1e-6)
    assert conversions == ["2 channels mixed down to mono"]


def test_other_rates_are_resampled(tmp_path):
    tone = harmonic_tone(200.0, 0.5, 44100)
    sf.write(tmp_path / "tone.flac", tone, 44100, subtype="PCM_24")
    audio, conversions = load_audio(tmp_path / "tone.flac", 22050)
    assert conversions == ["resampled from 44100 Hz to 22050 Hz"]
    assert abs(len(audio) - len(tone) // 2) <= 1
    np.testing.assert_allclose(audio[1000:2000], tone[2000:4000:2], atol=2e-2)


@pytest.mark.parametrize(
    "subtype, converted",
    [("PCM_S8", True), ("PCM_U8", True), ("PCM_16", False), ("PCM_24", False), ("PCM_32", False), ("FLOAT", True)],
)
def test_every_sample_format_reads_as_float32(tmp_path, subtype, converted):
    tone = harmonic_tone(200.0, 0.25, 22050)
    path = tmp_path / "tone.wav"
    sf.write(path, tone, 22050, subtype=subtype, format="WAV" if subtype != "PCM_S8" else "AIFF")
    audio, conversions = load_audio(path, 22050)
    assert audio.dtype == np.float32
    np.testing.assert_allclose(audio, tone, atol=1e-2)  # 8-bit quantisation is about 0.008
    assert conversions == ([f"sample format {subtype} converted to float32"] if converted else [])


@pytest.mark.parametrize(
    "name, reason",
    [
        ("missing-wav.wav", "file not found"),
        ("zero-length.wav", "zero-length audio"),
        ("truncated-header.wav", "truncated or corrupt WAV header"),
        ("unreadable.wav", "not a readable audio file"),
    ],
)
def test_unusable_files_raise_audio_error_naming_file_and_reason(name, reason):
    with pytest.raises(AudioError, match=reason) as caught:
        load_audio(BROKEN_WAVS / name, 22050)
    assert str(BROKEN_WAVS / name) in str(caught.value)
    assert caught.value.reason.startswith(reason)


def test_empty_file_is_an_audio_error(tmp_path):
    (tmp_path / "empty.wav").write_bytes(b"")
    with pytest.raises(AudioError, match="empty file"):
        load_audio(tmp_path / "empty.wav", 22050)


# --- trimming and limits ---------------------------------------------------------------------


def test_trimming_cuts_leading_and_trailing_silence(config):
    tone = harmonic_tone(150.0, 1.0, config.sampling_rate)
    padded = np.concatenate([np.zeros(22050, np.float32), tone, np.zeros(11025, np.float32)])
    trimmed = trim_silence(padded, config.trim_threshold_in_db, config.trim_frame_size, config.trim_hop_size)
    # librosa keeps up to about one trimming frame on each side.
    assert len(tone) <= len(trimmed) <= len(tone) + 2 * config.trim_frame_size


def test_silent_and_over_long_recordings_are_refused(config):
    with pytest.raises(AudioError, match="silent"):
        load_for_features(BROKEN_WAVS / "silence.wav", config)
    short_limit = PreprocessConfig.from_dict({**config.to_dict(), "max_duration_seconds": 1.5})
    with pytest.raises(AudioError, match="too long: 1.88 s after trimming silence"):
        load_for_features(BROKEN_WAVS / "too-long.wav", short_limit)
    long_minimum = PreprocessConfig.from_dict({**config.to_dict(), "min_duration_seconds": 1.0})
    with pytest.raises(AudioError, match="too short"):
        load_for_features(BROKEN_WAVS / "good-01.wav", long_minimum)


def test_global_gain_scales_the_waveform(config):
    plain, _ = load_for_features(BROKEN_WAVS / "good-01.wav", config)
    halved, _ = load_for_features(
        BROKEN_WAVS / "good-01.wav", PreprocessConfig.from_dict({**config.to_dict(), "global_gain_scale": 0.5})
    )
    np.testing.assert_allclose(halved, 0.5 * plain, rtol=1e-6)
