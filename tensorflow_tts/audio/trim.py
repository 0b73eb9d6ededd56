"""Silence: detecting silent recordings and cutting leading and trailing silence."""

import librosa
import numpy as np

# A recording whose loudest sample stays below this level (dB full scale) carries nothing
# to learn from: digital silence, or a muted input.
SILENCE_PEAK_DBFS = -80.0


def is_silent(audio, peak_dbfs=SILENCE_PEAK_DBFS):
    """True when no sample of `audio` (float `[samples]`) reaches `peak_dbfs`."""
    if audio.size == 0:
        return True
    return float(np.max(np.abs(audio))) < 10.0 ** (peak_dbfs / 20.0)


def silence_bounds(audio, threshold_in_db, frame_size, hop_size):
    """Where the sound is: `(start, end)` sample indices of the span `trim_silence` keeps.

    Loudness is the RMS of `frame_size`-sample frames every `hop_size` samples (librosa's
    definition), so up to about one frame of silence is kept on each side.

    Args:
        audio: float32 `[samples]`.
    """
    _, (start, end) = librosa.effects.trim(audio, top_db=threshold_in_db, frame_length=frame_size, hop_length=hop_size)
    return int(start), int(end)


def trim_silence(audio, threshold_in_db, frame_size, hop_size):
    """Cut the leading and trailing parts quieter than `threshold_in_db` below the peak
    (see `silence_bounds`).

    Args:
        audio: float32 `[samples]`.

    Returns:
        float32 `[kept_samples]`, a contiguous slice of `audio`.
    """
    start, end = silence_bounds(audio, threshold_in_db, frame_size, hop_size)
    return np.ascontiguousarray(audio[start:end])
