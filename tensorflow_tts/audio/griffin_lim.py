"""Griffin-Lim in TensorFlow: a waveform from a log10 mel spectrogram of the dump
(and the differentiable TF form of the feature mel that vocoder mel losses use).

It inverts the one mel definition (`audio.mel`, `audio.stft`): the same librosa filterbank,
window, centred reflect-padded framing and `frames * hop_size` output length, so the
mel of its output is comparable frame by frame with the dump's.
"""

import numpy as np
import scipy.signal
import tensorflow as tf

from tensorflow_tts.audio.mel import MIN_MAGNITUDE, mel_filterbank


def _window(window, win_length, fft_size):
    """The analysis window as librosa builds it: periodic, zero-padded to `fft_size`, centred."""
    values = scipy.signal.get_window(window, win_length, fftbins=True).astype(np.float32)
    left = (fft_size - win_length) // 2
    return np.pad(values, (left, fft_size - win_length - left))


def denormalize_mel(mels, stats):
    """``mels * std + mean`` per bin; the inverse of `utils.dump.normalize_mel` (stats ``[2, num_mels]``)."""
    stats = np.asarray(stats, dtype=np.float32)
    return mels * stats[1] + stats[0]


class TFMelSpectrogram:
    """The feature STFT and log10 mel (`audio.stft`, `audio.mel`) in TensorFlow, differentiable.

    Args:
        config: a PreprocessConfig, or any object/dict with sampling_rate, fft_size, hop_size,
            num_mels, and optionally win_length, window, fmin, fmax.
    """

    def __init__(self, config):
        get = config.get if isinstance(config, dict) else lambda key, default=None: getattr(config, key, default)
        self.sampling_rate = int(get("sampling_rate"))
        self.fft_size = int(get("fft_size"))
        self.hop_size = int(get("hop_size"))
        self.win_length = int(get("win_length") or self.fft_size)
        self.num_mels = int(get("num_mels"))
        filterbank = mel_filterbank(self.sampling_rate, self.fft_size, self.num_mels, get("fmin"), get("fmax"))
        self.filterbank = tf.constant(filterbank)  # [num_mels, bins]
        self.inverse_filterbank = tf.constant(np.linalg.pinv(filterbank).astype(np.float32))  # [bins, num_mels]
        self.window = tf.constant(_window(get("window") or "hann", self.win_length, self.fft_size))

    def stft(self, audio):
        """Args: audio ``(B, T * hop)``. Returns complex ``(B, T, fft_size // 2 + 1)`` (framing of `audio.stft`)."""
        frames = tf.shape(audio)[1] // self.hop_size
        half = self.fft_size // 2
        padded = tf.pad(audio, [[0, 0], [half, half]], mode="REFLECT")
        framed = tf.signal.frame(padded, self.fft_size, self.hop_size)[:, :frames]
        return tf.signal.rfft(framed * self.window)

    def istft(self, spectrum, num_samples):
        """Least-squares inverse of `stft`. Args: ``(B, T, bins)``. Returns ``(B, num_samples)``."""
        frames = tf.signal.irfft(spectrum, fft_length=[self.fft_size]) * self.window
        signal = tf.signal.overlap_and_add(frames, self.hop_size)
        window_sum = tf.signal.overlap_and_add(
            tf.tile(tf.square(self.window)[tf.newaxis], [tf.shape(spectrum)[1], 1]), self.hop_size
        )
        signal = signal / tf.where(window_sum > 1e-8, window_sum, 1.0)
        half = self.fft_size // 2
        signal = signal[:, half : half + num_samples]
        # The last hop is covered by fewer frames than the rest; pad if frames fall short.
        return tf.pad(signal, [[0, 0], [0, num_samples - tf.shape(signal)[1]]])

    def log_mel(self, audio, floor=MIN_MAGNITUDE):
        """Args: audio ``(B, T * hop)``. Returns log10 mel ``(B, T, num_mels)``, magnitudes floored at `floor`."""
        magnitude = tf.abs(self.stft(audio))
        mel = tf.einsum("btf,mf->btm", magnitude, self.filterbank)
        return tf.math.log(tf.maximum(mel, floor)) / np.log(10.0)


class TFGriffinLim(TFMelSpectrogram):
    """Mel spectrogram -> waveform by (fast) Griffin-Lim.

    The linear magnitude is the least-squares inverse of the mel filterbank (pseudo-inverse,
    clipped at 0); phases are then refined for `n_iter` iterations with momentum
    (Perraudin et al., 2013, as librosa's `griffinlim`; `momentum=0` is plain Griffin-Lim).

    Args:
        config: as TFMelSpectrogram.
        stats: `stats.npy` (path or ``[2, num_mels]`` array) when the mels given are
            normalised; None for raw log10 mels.
        momentum: 0.99 as librosa; 0 for the classic algorithm.
    """

    def __init__(self, config, stats=None, momentum=0.99):
        super().__init__(config)
        self.momentum = float(momentum)
        if isinstance(stats, (str, bytes)) or hasattr(stats, "__fspath__"):
            stats = np.load(stats)
        self.stats = None if stats is None else np.asarray(stats, dtype=np.float32)

    # -------------------------------------------------------------------- mel -> audio

    def mel_to_magnitude(self, mels):
        """Args: log10 mels ``(B, T, num_mels)`` (normalised if `stats` was given). Returns ``(B, T, bins)``."""
        mels = tf.convert_to_tensor(mels, tf.float32)
        if self.stats is not None:
            mels = mels * self.stats[1] + self.stats[0]
        mel_power = tf.pow(10.0, mels)
        return tf.nn.relu(tf.einsum("btm,fm->btf", mel_power, self.inverse_filterbank))

    def __call__(self, mels, n_iter=32, return_convergence=False):
        """Args: mels ``(B, T, num_mels)`` or ``(T, num_mels)``.

        Returns:
            float32 audio ``(B, T * hop_size)`` (``(T * hop_size,)`` for a single mel); with
            `return_convergence` also the spectral convergence ``||S - |X|||_F / ||S||_F``
            between the target magnitude and the output's, ``(n_iter, B)``, one row per iteration.
        """
        mels = tf.convert_to_tensor(mels, tf.float32)
        single = mels.shape.rank == 2
        if single:
            mels = mels[tf.newaxis]
        audio, convergence = self._run(mels, tf.constant(int(n_iter)))
        if single:
            audio, convergence = audio[0], convergence[:, 0]
        return (audio, convergence) if return_convergence else audio

    @tf.function(reduce_retracing=True)
    def _run(self, mels, n_iter):
        magnitude = self.mel_to_magnitude(mels)
        num_samples = tf.shape(mels)[1] * self.hop_size
        target = tf.complex(magnitude, 0.0)
        phase_seed = tf.random.stateless_uniform(tf.shape(magnitude), seed=[0, 42], minval=0.0, maxval=2 * np.pi)
        angles = tf.exp(tf.complex(0.0, phase_seed))
        rebuilt = tf.zeros_like(angles)
        target_norm = tf.norm(magnitude, axis=[1, 2])
        convergence = tf.TensorArray(tf.float32, size=n_iter)
        for i in tf.range(n_iter):
            tprev = rebuilt
            rebuilt = self.stft(self.istft(target * angles, num_samples))
            rebuilt.set_shape(magnitude.shape)  # the frame slice hides the static shape from the loop
            convergence = convergence.write(i, tf.norm(magnitude - tf.abs(rebuilt), axis=[1, 2]) / target_norm)
            angles = rebuilt - tf.cast(self.momentum / (1.0 + self.momentum), tf.complex64) * tprev
            angles = angles / tf.cast(tf.maximum(tf.abs(angles), 1e-16), tf.complex64)
        audio = self.istft(target * angles, num_samples)
        return audio, convergence.stack()

    def save_wav(self, audio, path):
        """Write float audio ``(T,)`` as 16-bit PCM at the config's sampling rate."""
        import soundfile as sf

        sf.write(path, np.asarray(audio, dtype=np.float32), self.sampling_rate, subtype="PCM_16")
