"""Multi-head scaled dot-product self-attention over a padded sequence."""

import tensorflow as tf

from tensorflow_tts.layers.dense import Dense
from tensorflow_tts.layers.dropout import Dropout
from tensorflow_tts.layers.embeddings import truncated_normal
from tensorflow_tts.layers.hyperparameters import HyperParameterConfig


class MultiHeadSelfAttention(HyperParameterConfig, tf.keras.layers.Layer):
    """Self-attention with ``num_heads`` heads of ``head_size`` and an output projection.

    Padded keys (mask False) get no attention; padded queries still produce values, which
    the caller masks.
    """

    hyperparameters = ("hidden_size", "num_heads", "head_size", "dropout_rate", "initializer_range")

    def __init__(self, hidden_size, num_heads, head_size, dropout_rate=0.0, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_size = head_size
        self.dropout_rate = dropout_rate
        self.initializer_range = initializer_range
        all_heads = num_heads * head_size
        self.query = Dense(all_heads, kernel_initializer=truncated_normal(initializer_range), name="query")
        self.key = Dense(all_heads, kernel_initializer=truncated_normal(initializer_range), name="key")
        self.value = Dense(all_heads, kernel_initializer=truncated_normal(initializer_range), name="value")
        self.output_dense = Dense(hidden_size, kernel_initializer=truncated_normal(initializer_range), name="output")
        self.dropout = Dropout(dropout_rate)

    def _split_heads(self, x, batch_size):
        """(B, T, heads * head_size) -> (B, heads, T, head_size)."""
        x = tf.reshape(x, [batch_size, -1, self.num_heads, self.head_size])
        return tf.transpose(x, perm=[0, 2, 1, 3])

    def call(self, hidden_states, mask, training=False, return_attention=False):
        """Attend every step to the valid steps of the same sequence.

        Args:
            hidden_states: (B, T, C).
            mask: (B, T) bool, True at valid steps.
            training: applies dropout to the attention probabilities.
            return_attention: also return the probabilities.

        Returns:
            (B, T, hidden_size), and (B, heads, T, T) if ``return_attention``.
        """
        batch_size = tf.shape(hidden_states)[0]
        query = self._split_heads(self.query(hidden_states), batch_size)
        key = self._split_heads(self.key(hidden_states), batch_size)
        value = self._split_heads(self.value(hidden_states), batch_size)

        scores = tf.matmul(query, key, transpose_b=True)
        scores = scores / tf.math.sqrt(tf.cast(self.head_size, scores.dtype))
        # A large negative bias rather than -inf keeps an all-padding row finite.
        blocked = 1.0 - tf.cast(mask[:, tf.newaxis, tf.newaxis, :], scores.dtype)
        scores += blocked * (-1e9 if scores.dtype == tf.float32 else scores.dtype.min / 2)
        probabilities = tf.nn.softmax(scores, axis=-1)
        probabilities = self.dropout(probabilities, training=training)

        context = tf.matmul(probabilities, value)  # (B, heads, T, head_size)
        context = tf.transpose(context, perm=[0, 2, 1, 3])
        context = tf.reshape(context, [batch_size, -1, self.num_heads * self.head_size])
        outputs = self.output_dense(context)
        if return_attention:
            return outputs, probabilities
        return outputs
