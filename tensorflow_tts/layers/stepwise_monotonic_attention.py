"""Stepwise monotonic attention (He, Deng and He, 2019): an alignment that can only stay on
its token or move to the next one at each decoder step.

Each step decides, per token j, how likely the attention that sits on j stays there:
``p_j = sigmoid(energy_j)``, with the location-sensitive energies. The new alignment is
``a_j = a_j' * p_j + a_(j-1)' * (1 - p_(j-1))`` (primes: the previous step). It starts on
token 0, never skips a token, never moves back and never leaves the last token, so the
path is monotonic and complete by construction; what it learns is only *when* to move,
from the decoder state and the token. Gaussian noise on the energies while training
pushes those decisions towards 0 or 1, so the soft alignment trained is nearly the hard
one used in free-running synthesis (``hard=True``: stay when ``p_j >= 0.5``).
"""

import tensorflow as tf

from tensorflow_tts.utils import step_random

from tensorflow_tts.layers.location_attention import (
    LocationSensitiveAttention,
    attention_context,
)


class StepwiseMonotonicAttention(LocationSensitiveAttention):
    """The energies of `LocationSensitiveAttention` (same sub-layers and weight names),
    read as stay-or-move probabilities instead of a softmax over the tokens.

    Args (beyond `LocationSensitiveAttention`'s):
        noise_std: standard deviation of the noise added to the energies while training.
    """

    def __init__(self, units, filters, kernel_size, noise_std=1.0, **kwargs):
        super().__init__(units, filters, kernel_size, **kwargs)
        self.noise_std = noise_std

    def call(self, query, previous_alignments, cumulative_alignments, keys, values, memory_mask, allowed=None,
             training=False, hard=False):
        """One attention step; arguments as `LocationSensitiveAttention.call`.

        ``previous_alignments`` (B, T) must sum to 1 over the valid tokens (the decoder
        starts them on token 0). ``allowed`` is not used: the attention moves at most one
        token per step anyway. ``hard``: each decision is taken outright (stay when its
        probability is at least 0.5), so a one-hot alignment stays one-hot.

        Returns:
            context (B, M) and alignments (B, T), which sum to 1 over valid positions.
        """
        energy = self.energies(query, cumulative_alignments, keys)
        if training and self.noise_std > 0:
            energy += self.noise_std * step_random.normal(tf.shape(energy), dtype=energy.dtype)
        stay = tf.sigmoid(energy)
        if hard:
            stay = tf.cast(stay >= 0.5, stay.dtype)
        # The last valid token (and the padding after it) keeps what it holds.
        valid_after = tf.concat([memory_mask[:, 1:], tf.zeros_like(memory_mask[:, :1])], axis=1)
        stay = tf.where(valid_after, stay, tf.ones_like(stay))
        move = previous_alignments * (1.0 - stay)
        alignments = previous_alignments * stay + tf.pad(move[:, :-1], [[0, 0], [1, 0]])
        return attention_context(alignments, values), alignments

    def get_config(self):
        config = super().get_config()
        config.update(noise_std=self.noise_std)
        return config
