"""Frame energy: the L2 norm over frequency of each STFT magnitude frame."""

import numpy as np


def frame_energy(magnitude):
    """Energy of each frame.

    Args:
        magnitude: float `[frames, fft_size // 2 + 1]` from `tensorflow_tts.audio.stft`.

    Returns:
        float32 `[frames]`.
    """
    return np.sqrt(np.sum(np.square(magnitude, dtype=np.float64), axis=1)).astype(np.float32)
