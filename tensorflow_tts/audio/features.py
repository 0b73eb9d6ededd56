"""One utterance from audio file to aligned features, as the dump stores them.

Everything that decides what the model sees (loading, gain, trimming, duration limits,
padding to whole frames, mel, F0, energy) happens here, driven by a PreprocessConfig.
"""

import dataclasses

import numpy as np

from tensorflow_tts.audio.energy import frame_energy
from tensorflow_tts.audio.f0 import extract_f0
from tensorflow_tts.audio.load import AudioError, load_audio
from tensorflow_tts.audio.mel import magnitude_to_log_mel, mel_filterbank
from tensorflow_tts.audio.stft import magnitude_stft
from tensorflow_tts.audio.trim import SILENCE_PEAK_DBFS, is_silent, trim_silence


@dataclasses.dataclass
class UtteranceFeatures:
    """Features of one utterance; all share `num_frames`, and `len(audio) == num_frames * hop_size`."""

    audio: np.ndarray  # float32 [frames * hop_size]
    mel: np.ndarray  # float32 [frames, num_mels], log10
    f0: np.ndarray  # float32 [frames], Hz, 0 where unvoiced
    energy: np.ndarray  # float32 [frames]

    @property
    def num_frames(self):
        return len(self.mel)


def pad_to_whole_frames(audio, hop_size):
    """Append zeros so the length is a multiple of `hop_size` (no-op when it already is)."""
    remainder = len(audio) % hop_size
    if remainder == 0:
        return audio
    return np.pad(audio, (0, hop_size - remainder))


def mel_filterbank_for(config):
    """The mel filterbank `config` describes, float32 `[num_mels, fft_size // 2 + 1]`."""
    return mel_filterbank(config.sampling_rate, config.fft_size, config.num_mels, config.mel_fmin, config.mel_fmax)


def extract_features(audio, config):
    """Mel, F0 and energy of a waveform, on one time axis.

    The waveform is zero-padded to whole hops first, so it has `ceil(len / hop_size)`
    frames and is returned exactly as analysed.

    Args:
        audio: float32 `[samples]` at `config.sampling_rate`, at least `config.fft_size` long.
        config: a PreprocessConfig.

    Returns:
        UtteranceFeatures.
    """
    audio = pad_to_whole_frames(np.asarray(audio, dtype=np.float32), config.hop_size)
    magnitude = magnitude_stft(audio, config.fft_size, config.hop_size, config.window_length, config.window)
    frames = len(magnitude)
    return UtteranceFeatures(
        audio=audio,
        mel=magnitude_to_log_mel(magnitude, mel_filterbank_for(config)),
        f0=extract_f0(audio, config.sampling_rate, config.hop_size, frames, config.f0_floor, config.f0_ceil),
        energy=frame_energy(magnitude),
    )


def load_for_features(path, config):
    """Load, scale and trim one audio file and check it is usable.

    Returns:
        `(audio, conversions)`: float32 `[samples]` ready for `extract_features`, and the
        list of conversions `load_audio` made.

    Raises:
        AudioError: unreadable file, silent recording, or too short / too long after trimming.
    """
    audio, conversions = load_audio(path, config.sampling_rate)
    if is_silent(audio):
        raise AudioError(path, f"silent (no sample louder than {SILENCE_PEAK_DBFS:g} dBFS)")
    if config.trim_silence:
        audio = trim_silence(audio, config.trim_threshold_in_db, config.trim_frame_size, config.trim_hop_size)
    audio = audio * np.float32(config.global_gain_scale)

    seconds = len(audio) / config.sampling_rate
    after = " after trimming silence" if config.trim_silence else ""
    if len(audio) < config.fft_size:
        raise AudioError(
            path, f"too short: {len(audio)} samples{after}, less than one FFT window (fft_size={config.fft_size})"
        )
    if seconds < config.min_duration_seconds:
        raise AudioError(
            path, f"too short: {seconds:.2f} s{after}, below min_duration_seconds={config.min_duration_seconds:g}"
        )
    if config.max_duration_seconds is not None and seconds > config.max_duration_seconds:
        raise AudioError(
            path, f"too long: {seconds:.2f} s{after}, above max_duration_seconds={config.max_duration_seconds:g}"
        )
    return audio, conversions
