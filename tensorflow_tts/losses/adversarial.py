"""GAN losses for the vocoders: least-squares or hinge adversarial losses, and feature matching.

Discriminator outputs are nested as the discriminators return them: one list of feature
maps per sub-discriminator (scale or period), the last map being its score. A bare
tensor per sub-discriminator is read as a score without features.
"""

import tensorflow as tf


def _per_example_mean(x):
    """``(B, ...) -> (B,)``."""
    return tf.reduce_mean(tf.reshape(x, [tf.shape(x)[0], -1]), axis=1)


def _score(outputs):
    return outputs[-1] if isinstance(outputs, (list, tuple)) else outputs


class TFMelGANAdversarialLoss(tf.keras.layers.Layer):
    """Adversarial losses averaged over sub-discriminators.

    ``loss_type`` "mse" (LSGAN, as MelGAN / HiFi-GAN in TensorFlowTTS) or "hinge".
    """

    def __init__(self, loss_type="mse", **kwargs):
        super().__init__(**kwargs)
        if loss_type not in ("mse", "hinge"):
            raise ValueError(f"loss_type must be 'mse' or 'hinge', got {loss_type!r}")
        self.loss_type = loss_type

    def generator_loss(self, fake_outputs):
        """Args: fake_outputs: the discriminators' outputs on generated audio. Returns ``(B,)``."""
        total = 0.0
        for outputs in fake_outputs:
            score = _score(outputs)
            if self.loss_type == "mse":
                total += _per_example_mean(tf.square(score - 1.0))
            else:
                total += -_per_example_mean(score)
        return total / len(fake_outputs)

    def discriminator_loss(self, real_outputs, fake_outputs):
        """Args: outputs on real and on generated audio. Returns (real_loss ``(B,)``, fake_loss ``(B,)``)."""
        real_total, fake_total = 0.0, 0.0
        for real, fake in zip(real_outputs, fake_outputs):
            real_score, fake_score = _score(real), _score(fake)
            if self.loss_type == "mse":
                real_total += _per_example_mean(tf.square(real_score - 1.0))
                fake_total += _per_example_mean(tf.square(fake_score))
            else:
                real_total += _per_example_mean(tf.nn.relu(1.0 - real_score))
                fake_total += _per_example_mean(tf.nn.relu(1.0 + fake_score))
        count = len(real_outputs)
        return real_total / count, fake_total / count

    def call(self, fake_outputs):
        """The generator loss; see ``generator_loss``."""
        return self.generator_loss(fake_outputs)

    def get_config(self):
        return {**super().get_config(), "loss_type": self.loss_type}


class TFFeatureMatchLoss(tf.keras.layers.Layer):
    """Mean absolute difference of the discriminators' intermediate feature maps (not the scores)."""

    def call(self, real_outputs, fake_outputs):
        """Args: outputs on real and on generated audio (nested lists). Returns ``(B,)``.

        Real features are treated as constants.
        """
        total, count = 0.0, 0
        for real, fake in zip(real_outputs, fake_outputs):
            for real_feature, fake_feature in zip(real[:-1], fake[:-1]):
                total += _per_example_mean(tf.abs(tf.stop_gradient(real_feature) - fake_feature))
                count += 1
        if count == 0:
            raise ValueError("feature matching needs discriminators that return intermediate feature maps")
        return total / count
