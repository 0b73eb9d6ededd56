"""Guided attention loss (Tachibana et al., 2017): pushes an attention alignment towards the diagonal."""

import tensorflow as tf


def guided_attention_weights(input_lengths, output_lengths, max_input_length, max_output_length, sigma=0.2):
    """Penalty W[b, n, t] = 1 - exp(-(n / N_b - t / T_b)^2 / (2 sigma^2)) for token n at step t.

    Args:
        input_lengths: (B,) int, N_b tokens per sequence.
        output_lengths: (B,) int, T_b decoder steps per sequence.
        max_input_length, max_output_length: scalars, the padded sizes N and T.
        sigma: width of the allowed band around the diagonal, as a fraction of the lengths.

    Returns:
        (B, N, T) float32, 0 on the diagonal, near 1 far from it and 0 in the padding.
    """
    input_lengths = tf.cast(input_lengths, tf.float32)[:, tf.newaxis, tf.newaxis]
    output_lengths = tf.cast(output_lengths, tf.float32)[:, tf.newaxis, tf.newaxis]
    tokens = tf.cast(tf.range(max_input_length), tf.float32)[tf.newaxis, :, tf.newaxis]
    steps = tf.cast(tf.range(max_output_length), tf.float32)[tf.newaxis, tf.newaxis, :]
    distance = tokens / tf.maximum(input_lengths, 1.0) - steps / tf.maximum(output_lengths, 1.0)
    weights = 1.0 - tf.exp(-tf.square(distance) / (2.0 * sigma * sigma))
    return weights * _valid(input_lengths, output_lengths, tokens, steps)


def _valid(input_lengths, output_lengths, tokens, steps):
    return tf.cast(tf.logical_and(tokens < input_lengths, steps < output_lengths), tf.float32)


def guided_attention_loss(alignments, input_lengths, output_lengths, sigma=0.2, per_step=False):
    """Mean penalty-weighted attention per sequence.

    Args:
        alignments: (B, N, T) attention weights, tokens by decoder steps (Tacotron 2's
            ``alignment_history``).
        input_lengths: (B,) int, tokens per sequence.
        output_lengths: (B,) int, decoder *steps* per sequence; for Tacotron 2 with
            reduction factor r that is ``ceil(mel_lengths / r)``.
        sigma: see `guided_attention_weights` (1.8's Tacotron 2 recipe used 0.2).
        per_step: divide by the decoder steps only, not by steps x tokens: the mean over
            steps of each step's penalty, as strong per step as other per-step losses.

    Returns:
        (B,) float32: sum of W * A over the valid region divided by its size (or by the
        steps). 0 for an alignment on the diagonal; larger the further it strays from it.
    """
    alignments = tf.cast(alignments, tf.float32)
    shape = tf.shape(alignments)
    weights = guided_attention_weights(input_lengths, output_lengths, shape[1], shape[2], sigma)
    sizes = tf.cast(output_lengths, tf.float32)
    if not per_step:
        sizes *= tf.cast(input_lengths, tf.float32)
    return tf.reduce_sum(weights * alignments, axis=[1, 2]) / tf.maximum(sizes, 1.0)


class GuidedAttentionLoss:
    """``loss(alignments, input_lengths, output_lengths)`` -> (B,) per-sequence losses."""

    def __init__(self, sigma=0.2):
        if sigma <= 0:
            raise ValueError(f"guided attention sigma must be positive, got {sigma}")
        self.sigma = sigma

    def __call__(self, alignments, input_lengths, output_lengths):
        """alignments (B, N, T), input_lengths (B,), output_lengths (B,) in decoder steps -> (B,)."""
        return guided_attention_loss(alignments, input_lengths, output_lengths, self.sigma)

    def get_config(self):
        return {"sigma": self.sigma}
