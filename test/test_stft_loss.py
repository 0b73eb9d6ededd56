"""Multi-resolution STFT loss: zero for identical audio, equal to a direct numpy computation."""

import numpy as np
import pytest
import scipy.signal

import tensorflow_tts  # noqa: F401  (before tensorflow: tf.keras is Keras 2)
import tensorflow as tf

from tensorflow_tts.losses.stft import TFMultiResolutionSTFT

RESOLUTIONS = dict(fft_lengths=[128, 256, 64], frame_lengths=[100, 200, 40], frame_steps=[25, 50, 10])


def numpy_magnitude(signal, fft_length, frame_step, frame_length):
    window = scipy.signal.get_window("hann", frame_length, fftbins=True)  # periodic Hann
    starts = range(0, len(signal) - frame_length + 1, frame_step)
    frames = np.stack([signal[s : s + frame_length] * window for s in starts])
    magnitude = np.abs(np.fft.rfft(frames, n=fft_length, axis=-1))
    return np.clip(np.sqrt(magnitude**2 + 1e-7), 1e-7, 1e3)


def numpy_mr_stft(y, x):
    sc, mag = [], []
    for fft_length, frame_length, frame_step in zip(*RESOLUTIONS.values()):
        y_mag = numpy_magnitude(y, fft_length, frame_step, frame_length)
        x_mag = numpy_magnitude(x, fft_length, frame_step, frame_length)
        sc.append(np.linalg.norm(y_mag - x_mag) / np.linalg.norm(y_mag))
        mag.append(np.mean(np.abs(np.log(y_mag) - np.log(x_mag))))
    return np.mean(sc), np.mean(mag)


@pytest.fixture
def audio_pair():
    rng = np.random.default_rng(0)
    target = rng.normal(size=(2, 1000)).astype(np.float32) * 0.3
    prediction = (target + 0.1 * rng.normal(size=target.shape)).astype(np.float32)
    return target, prediction


def test_identical_inputs_give_zero(audio_pair):
    target, _ = audio_pair
    sc_loss, mag_loss = TFMultiResolutionSTFT(**RESOLUTIONS)(tf.constant(target), tf.constant(target))
    assert sc_loss.shape == (2,) and mag_loss.shape == (2,)
    np.testing.assert_array_equal(sc_loss.numpy(), 0.0)
    np.testing.assert_array_equal(mag_loss.numpy(), 0.0)


def test_matches_numpy_per_example(audio_pair):
    target, prediction = audio_pair
    sc_loss, mag_loss = TFMultiResolutionSTFT(**RESOLUTIONS)(tf.constant(target), tf.constant(prediction))
    for b in range(2):
        expected_sc, expected_mag = numpy_mr_stft(target[b].astype(np.float64), prediction[b].astype(np.float64))
        np.testing.assert_allclose(sc_loss[b].numpy(), expected_sc, rtol=1e-4)
        np.testing.assert_allclose(mag_loss[b].numpy(), expected_mag, rtol=1e-4)


def test_accepts_channel_last_audio(audio_pair):
    target, prediction = audio_pair
    loss = TFMultiResolutionSTFT(**RESOLUTIONS)
    flat = loss(tf.constant(target), tf.constant(prediction))
    channel_last = loss(tf.constant(target[..., None]), tf.constant(prediction[..., None]))
    np.testing.assert_allclose(flat, channel_last)


def test_mismatched_resolution_lists_are_rejected():
    with pytest.raises(ValueError, match="same length"):
        TFMultiResolutionSTFT(fft_lengths=[512], frame_lengths=[240, 600], frame_steps=[50])
