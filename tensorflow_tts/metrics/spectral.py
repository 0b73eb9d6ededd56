"""Spectral distances: the log-mel L1 and the multi-resolution STFT distance of copy-synthesis,
and the DTW-aligned mel L1 of an acoustic model's mels.

* log-mel L1: mean `|log10 mel(synthesized) - log10 mel(reference)|` with the one mel
  definition (`tensorflow_tts.audio`), both floored at log10 1e-5 = -5 as HiFi-GAN's
  validation mel error does: recordings hold digital silence (log10 -10), where any output
  noise would otherwise dominate. `floor=None` gives the unfloored figure.
* MR-STFT distance: spectral convergence + log STFT magnitude distance, each the mean over
  the MB-MelGAN v1 resolutions (fft 1024/2048/512, hop 120/240/50, window 600/1200/240),
  exactly what `tensorflow_tts.losses.TFMultiResolutionSTFT` computes as the training loss
  (uncentred frames, periodic Hann window, magnitudes `sqrt(|X|^2 + 1e-7)` clipped to
  [1e-7, 1e3]); numpy here so evaluation needs no TensorFlow.
* DTW mel L1: mean `|predicted - reference|` per mel bin along the DTW path whose frame
  cost is that same L1 (any two mel sequences of one kind: raw or normalised log mels).
"""

import numpy as np
import scipy.signal

from tensorflow_tts.audio.features import mel_filterbank_for
from tensorflow_tts.audio.mel import magnitude_to_log_mel
from tensorflow_tts.audio.stft import magnitude_stft
from tensorflow_tts.metrics.signals import MetricError, dtw_path, same_length

LOG_MEL_FLOOR = -5.0
# The training loss's resolutions and magnitude floor (tensorflow_tts/losses/stft.py).
MR_STFT_RESOLUTIONS = ((1024, 120, 600), (2048, 240, 1200), (512, 50, 240))  # (fft, hop, window)
MAGNITUDE_EPSILON = 1e-7
MAGNITUDE_MAX = 1e3


def log_mel(audio, config):
    """Log10 mel spectrogram `[frames, num_mels]` of float `[samples]` with the features of `config` (a PreprocessConfig)."""
    magnitude = magnitude_stft(np.asarray(audio, dtype=np.float32), config.fft_size, config.hop_size,
                               config.window_length, config.window)
    return magnitude_to_log_mel(magnitude, mel_filterbank_for(config))


def log_mel_l1(reference, synthesized, config, floor=LOG_MEL_FLOOR):
    """Mean log10-mel L1 of two waveforms of (nearly) the same length at `config.sampling_rate`."""
    reference, synthesized = same_length(reference, synthesized)
    if len(reference) < config.fft_size:
        raise MetricError(f"{len(reference)} samples: the log-mel L1 needs at least one FFT window ({config.fft_size})")
    reference_mel, synthesized_mel = log_mel(reference, config), log_mel(synthesized, config)
    if floor is not None:
        reference_mel, synthesized_mel = np.maximum(reference_mel, floor), np.maximum(synthesized_mel, floor)
    return float(np.mean(np.abs(synthesized_mel - reference_mel)))


def stft_magnitude(audio, fft_size, hop_size, window_length):
    """`|STFT|` as the training loss frames it: float64 `[1 + (samples - window_length) // hop_size, fft_size // 2 + 1]`."""
    window = scipy.signal.get_window("hann", window_length, fftbins=True)
    count = 1 + (len(audio) - window_length) // hop_size
    frames = np.lib.stride_tricks.sliding_window_view(audio, window_length)[::hop_size][:count]
    magnitude = np.abs(np.fft.rfft(frames * window, n=fft_size, axis=-1))
    return np.clip(np.sqrt(magnitude**2 + MAGNITUDE_EPSILON), MAGNITUDE_EPSILON, MAGNITUDE_MAX)


def mr_stft_distance(reference, synthesized, resolutions=MR_STFT_RESOLUTIONS):
    """Spectral convergence + log-magnitude distance, mean over `resolutions` (module docstring).

    Args:
        reference, synthesized: float `[samples]` of (nearly) the same length, at least the
            longest window long.
        resolutions: `(fft_size, hop_size, window_length)` triples.

    Returns:
        `(spectral_convergence, log_magnitude)`: floats; their sum is the distance.
    """
    reference, synthesized = same_length(reference, synthesized)
    longest = max(window_length for _, _, window_length in resolutions)
    if len(reference) < longest:
        raise MetricError(f"{len(reference)} samples: the MR-STFT distance needs at least {longest}")
    convergence = magnitude = 0.0
    for fft_size, hop_size, window_length in resolutions:
        y = stft_magnitude(reference, fft_size, hop_size, window_length)
        x = stft_magnitude(synthesized, fft_size, hop_size, window_length)
        convergence += np.linalg.norm(y - x) / np.linalg.norm(y)
        magnitude += np.mean(np.abs(np.log(y) - np.log(x)))
    return float(convergence / len(resolutions)), float(magnitude / len(resolutions))


def dtw_mel_l1(predicted, reference):
    """Mean L1 per mel bin along the DTW path between two float `[frames, num_mels]` mels of any lengths."""
    cost = np.abs(predicted[:, None, :] - reference[None, :, :]).mean(axis=2)
    path = dtw_path(cost)
    return float(cost[path[:, 0], path[:, 1]].mean())
