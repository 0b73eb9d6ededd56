"""Dropout whose masks come from the training step's seed (`tensorflow_tts.utils.step_random`),
so a resumed run and a recomputed block (gradient checkpointing) draw the same masks again."""

import tensorflow as tf

from tensorflow_tts.utils.step_random import next_seed


class Dropout(tf.keras.layers.Dropout):
    """Keras' Dropout (same arguments, no weights); inside `step_seed`, masks are stateless."""

    def call(self, inputs, training=None):
        """inputs (..., C) -> same shape."""
        if training is not True or self.rate == 0:
            return super().call(inputs, training=training)
        seed = next_seed()
        if seed is None:
            return super().call(inputs, training=training)
        return tf.nn.experimental.stateless_dropout(
            inputs, rate=self.rate, seed=seed, noise_shape=self._get_noise_shape(inputs)
        )
