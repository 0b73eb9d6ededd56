"""Reading audio files into mono float32 waveforms at the rate the features need."""

from pathlib import Path

import librosa
import numpy as np
import soundfile as sf

# Integer PCM of these widths is read into float32 without losing anything worth reporting;
# every other sample format is listed as a conversion.
NATIVE_SUBTYPES = ("PCM_16", "PCM_24", "PCM_32")

# Leading bytes of the containers soundfile reads; a file that starts like one of these but
# cannot be opened has a damaged header rather than being some other kind of file.
_CONTAINER_MAGIC = {
    b"RIFF": "WAV",
    b"RIFX": "WAV",
    b"RF64": "WAV",
    b"fLaC": "FLAC",
    b"OggS": "Ogg",
    b"FORM": "AIFF",
}

RESAMPLE_TYPE = "soxr_hq"


class AudioError(Exception):
    """An audio file that cannot be used; `reason` says why in a few words."""

    def __init__(self, path, reason):
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason


def _unreadable_reason(path, error):
    try:
        with open(path, "rb") as stream:
            head = stream.read(4)
    except OSError:
        head = b""
    detail = str(error).split(": ", 1)[-1].strip() or type(error).__name__
    container = _CONTAINER_MAGIC.get(head)
    if container is not None:
        return f"truncated or corrupt {container} header ({detail})"
    return f"not a readable audio file ({detail})"


def load_audio(path, sampling_rate):
    """Read any format soundfile knows as a mono float32 waveform at `sampling_rate`.

    Several channels are averaged, other rates are resampled (soxr), and every sample
    format becomes float32 in [-1, 1] (float files keep their values as stored).

    Args:
        path: the audio file.
        sampling_rate: rate of the returned waveform in Hz.

    Returns:
        `(audio, conversions)`: float32 `[samples]`, and a list of one-line strings naming
        what was changed to get there (empty for mono 16/24/32-bit PCM at the right rate).

    Raises:
        AudioError: the file is missing, empty, damaged, not audio, or holds no samples.
    """
    path = Path(path)
    if not path.exists():
        raise AudioError(path, "file not found")
    if not path.is_file():
        raise AudioError(path, "not a regular file")
    if path.stat().st_size == 0:
        raise AudioError(path, "empty file (0 bytes)")
    try:
        with sf.SoundFile(str(path)) as stream:
            subtype, channels, rate = stream.subtype, stream.channels, stream.samplerate
            data = stream.read(dtype="float32", always_2d=True)
    except PermissionError:
        raise AudioError(path, "permission denied") from None
    except (sf.SoundFileError, RuntimeError, ValueError, TypeError) as error:
        raise AudioError(path, _unreadable_reason(path, error)) from None
    if data.shape[0] == 0:
        raise AudioError(path, "zero-length audio (the file holds no samples)")
    if not np.all(np.isfinite(data)):
        raise AudioError(path, "contains NaN or infinite samples")

    conversions = []
    if subtype not in NATIVE_SUBTYPES:
        conversions.append(f"sample format {subtype} converted to float32")
    if channels > 1:
        conversions.append(f"{channels} channels mixed down to mono")
        audio = data.mean(axis=1)
    else:
        audio = data[:, 0]
    if rate != sampling_rate:
        conversions.append(f"resampled from {rate} Hz to {sampling_rate} Hz")
        audio = librosa.resample(audio, orig_sr=rate, target_sr=sampling_rate, res_type=RESAMPLE_TYPE)
    return np.ascontiguousarray(audio, dtype=np.float32), conversions
