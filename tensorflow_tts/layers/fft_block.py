"""The FFT block of FastSpeech (self-attention + 1-D conv feed-forward) and a stack of them."""

import math

import tensorflow as tf

from tensorflow_tts.layers.conv1d import Conv1D
from tensorflow_tts.layers.attention import MultiHeadSelfAttention
from tensorflow_tts.layers.checkpointing import run_block
from tensorflow_tts.layers.dropout import Dropout
from tensorflow_tts.layers.embeddings import truncated_normal
from tensorflow_tts.layers.hyperparameters import HyperParameterConfig


def mish(x):
    return x * tf.math.tanh(tf.math.softplus(x))


def gelu(x):
    return 0.5 * x * (1.0 + tf.math.erf(x / math.sqrt(2.0)))


def gelu_new(x):
    """The tanh approximation of gelu."""
    return 0.5 * x * (1.0 + tf.math.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * tf.pow(x, 3))))


ACTIVATIONS = {
    "identity": tf.identity,
    "tanh": tf.math.tanh,
    "gelu": gelu,
    "relu": tf.nn.relu,
    "swish": tf.nn.swish,
    "gelu_new": gelu_new,
    "mish": mish,
}


def get_activation(name):
    try:
        return ACTIVATIONS[name]
    except KeyError:
        raise ValueError(f"unknown activation {name!r}; choose one of {', '.join(ACTIVATIONS)}") from None


class FFTBlock(HyperParameterConfig, tf.keras.layers.Layer):
    """Self-attention and a two-conv feed-forward, each with dropout, residual and layer norm.

    Outputs are zero at padded steps, and every conv sees zeros there, so padding a
    sequence does not change its valid outputs.
    """

    hyperparameters = ("hidden_size", "num_heads", "head_size", "intermediate_size", "kernel_size",
        "activation", "hidden_dropout_rate", "attention_dropout_rate", "layer_norm_eps", "initializer_range")

    def __init__(
        self,
        hidden_size,
        num_heads,
        head_size,
        intermediate_size,
        kernel_size,
        activation="mish",
        hidden_dropout_rate=0.1,
        attention_dropout_rate=0.1,
        layer_norm_eps=1e-5,
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_size = head_size
        self.intermediate_size = intermediate_size
        self.kernel_size = kernel_size
        self.activation = activation
        self.hidden_dropout_rate = hidden_dropout_rate
        self.attention_dropout_rate = attention_dropout_rate
        self.layer_norm_eps = layer_norm_eps
        self.initializer_range = initializer_range

        self.self_attention = MultiHeadSelfAttention(
            hidden_size, num_heads, head_size, attention_dropout_rate, initializer_range, name="self_attention"
        )
        self.attention_dropout = Dropout(hidden_dropout_rate)
        self.attention_norm = tf.keras.layers.LayerNormalization(epsilon=layer_norm_eps, name="attention_norm")
        self.feed_forward_in = Conv1D(
            intermediate_size, kernel_size, padding="same", kernel_initializer=truncated_normal(initializer_range), name="feed_forward_in"
        )
        self.feed_forward_out = Conv1D(
            hidden_size, kernel_size, padding="same", kernel_initializer=truncated_normal(initializer_range), name="feed_forward_out"
        )
        self.activation_fn = get_activation(activation)
        self.feed_forward_dropout = Dropout(hidden_dropout_rate)
        self.output_norm = tf.keras.layers.LayerNormalization(epsilon=layer_norm_eps, name="output_norm")

    def call(self, hidden_states, mask, training=False, return_attention=False):
        """hidden_states (B, T, hidden_size), mask (B, T) bool -> (B, T, hidden_size).

        With ``return_attention`` also the attention probabilities (B, heads, T, T).
        """
        step_mask = tf.cast(mask[:, :, tf.newaxis], hidden_states.dtype)
        attended, probabilities = self.self_attention(hidden_states, mask, training=training, return_attention=True)
        attended = self.attention_dropout(attended, training=training)
        attended = self.attention_norm(attended + hidden_states) * step_mask

        features = self.activation_fn(self.feed_forward_in(attended)) * step_mask
        features = self.feed_forward_out(features) * step_mask
        features = self.feed_forward_dropout(features, training=training)
        outputs = self.output_norm(features + attended) * step_mask
        if return_attention:
            return outputs, probabilities
        return outputs


class FFTStack(tf.keras.layers.Layer):
    """``num_layers`` FFT blocks in sequence (a FastSpeech encoder or decoder body).

    With ``gradient_checkpointing``, training recomputes each block's activations in the
    backward pass (`layers.checkpointing`).
    """

    gradient_checkpointing = False

    def __init__(self, num_layers, name=None, dtype=None, **block_kwargs):
        """``block_kwargs`` are FFTBlock's arguments, shared by every block."""
        super().__init__(name=name, dtype=dtype)
        self.num_layers = num_layers
        self.block_kwargs = dict(block_kwargs)
        self.blocks = [FFTBlock(name=f"layer_._{i}", **block_kwargs) for i in range(num_layers)]

    def call(self, hidden_states, mask, training=False):
        """hidden_states (B, T, hidden_size), mask (B, T) bool -> (B, T, hidden_size)."""
        for block in self.blocks:
            hidden_states = run_block(block, hidden_states, mask, training=training, recompute=self.gradient_checkpointing)
        return hidden_states

    def get_config(self):
        config = super().get_config()
        config.update(num_layers=self.num_layers, **self.block_kwargs)
        return config
