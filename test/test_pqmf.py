"""PQMF: prototype design, analysis/synthesis shapes, and reconstruction of real speech."""

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import tensorflow_tts  # noqa: F401  (before tensorflow: tf.keras is Keras 2)
import tensorflow as tf

from tensorflow_tts.configs.mb_melgan import MultiBandMelGANGeneratorConfig
from tensorflow_tts.layers.pqmf import TFPQMF, design_prototype_filter

WAVS = Path(__file__).resolve().parent / "files" / "corpus" / "ljspeech" / "wavs"


def snr_db(reference, estimate):
    return 10 * np.log10(np.sum(reference**2) / np.sum((reference - estimate) ** 2))


def test_prototype_is_a_symmetric_lowpass():
    h = design_prototype_filter(taps=62, cutoff_ratio=0.142, beta=9.0)
    assert h.shape == (63,)
    np.testing.assert_allclose(h, h[::-1], atol=1e-12)
    response = np.abs(np.fft.rfft(h, 1024))  # bin 512 is Nyquist
    assert abs(response[0] - 1.0) < 1e-3
    assert response[int(0.3 * 512):].max() < 1e-3


def test_prototype_rejects_odd_taps_and_bad_cutoff():
    with pytest.raises(ValueError, match="taps must be even"):
        design_prototype_filter(taps=61)
    with pytest.raises(ValueError, match="cutoff_ratio"):
        design_prototype_filter(cutoff_ratio=1.5)


def test_analysis_and_synthesis_shapes():
    pqmf = TFPQMF(subbands=4)
    audio = tf.random.normal([2, 400, 1])
    subbands = pqmf.analysis(audio)
    assert subbands.shape == (2, 100, 4)
    assert pqmf.synthesis(subbands).shape == (2, 400, 1)


def test_built_from_an_old_style_config_object():
    pqmf = TFPQMF(MultiBandMelGANGeneratorConfig(subbands=4, taps=62, cutoff_ratio=0.15, beta=8.0))
    assert (pqmf.subbands, pqmf.taps, pqmf.cutoff_ratio, pqmf.beta) == (4, 62, 0.15, 8.0)
    assert TFPQMF.from_config(pqmf.get_config()).get_config() == pqmf.get_config()


def speech_or_harmonic_signal(length=22050):
    wavs = sorted(WAVS.glob("*.wav"))
    if wavs:
        audio, _ = sf.read(wavs[0], dtype="float32")
        return audio[:length]
    t = np.arange(length) / 22050
    return sum(0.2 / k * np.sin(2 * np.pi * 150 * k * t) for k in range(1, 30)).astype(np.float32)


def test_synthesis_of_analysis_reconstructs_speech():
    audio = speech_or_harmonic_signal()
    audio = audio[: len(audio) // 4 * 4]
    pqmf = TFPQMF(subbands=4, taps=62, cutoff_ratio=0.142, beta=9.0)
    reconstructed = pqmf.synthesis(pqmf.analysis(audio[None, :, None])).numpy()[0, :, 0]
    # Both filters are centred (zero delay); skip the edges, where the filters see padding.
    edge = pqmf.taps
    assert snr_db(audio[edge:-edge], reconstructed[edge:-edge]) >= 25.0


def output_and_gradient(filtering, signal):
    """The filtered signal, and the gradient of a fixed random projection of it."""
    with tf.GradientTape() as tape:
        tape.watch(signal)
        output = filtering(signal)
        projection = tf.random.stateless_normal(tf.shape(output), seed=(1, 2))
        loss = tf.reduce_sum(tf.cast(output, tf.float32) * projection)
    return output, tape.gradient(loss, signal)


def test_bfloat16_signals_are_filtered_in_float32():
    """Under mixed_bfloat16 the bank takes bfloat16 signals and filters them in float32: with
    oneDNN, TensorFlow's bfloat16 conv summed the 62-tap synthesis' shape (16 taps over 4
    channels) wrongly (0.97 relative error on an Intel Xeon with AMX), so MB-MelGAN's audio
    and its gradient were noise."""
    pqmf = TFPQMF()  # the published bank: 4 bands, 62 taps
    audio = speech_or_harmonic_signal(8192)[None, :, None]
    for filtering, signal in ((pqmf.analysis, audio), (pqmf.synthesis, pqmf.analysis(audio))):
        rounded = tf.cast(signal, tf.bfloat16)
        output, gradient = output_and_gradient(filtering, rounded)
        expected, expected_gradient = output_and_gradient(filtering, tf.cast(rounded, tf.float32))
        assert output.dtype == tf.float32 and gradient.dtype == tf.bfloat16
        np.testing.assert_allclose(output.numpy(), expected.numpy(), rtol=1e-6, atol=1e-7)
        error = tf.cast(gradient, tf.float32).numpy() - expected_gradient.numpy()
        assert np.sqrt(np.mean(error**2) / np.mean(expected_gradient.numpy() ** 2)) < 0.01  # its rounding
