"""The short-time Fourier transform every feature is computed from.

Frame `t` is centred on sample `t * hop_size` (the signal is reflect-padded by
`fft_size // 2` on both sides), and a waveform of `frames * hop_size` samples has exactly
`frames` frames: the extra frame centred on the last sample is dropped. Griffin-Lim and
the STFT losses must frame the same way to reproduce these features.
"""

import librosa
import numpy as np

CENTER = True
PAD_MODE = "reflect"


def num_frames(num_samples, hop_size):
    """Feature frames for a waveform of `num_samples` samples: one per whole hop."""
    return num_samples // hop_size


def stft(audio, fft_size, hop_size, win_length=None, window="hann"):
    """Complex STFT, `num_frames(len(audio), hop_size)` frames.

    Args:
        audio: float32 `[samples]`.

    Returns:
        complex64 `[frames, fft_size // 2 + 1]`.
    """
    frames = num_frames(len(audio), hop_size)
    spectrum = librosa.stft(
        audio,
        n_fft=fft_size,
        hop_length=hop_size,
        win_length=win_length,
        window=window,
        center=CENTER,
        pad_mode=PAD_MODE,
    )
    return np.ascontiguousarray(spectrum[:, :frames].T)


def magnitude_stft(audio, fft_size, hop_size, win_length=None, window="hann"):
    """Magnitude of `stft`: float32 `[frames, fft_size // 2 + 1]`."""
    return np.abs(stft(audio, fft_size, hop_size, win_length, window)).astype(np.float32)
