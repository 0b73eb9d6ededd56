"""What the metrics share: their error type, the same-length check and the DTW path."""

import librosa
import numpy as np

# Copy-synthesis outputs may differ from their recording by up to this many samples
# (e.g. a vocoder's last frame); longer differences are not copy-synthesis.
LENGTH_TOLERANCE = 1024


class MetricError(ValueError):
    """A metric that cannot be computed for one pair of waveforms; the message says why."""


def same_length(reference, synthesized, tolerance=LENGTH_TOLERANCE):
    """Both float `[samples]` waveforms cut to the shorter length, as float64.

    Raises:
        MetricError: they differ by more than `tolerance` samples.
    """
    if abs(len(reference) - len(synthesized)) > tolerance:
        raise MetricError(
            f"lengths differ by {abs(len(reference) - len(synthesized))} samples ({len(reference)} vs "
            f"{len(synthesized)}); this metric compares same-length copy-synthesis"
        )
    length = min(len(reference), len(synthesized))
    return np.asarray(reference[:length], dtype=np.float64), np.asarray(synthesized[:length], dtype=np.float64)


def dtw_path(cost):
    """The lowest-cost monotonic path through a cost matrix (librosa's DTW, steps (1,0), (0,1), (1,1)).

    Args:
        cost: float `[reference frames, synthesized frames]`.

    Returns:
        int `[steps, 2]`: (reference frame, synthesized frame) pairs from (0, 0) to the last frames.
    """
    _, path = librosa.sequence.dtw(C=cost, backtrack=True)
    return path[::-1]
