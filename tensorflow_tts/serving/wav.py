"""Audio on the wire: float samples -> 16-bit PCM, and the RIFF/WAVE header in front of it."""

import struct

import numpy as np

# A streamed wav does not know its length when the header leaves: the sizes are set to the
# largest value, which browsers and players read as "until the stream ends".
UNKNOWN_SIZE = 0xFFFFFFFF


def pcm16(audio):
    """float audio (N,) in [-1, 1] -> little-endian int16 bytes (clipped)."""
    samples = np.clip(np.asarray(audio, np.float32).reshape(-1), -1.0, 1.0)
    return (np.round(samples * 32767.0)).astype("<i2").tobytes()


def wav_header(sampling_rate, num_samples=None):
    """The 44-byte header of a mono 16-bit PCM wav of num_samples samples (None: streamed)."""
    data_size = UNKNOWN_SIZE if num_samples is None else 2 * int(num_samples)
    riff_size = UNKNOWN_SIZE if num_samples is None else 36 + data_size
    return (b"RIFF" + struct.pack("<I", riff_size) + b"WAVE"
            + b"fmt " + struct.pack("<IHHIIHH", 16, 1, 1, sampling_rate, sampling_rate * 2, 2, 16)
            + b"data" + struct.pack("<I", data_size))


def wav(audio, sampling_rate):
    """float audio (N,) -> the bytes of a complete wav file."""
    return wav_header(sampling_rate, np.asarray(audio).size) + pcm16(audio)
