"""The log10 mel spectrogram: librosa's (Slaney) mel filterbank over the magnitude STFT."""

import functools

import librosa
import numpy as np

from tensorflow_tts.audio.stft import magnitude_stft

# Magnitudes are clamped here before log10, so silence maps to -10 instead of -inf.
MIN_MAGNITUDE = 1e-10


@functools.lru_cache(maxsize=16)
def mel_filterbank(sampling_rate, fft_size, num_mels, fmin, fmax):
    """librosa's mel filterbank, float32 `[num_mels, fft_size // 2 + 1]` (read-only).

    `fmin` / `fmax` are in Hz; `None` means 0 and `sampling_rate / 2`.
    """
    fmin = 0.0 if fmin is None else float(fmin)
    fmax = sampling_rate / 2 if fmax is None else float(fmax)
    basis = librosa.filters.mel(sr=sampling_rate, n_fft=fft_size, n_mels=num_mels, fmin=fmin, fmax=fmax)
    basis = basis.astype(np.float32)
    basis.setflags(write=False)
    return basis


def magnitude_to_log_mel(magnitude, filterbank):
    """Log10 mel spectrogram from a magnitude STFT.

    Args:
        magnitude: float `[frames, fft_size // 2 + 1]`.
        filterbank: float `[num_mels, fft_size // 2 + 1]` from `mel_filterbank`.

    Returns:
        float32 `[frames, num_mels]`.
    """
    mel = magnitude @ filterbank.T
    return np.log10(np.maximum(mel, MIN_MAGNITUDE)).astype(np.float32)


def log_mel_spectrogram(
    audio, sampling_rate, fft_size, hop_size, num_mels, fmin=None, fmax=None, win_length=None, window="hann"
):
    """Log10 mel spectrogram of a waveform.

    Args:
        audio: float32 `[samples]`.

    Returns:
        float32 `[samples // hop_size, num_mels]` (framing as in `tensorflow_tts.audio.stft`).
    """
    magnitude = magnitude_stft(audio, fft_size, hop_size, win_length, window)
    return magnitude_to_log_mel(magnitude, mel_filterbank(sampling_rate, fft_size, num_mels, fmin, fmax))
