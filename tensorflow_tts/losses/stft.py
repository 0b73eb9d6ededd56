"""Multi-resolution STFT loss (Yamamoto et al., 2020): spectral convergence plus log
STFT-magnitude distance, averaged over several (fft, hop, window) resolutions."""

import tensorflow as tf

# Magnitudes are floored at sqrt(1e-7) before division and log; as in TensorFlowTTS 1.8.
MAGNITUDE_EPSILON = 1e-7
MAGNITUDE_MAX = 1e3


def stft_magnitude(signal, fft_length, frame_step, frame_length):
    """``|STFT|`` with a periodic Hann window, no centring, floored for the log.

    Args:
        signal: ``(B, T)``.
    Returns:
        ``(B, frames, fft_length // 2 + 1)`` with ``frames = 1 + (T - frame_length) // frame_step``.
    """
    magnitude = tf.abs(
        tf.signal.stft(signal, frame_length=frame_length, frame_step=frame_step, fft_length=fft_length)
    )
    return tf.clip_by_value(tf.sqrt(tf.square(magnitude) + MAGNITUDE_EPSILON), MAGNITUDE_EPSILON, MAGNITUDE_MAX)


class TFSpectralConvergence(tf.keras.layers.Layer):
    """``||Y - X||_F / ||Y||_F`` per example."""

    def call(self, y_mag, x_mag):
        """Args: y_mag (target), x_mag (prediction) ``(B, frames, bins)``. Returns ``(B,)``."""
        return tf.norm(y_mag - x_mag, ord="fro", axis=(-2, -1)) / tf.norm(y_mag, ord="fro", axis=(-2, -1))


class TFLogSTFTMagnitude(tf.keras.layers.Layer):
    """Mean ``|log Y - log X|`` per example."""

    def call(self, y_mag, x_mag):
        """Args: y_mag (target), x_mag (prediction) ``(B, frames, bins)``. Returns ``(B,)``."""
        return tf.reduce_mean(tf.abs(tf.math.log(y_mag) - tf.math.log(x_mag)), axis=[-2, -1])


class TFSTFT(tf.keras.layers.Layer):
    """Spectral-convergence and log-magnitude losses at one STFT resolution."""

    def __init__(self, frame_length=600, frame_step=120, fft_length=1024, **kwargs):
        super().__init__(**kwargs)
        self.frame_length = frame_length
        self.frame_step = frame_step
        self.fft_length = fft_length
        self.spectral_convergence = TFSpectralConvergence()
        self.log_stft_magnitude = TFLogSTFTMagnitude()

    def call(self, y, x):
        """Args: y (target), x (prediction) ``(B, T)``. Returns (sc_loss ``(B,)``, mag_loss ``(B,)``)."""
        y_mag = stft_magnitude(y, self.fft_length, self.frame_step, self.frame_length)
        x_mag = stft_magnitude(x, self.fft_length, self.frame_step, self.frame_length)
        return self.spectral_convergence(y_mag, x_mag), self.log_stft_magnitude(y_mag, x_mag)

    def get_config(self):
        return {
            **super().get_config(),
            "frame_length": self.frame_length,
            "frame_step": self.frame_step,
            "fft_length": self.fft_length,
        }


class TFMultiResolutionSTFT(tf.keras.layers.Layer):
    """Mean of TFSTFT over resolutions; defaults are the MelGAN / MB-MelGAN v1 full-band ones.

    Audio must be at least ``max(frame_lengths)`` samples long.
    """

    def __init__(
        self,
        fft_lengths=(1024, 2048, 512),
        frame_lengths=(600, 1200, 240),
        frame_steps=(120, 240, 50),
        **kwargs,
    ):
        super().__init__(**kwargs)
        if not len(fft_lengths) == len(frame_lengths) == len(frame_steps):
            raise ValueError(
                f"fft_lengths ({len(fft_lengths)}), frame_lengths ({len(frame_lengths)}) and "
                f"frame_steps ({len(frame_steps)}) must have the same length"
            )
        self.fft_lengths = list(fft_lengths)
        self.frame_lengths = list(frame_lengths)
        self.frame_steps = list(frame_steps)
        self.stft_losses = [
            TFSTFT(frame_length, frame_step, fft_length, name=f"stft_loss_._{i}")
            for i, (fft_length, frame_length, frame_step) in enumerate(
                zip(self.fft_lengths, self.frame_lengths, self.frame_steps)
            )
        ]

    def call(self, y, x):
        """Args: y (target), x (prediction) ``(B, T)`` (or ``(B, T, 1)``).

        Returns:
            (sc_loss ``(B,)``, mag_loss ``(B,)``): per-example losses, mean over resolutions.
        """
        if y.shape.rank == 3:
            y, x = tf.squeeze(y, -1), tf.squeeze(x, -1)
        sc_total, mag_total = 0.0, 0.0
        for stft_loss in self.stft_losses:
            sc_loss, mag_loss = stft_loss(y, x)
            sc_total += sc_loss
            mag_total += mag_loss
        count = float(len(self.stft_losses))
        return sc_total / count, mag_total / count

    def get_config(self):
        return {
            **super().get_config(),
            "fft_lengths": self.fft_lengths,
            "frame_lengths": self.frame_lengths,
            "frame_steps": self.frame_steps,
        }
