"""PESQ (wide-band) and STOI of copy-synthesis: waveforms that run sample for sample
alongside their recording (vocoder or Griffin-Lim output from the recording's own mel).

PESQ (ITU-T P.862.2, the `pesq` package) works at 16 kHz: other rates are resampled first
(soxr, as `tensorflow_tts.audio.load_audio` does). Its wide-band MOS-LQO runs from about
1.04 to 4.64 (identical signals). STOI (Taal et al. 2011, the `pystoi` package) resamples
to 10 kHz itself and runs from 0 to 1.
"""

import warnings

import librosa
import numpy as np
from pesq import pesq
from pystoi import stoi as pystoi_stoi

from tensorflow_tts.audio.load import RESAMPLE_TYPE
from tensorflow_tts.metrics.signals import MetricError, same_length

PESQ_RATE = 16000
PESQ_WB_MAX = 4.644


def pesq_wb(reference, synthesized, sampling_rate):
    """Wide-band PESQ (MOS-LQO) of two float `[samples]` waveforms of (nearly) the same length."""
    reference, synthesized = same_length(reference, synthesized)
    if sampling_rate != PESQ_RATE:
        reference, synthesized = (
            librosa.resample(signal, orig_sr=sampling_rate, target_sr=PESQ_RATE, res_type=RESAMPLE_TYPE)
            for signal in (reference, synthesized)
        )
    try:
        return float(pesq(PESQ_RATE, reference, synthesized, "wb"))
    except Exception as error:  # the pesq package raises its own types and bare ValueErrors
        raise MetricError(f"PESQ failed: {error or type(error).__name__}") from None


def stoi(reference, synthesized, sampling_rate):
    """STOI (0-1) of two float `[samples]` waveforms of (nearly) the same length."""
    reference, synthesized = same_length(reference, synthesized)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = float(pystoi_stoi(reference, synthesized, sampling_rate, extended=False))
    except Exception as error:  # the pystoi package raises bare numpy errors on odd input
        raise MetricError(f"STOI failed: {error or type(error).__name__}") from None
    # pystoi warns and returns 1e-5 when too little speech is left after it drops silent frames.
    if any("Not enough STFT frames" in str(warning.message) for warning in caught):
        raise MetricError("STOI: too little speech left after removing silent frames (it needs about 0.4 s)")
    return value
