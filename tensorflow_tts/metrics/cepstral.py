"""Mel-cepstral distortion, log-F0 RMSE and voiced/unvoiced error on DTW-aligned WORLD frames.

Definitions (as in most TTS papers, e.g. ESPnet's MCD and F0 scripts):

* Analysis: WORLD at a 5 ms frame period (`hop_size = round(0.005 * sampling_rate)`):
  F0 from `tensorflow_tts.audio.extract_f0` (DIO + StoneMask, 71-800 Hz), the spectral
  envelope from CheapTrick with that F0.
* Mel-cepstrum: `c~[0..order]` (order 24) of the log amplitude envelope
  `0.5 * ln(envelope)` on the all-pass warped frequency axis
  `w~ = w + 2 atan(alpha sin w / (1 - alpha cos w))`, i.e.
  `0.5 ln S(w) = c~[0] + sum_{m>=1} c~[m] cos(m w~)` (SPTK's minimum-phase convention,
  gamma = 0, as pysptk's `sp2mc`). The envelope is resampled on a uniform `w~` grid and
  inverse-FFT'd, which equals SPTK's `freqt` recursion up to interpolation error. `alpha` is the one whose warping best
  follows the mel scale at the sampling rate (`all_pass_alpha`: 0.410 at 16 kHz, 0.455
  at 22.05 kHz, 0.544 at 44.1 kHz, 0.554 at 48 kHz).
* DTW: librosa's DTW with Euclidean frame distance on `c~[1..order]`; both utterances'
  frames all take part (nothing is trimmed), so the path may stretch either one.
* MCD (dB), per utterance: mean over the path of
  `10 / ln(10) * sqrt(2 * sum_{m=1..order} (c~_ref[m] - c~_syn[m])^2)`; c0 (energy) is
  left out. The whole band counts: audio with nothing above a mel filterbank's fmax (e.g.
  Griffin-Lim of a 7.6 kHz mel at 22.05 kHz) differs from the recording there by the
  envelope floor, which dominates its MCD. `max_frequency` limits the MCD to the band below
  it: both envelopes are set to the same floor above it, and since the mel-cepstrum is
  linear in the log envelope, their difference there is then exactly zero.
* log-F0 RMSE: `sqrt(mean (ln f0_ref - ln f0_syn)^2)` over the path frames voiced in
  both (natural log; times 1200 / ln 2 = 1731 gives cents); NaN when no frame is.
* V/UV error: the fraction of path frames voiced in one utterance and not the other.
"""

import dataclasses
import functools

import numpy as np
import pyworld

from tensorflow_tts.audio.f0 import extract_f0
from tensorflow_tts.metrics.signals import dtw_path

FRAME_PERIOD_SECONDS = 0.005
MCEP_ORDER = 24
# Envelopes are floored at that of 16-bit quantization noise (variance 2^-30 / 12; CheapTrick's
# envelope of white noise is about its variance) before the log: below what a 16-bit
# recording can hold, digital silence or an empty band would otherwise weigh by how empty
# it is, and dominate the distance.
MIN_ENVELOPE = 2.0**-30 / 12
MCD_SCALE = 10.0 / np.log(10.0) * np.sqrt(2.0)


@functools.lru_cache(maxsize=16)
def all_pass_alpha(sampling_rate, points=1000):
    """The all-pass constant whose frequency warping is closest (RMS) to the mel scale.

    Both curves are normalised to [0, 1] over [0, sampling_rate / 2]; alpha is searched
    in steps of 0.001.
    """
    hertz = np.arange(points) * (sampling_rate / 2.0) / points
    mel = np.log1p(hertz / 1000.0)
    mel /= mel[-1]
    omega = np.arange(points) * np.pi / points
    best, best_distance = 0.0, np.inf
    for alpha in np.arange(0.0, 1.0, 0.001):
        warped = warp_frequency(omega, alpha)
        distance = np.sqrt(np.mean((warped / warped[-1] - mel) ** 2))
        if distance < best_distance:
            best, best_distance = float(alpha), distance
    return round(best, 3)


def warp_frequency(omega, alpha):
    """Phase response of the first-order all-pass `(z^-1 - alpha) / (1 - alpha z^-1)`: `w -> w~` on [0, pi]."""
    return omega + 2.0 * np.arctan2(alpha * np.sin(omega), 1.0 - alpha * np.cos(omega))


def mel_cepstrum(envelope, order, alpha):
    """Mel-cepstra of power spectral envelopes (module docstring for the definition).

    Args:
        envelope: float `[frames, fft_size // 2 + 1]`, power (WORLD's CheapTrick output).
        order: highest coefficient; `order + 1` are returned (c0 included).
        alpha: all-pass constant (`all_pass_alpha(sampling_rate)`).

    Returns:
        float64 `[frames, order + 1]`.
    """
    envelope = np.atleast_2d(np.asarray(envelope, dtype=np.float64))
    bins = envelope.shape[1]
    log_amplitude = 0.5 * np.log(np.maximum(envelope, MIN_ENVELOPE))
    # Linear frequency of each point of a uniform grid on the warped axis (the inverse
    # warping is the warping with -alpha).
    warped_grid = np.linspace(0.0, np.pi, bins)
    linear = warp_frequency(warped_grid, -alpha) * (bins - 1) / np.pi
    left = np.clip(np.floor(linear).astype(int), 0, bins - 2)
    fraction = linear - left
    on_warped_axis = log_amplitude[:, left] * (1.0 - fraction) + log_amplitude[:, left + 1] * fraction
    symmetric = np.fft.irfft(on_warped_axis, axis=1)[:, : order + 1]
    symmetric[:, 1:] *= 2.0  # the one-sided (minimum-phase) cepstrum
    return symmetric


@dataclasses.dataclass
class WorldFrames:
    """WORLD analysis of one waveform every `FRAME_PERIOD_SECONDS`."""

    mcep: np.ndarray  # float64 [frames, order + 1]
    f0: np.ndarray  # float32 [frames], Hz, 0 where unvoiced


def world_frames(audio, sampling_rate, order=MCEP_ORDER, alpha=None, max_frequency=None):
    """F0 and mel-cepstra of a waveform (float `[samples]`); `alpha` defaults to `all_pass_alpha(sampling_rate)`.

    With `max_frequency` (Hz), the envelope above it is set to the floor before the
    cepstrum, so two waveforms analysed alike differ only below it (module docstring).
    """
    hop_size = int(round(FRAME_PERIOD_SECONDS * sampling_rate))
    signal = np.ascontiguousarray(audio, dtype=np.float64)
    frames = len(signal) // hop_size + 1
    f0 = extract_f0(signal, sampling_rate, hop_size, frames)
    times = np.arange(frames) * hop_size / sampling_rate
    envelope = pyworld.cheaptrick(signal, f0.astype(np.float64), times, sampling_rate)
    if max_frequency is not None:
        bins = envelope.shape[1]
        envelope[:, np.arange(bins) * (sampling_rate / 2) / (bins - 1) > max_frequency] = MIN_ENVELOPE
    alpha = all_pass_alpha(sampling_rate) if alpha is None else alpha
    return WorldFrames(mcep=mel_cepstrum(envelope, order, alpha), f0=f0)


@dataclasses.dataclass
class CepstralScores:
    """One utterance's scores on the DTW path (module docstring for the definitions)."""

    mcd: float  # dB
    log_f0_rmse: float  # natural log of Hz; NaN when no path frame is voiced in both
    vuv_error: float  # fraction of path frames
    frames: int  # path length


def cepstral_scores(reference, synthesized, sampling_rate, order=MCEP_ORDER, alpha=None, max_frequency=None):
    """MCD, log-F0 RMSE and V/UV error of two waveforms of any lengths at `sampling_rate`.

    Args:
        reference, synthesized: float `[samples]` (the lengths may differ; DTW aligns them).
        max_frequency: Hz; the MCD then measures the band below it only (None: the whole band).

    Returns:
        CepstralScores.
    """
    ref = world_frames(reference, sampling_rate, order, alpha, max_frequency)
    syn = world_frames(synthesized, sampling_rate, order, alpha, max_frequency)
    path = dtw_path(np.sqrt(((ref.mcep[:, None, 1:] - syn.mcep[None, :, 1:]) ** 2).sum(axis=-1)))
    ref_mcep, syn_mcep = ref.mcep[path[:, 0], 1:], syn.mcep[path[:, 1], 1:]
    mcd = MCD_SCALE * np.sqrt(((ref_mcep - syn_mcep) ** 2).sum(axis=1)).mean()
    ref_f0, syn_f0 = ref.f0[path[:, 0]].astype(np.float64), syn.f0[path[:, 1]].astype(np.float64)
    ref_voiced, syn_voiced = ref_f0 > 0, syn_f0 > 0
    both = ref_voiced & syn_voiced
    log_f0_rmse = np.sqrt(np.mean((np.log(ref_f0[both]) - np.log(syn_f0[both])) ** 2)) if both.any() else np.nan
    return CepstralScores(
        mcd=float(mcd),
        log_f0_rmse=float(log_f0_rmse),
        vuv_error=float(np.mean(ref_voiced != syn_voiced)),
        frames=len(path),
    )
