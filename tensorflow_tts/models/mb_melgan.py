"""Multi-band MelGAN generator: a MelGAN generator predicting PQMF subbands, merged into audio."""

import tensorflow as tf

from tensorflow_tts.configs.mb_melgan import MultiBandMelGANGeneratorConfig
from tensorflow_tts.layers.pqmf import TFPQMF
from tensorflow_tts.models.melgan import TFMelGANGenerator


class TFMBMelGANGenerator(TFMelGANGenerator):
    """Mels -> ``subbands`` bands at ``1 / subbands`` of the sample rate -> PQMF synthesis -> audio.

    ``hop_size`` = ``prod(upsample_scales) * subbands``.
    """

    config_class = MultiBandMelGANGeneratorConfig
    default_name = "multi_band_melgan_generator"

    def __init__(self, config=None, **kwargs):
        super().__init__(config, **kwargs)
        self.pqmf = TFPQMF(config=self.config, name="pqmf")

    def generate_subbands(self, mels, training=False):
        """Args: mels ``(B, T, num_mels)``. Returns subbands ``(B, T * prod(upsample_scales), subbands)``."""
        return self._generate(mels, training)

    def call(self, mels, training=False, return_subbands=False):
        """Args: mels ``(B, T, num_mels)``.

        Returns:
            audio ``(B, T * hop_size, 1)``; with ``return_subbands`` the pair (audio,
            subbands ``(B, T * prod(upsample_scales), subbands)``), which training needs.
        """
        subbands = self._generate(mels, training)
        audio = self.pqmf.synthesis(subbands)
        return (audio, subbands) if return_subbands else audio

    @tf.function(reduce_retracing=True, autograph=False)
    def inference(self, mels):
        """Args: mels ``(B, T, num_mels)``, any T. Returns audio ``(B, T * hop_size, 1)`` (PQMF synthesis)."""
        return self(mels, training=False)
