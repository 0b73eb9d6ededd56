"""Token, sinusoidal position and speaker embeddings of the FastSpeech family."""

import numpy as np
import tensorflow as tf

from tensorflow_tts.layers.dense import Dense


def truncated_normal(stddev):
    return tf.keras.initializers.TruncatedNormal(stddev=stddev)


def sinusoidal_table(num_positions, hidden_size):
    """The Transformer's sin/cos table with ``num_positions + 1`` rows; row 0 (padding) is 0.

    Row ``p`` holds ``sin(p / 10000^(2i/d))`` in even columns ``2i`` and the matching cos in
    odd columns. Computed in float64 and rounded once, like TensorFlowTTS 1.8's table.
    """
    positions = np.arange(num_positions + 1, dtype=np.float64)[:, None]
    pair_index = np.arange(hidden_size) // 2
    angles = positions / np.power(10000, 2.0 * pair_index / hidden_size)[None, :]
    table = np.empty_like(angles)
    table[:, 0::2] = np.sin(angles[:, 0::2])
    table[:, 1::2] = np.cos(angles[:, 1::2])
    table[0] = 0.0
    return table.astype(np.float32)


class TokenEmbedding(tf.keras.layers.Layer):
    """A trainable ``[vocab_size, hidden_size]`` lookup table for token ids."""

    def __init__(self, vocab_size, hidden_size, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.initializer_range = initializer_range

    def build(self, input_shape):
        self.embeddings = self.add_weight(
            "embeddings",
            shape=[self.vocab_size, self.hidden_size],
            initializer=truncated_normal(self.initializer_range),
        )
        super().build(input_shape)

    def call(self, input_ids):
        """input_ids (B, T) int -> (B, T, hidden_size)."""
        return tf.gather(self.embeddings, tf.cast(input_ids, tf.int32))

    def get_config(self):
        config = super().get_config()
        config.update(
            vocab_size=self.vocab_size,
            hidden_size=self.hidden_size,
            initializer_range=self.initializer_range,
        )
        return config


class PositionEmbedding(tf.keras.layers.Layer):
    """Fixed sinusoidal position embeddings; position 0 means padding and embeds to 0.

    Positions 1..``max_positions`` read a constant table (the rows 1.8 stored, so old
    weights give the same outputs); positions beyond it are computed from the same formula
    in float32, so inference works at any length. The table is derived from
    ``max_positions`` and ``hidden_size``, not a weight: nothing to train or save, and
    ``resize`` can change it at any time.
    """

    def __init__(self, max_positions, hidden_size, **kwargs):
        super().__init__(**kwargs)
        self.max_positions = max_positions
        self.hidden_size = hidden_size
        self._table = sinusoidal_table(max_positions, hidden_size)

    def resize(self, max_positions):
        """Rebuild the table for positions 1..max_positions (functions traced before keep the old one)."""
        self.max_positions = max_positions
        self._table = sinusoidal_table(max_positions, self.hidden_size)

    def _computed(self, position_ids):
        """position_ids (B, T) int32 -> (B, T, hidden_size): the sinusoids computed in float32."""
        pair_index = np.arange(self.hidden_size) // 2
        frequencies = tf.constant(np.power(10000.0, -2.0 * pair_index / self.hidden_size), tf.float32)
        angles = tf.cast(position_ids, tf.float32)[:, :, tf.newaxis] * frequencies
        return tf.where(tf.constant(np.arange(self.hidden_size) % 2 == 0), tf.sin(angles), tf.cos(angles))

    def call(self, position_ids):
        """position_ids (B, T) int, 1-based, 0 for padding -> (B, T, hidden_size)."""
        position_ids = tf.cast(position_ids, tf.int32)
        # Static shapes only (no table grown to the longest position), so XLA and TFLite take it too.
        stored = tf.gather(tf.constant(self._table), tf.minimum(position_ids, self.max_positions))
        in_table = (position_ids <= self.max_positions)[:, :, tf.newaxis]
        return tf.cast(tf.where(in_table, stored, self._computed(position_ids)), self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update(max_positions=self.max_positions, hidden_size=self.hidden_size)
        return config


def position_ids(mask):
    """mask (B, T) bool -> (B, T) int32: 1, 2, ... at valid steps, 0 at masked ones."""
    length = tf.shape(mask)[1]
    positions = tf.range(1, length + 1, dtype=tf.int32)[tf.newaxis, :]
    return positions * tf.cast(mask, tf.int32)


class SpeakerEmbedding(tf.keras.layers.Layer):
    """Speaker id -> ``softplus(Dense(embedding))``, a vector to add to every time step."""

    def __init__(self, n_speakers, hidden_size, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.n_speakers = n_speakers
        self.hidden_size = hidden_size
        self.initializer_range = initializer_range
        self.embedding = tf.keras.layers.Embedding(
            n_speakers,
            hidden_size,
            embeddings_initializer=truncated_normal(initializer_range),
            name="embedding",
        )
        self.projection = Dense(hidden_size, name="projection")

    def call(self, speaker_ids):
        """speaker_ids (B,) int -> (B, 1, hidden_size), ready to broadcast over time."""
        features = tf.math.softplus(self.projection(self.embedding(tf.cast(speaker_ids, tf.int32))))
        return features[:, tf.newaxis, :]

    def get_config(self):
        config = super().get_config()
        config.update(
            n_speakers=self.n_speakers,
            hidden_size=self.hidden_size,
            initializer_range=self.initializer_range,
        )
        return config
