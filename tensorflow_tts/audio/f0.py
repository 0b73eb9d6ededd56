"""Fundamental frequency (F0) with WORLD's DIO tracker refined by StoneMask."""

import numpy as np
import pyworld


def extract_f0(audio, sampling_rate, hop_size, frames, f0_floor=71.0, f0_ceil=800.0):
    """F0 in Hz every `hop_size` samples, 0 where unvoiced.

    WORLD's frame `t` is at time `t * hop_size / sampling_rate`, the centre of STFT frame
    `t`, so the two line up; the tracker's extra trailing frame is dropped (or zeros are
    appended) to give exactly `frames` values.

    Args:
        audio: float `[samples]`.

    Returns:
        float32 `[frames]`.
    """
    signal = np.ascontiguousarray(audio, dtype=np.float64)
    frame_period_ms = 1000.0 * hop_size / sampling_rate
    coarse_f0, times = pyworld.dio(
        signal, sampling_rate, f0_floor=f0_floor, f0_ceil=f0_ceil, frame_period=frame_period_ms
    )
    f0 = pyworld.stonemask(signal, coarse_f0, times, sampling_rate)
    f0 = f0[:frames]
    if len(f0) < frames:
        f0 = np.pad(f0, (0, frames - len(f0)))
    return f0.astype(np.float32)
