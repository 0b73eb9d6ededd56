"""PreprocessConfig: the audio feature settings read from `preprocess/<corpus>_preprocess.yaml`."""

import dataclasses
import numbers
import typing

from tensorflow_tts.configs.base_config import BaseConfig

SUPPORTED_FORMATS = ("npy",)


def _is_int(value):
    # YAML `true` is a bool, and bool is an int subclass; a size of `true` is a typo.
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


@dataclasses.dataclass
class PreprocessConfig(BaseConfig):
    """How waveforms become the features stored in the dump.

    The keys are those of TensorFlowTTS' `preprocess/*_preprocess.yaml`, plus duration
    limits. Every value is checked on construction; errors name the offending key.
    """

    # Rate every waveform is resampled to, in Hz.
    sampling_rate: int = 22050
    # FFT size of the STFT, in samples.
    fft_size: int = 1024
    # Samples between STFT frames; also the number of waveform samples per feature frame.
    hop_size: int = 256
    # Window length in samples; null means fft_size.
    win_length: typing.Optional[int] = None
    # Window function, any name scipy.signal.get_window accepts ("hann", "hamming", ...).
    window: str = "hann"
    # Number of mel bands.
    num_mels: int = 80
    # Lowest and highest frequency of the mel filterbank in Hz; null means 0 and sampling_rate / 2.
    fmin: typing.Optional[float] = 80.0
    fmax: typing.Optional[float] = 7600.0
    # Every waveform is multiplied by this before features are computed.
    global_gain_scale: float = 1.0
    # Cut leading and trailing silence quieter than trim_threshold_in_db below the peak.
    trim_silence: bool = True
    trim_threshold_in_db: float = 60.0
    trim_frame_size: int = 2048
    trim_hop_size: int = 512
    # Feature file format; only "npy" is supported.
    format: str = "npy"
    # Utterances outside these limits (after trimming) are skipped; null means no upper limit.
    min_duration_seconds: float = 0.0
    max_duration_seconds: typing.Optional[float] = None
    # Search range of the F0 tracker (pyworld dio) in Hz.
    f0_floor: float = 71.0
    f0_ceil: float = 800.0
    # Worker processes of tensorflow-tts-preprocess when --n_cpus is not given; null = all cores.
    num_workers: typing.Optional[int] = None

    def __post_init__(self):
        if self.num_workers is not None:
            self._require_positive_int("num_workers")
        for key in ("sampling_rate", "fft_size", "hop_size", "num_mels", "trim_frame_size", "trim_hop_size"):
            self._require_positive_int(key)
        if self.win_length is not None:
            self._require_positive_int("win_length")
            if self.win_length > self.fft_size:
                raise ValueError(f"win_length: {self.win_length} is larger than fft_size ({self.fft_size})")
        if self.hop_size > self.window_length:
            raise ValueError(
                f"hop_size: {self.hop_size} is larger than the window ({self.window_length} samples), "
                "so some samples would never be analysed"
            )
        if not isinstance(self.window, str):
            raise ValueError(f"window: expected a window name such as 'hann', got {self.window!r}")
        import scipy.signal  # only here: it takes seconds to import, and every config module imports this one

        try:
            scipy.signal.get_window(self.window, 16)
        except ValueError as error:
            raise ValueError(f"window: {self.window!r} is not a known window function ({error})") from None

        nyquist = self.sampling_rate / 2
        for key in ("fmin", "fmax"):
            value = getattr(self, key)
            if value is not None and (not _is_number(value) or value < 0):
                raise ValueError(f"{key}: expected a frequency in Hz >= 0 or null, got {value!r}")
        if self.mel_fmax > nyquist:
            raise ValueError(
                f"fmax: {self.fmax} Hz is above the Nyquist frequency (sampling_rate / 2 = {nyquist:g} Hz)"
            )
        if self.mel_fmin >= self.mel_fmax:
            raise ValueError(f"fmin: {self.mel_fmin} Hz must be below fmax ({self.mel_fmax} Hz)")

        for key in ("global_gain_scale", "trim_threshold_in_db", "f0_floor", "f0_ceil"):
            value = getattr(self, key)
            if not _is_number(value) or value <= 0:
                raise ValueError(f"{key}: expected a number > 0, got {value!r}")
        if self.f0_floor >= self.f0_ceil:
            raise ValueError(f"f0_floor: {self.f0_floor} Hz must be below f0_ceil ({self.f0_ceil} Hz)")
        if not isinstance(self.trim_silence, bool):
            raise ValueError(f"trim_silence: expected true or false, got {self.trim_silence!r}")
        if self.format not in SUPPORTED_FORMATS:
            raise ValueError(f"format: {self.format!r} is not supported; use one of {', '.join(SUPPORTED_FORMATS)}")

        if not _is_number(self.min_duration_seconds) or self.min_duration_seconds < 0:
            raise ValueError(f"min_duration_seconds: expected a number >= 0, got {self.min_duration_seconds!r}")
        if self.max_duration_seconds is not None:
            if not _is_number(self.max_duration_seconds) or self.max_duration_seconds <= 0:
                raise ValueError(
                    f"max_duration_seconds: expected a number > 0 or null, got {self.max_duration_seconds!r}"
                )
            if self.max_duration_seconds <= self.min_duration_seconds:
                raise ValueError(
                    f"max_duration_seconds: {self.max_duration_seconds} must be above "
                    f"min_duration_seconds ({self.min_duration_seconds})"
                )

    def _require_positive_int(self, key):
        value = getattr(self, key)
        if not _is_int(value) or value <= 0:
            raise ValueError(f"{key}: expected a whole number > 0, got {value!r}")

    @property
    def window_length(self):
        """Window length in samples, with `win_length: null` resolved to fft_size."""
        return self.fft_size if self.win_length is None else self.win_length

    @property
    def mel_fmin(self):
        """Lowest mel filterbank frequency in Hz, with null resolved to 0."""
        return 0.0 if self.fmin is None else float(self.fmin)

    @property
    def mel_fmax(self):
        """Highest mel filterbank frequency in Hz, with null resolved to sampling_rate / 2."""
        return self.sampling_rate / 2 if self.fmax is None else float(self.fmax)
