"""Tacotron 2's stop-token targets and loss: where a free-running decoder should stop.

Tacotron 2 emits `reduction_factor` (r) frames and r stop logits per decoder step, and stops
at the first step whose r stop probabilities all pass the threshold. So the targets are set
per step: every frame of the step holding an utterance's last frame (and of any later step)
is a stop. With r = 1 that is TensorFlowTTS 1.8's target (frame >= mel_length - 1).
"""

import tensorflow as tf


def decoder_steps(mel_lengths, reduction_factor):
    """ceil(mel_lengths / r): decoder steps that cover each utterance. (B,) int32."""
    mel_lengths = tf.cast(mel_lengths, tf.int32)
    return (mel_lengths + reduction_factor - 1) // reduction_factor


def stop_token_targets(mel_lengths, num_frames, reduction_factor=1):
    """(B, num_frames) float32: 1 from the start of the step holding frame mel_length - 1 on.

    Args:
        mel_lengths: (B,) int, real frames per utterance.
        num_frames: scalar, the padded frame count of the decoder output (steps * r).
        reduction_factor: frames per decoder step.
    """
    mel_lengths = tf.cast(mel_lengths, tf.int32)
    last_step = (tf.maximum(mel_lengths, 1) - 1) // reduction_factor
    frame_steps = tf.range(num_frames) // reduction_factor
    return tf.cast(frame_steps[tf.newaxis, :] >= last_step[:, tf.newaxis], tf.float32)


def stop_token_loss(stop_logits, mel_lengths, reduction_factor=1, pos_weight=1.0):
    """Per-utterance binary cross-entropy of the stop logits, stop frames weighted by pos_weight.

    Only the frames of the utterance's own decoder steps (ceil(mel_length / r) * r frames)
    count, so the loss of an utterance does not depend on how the batch was padded. There is
    one stop step per utterance against tens of non-stop ones: ``pos_weight`` > 1 keeps the
    model from learning to never stop.

    Args:
        stop_logits: (B, S * r) logits (Tacotron 2's ``stop_token_prediction``).
        mel_lengths: (B,) int real frames.
        reduction_factor: r.
        pos_weight: weight of the positive (stop) frames.

    Returns:
        (B,) float32, the weighted cross-entropy averaged over the utterance's frames.
    """
    stop_logits = tf.cast(stop_logits, tf.float32)
    num_frames = tf.shape(stop_logits)[1]
    targets = stop_token_targets(mel_lengths, num_frames, reduction_factor)
    losses = tf.nn.weighted_cross_entropy_with_logits(targets, stop_logits, pos_weight=pos_weight)
    valid_frames = decoder_steps(mel_lengths, reduction_factor) * reduction_factor
    mask = tf.sequence_mask(valid_frames, num_frames, dtype=tf.float32)
    return tf.math.divide_no_nan(tf.reduce_sum(losses * mask, axis=1), tf.reduce_sum(mask, axis=1))


class StopTokenLoss:
    """``loss(stop_logits, mel_lengths)`` -> (B,); see `stop_token_loss`."""

    def __init__(self, reduction_factor=1, pos_weight=1.0):
        if reduction_factor < 1:
            raise ValueError(f"reduction_factor must be at least 1, got {reduction_factor}")
        if pos_weight <= 0:
            raise ValueError(f"stop token pos_weight must be positive, got {pos_weight}")
        self.reduction_factor = int(reduction_factor)
        self.pos_weight = float(pos_weight)

    def __call__(self, stop_logits, mel_lengths):
        """stop_logits (B, S * r), mel_lengths (B,) -> (B,)."""
        return stop_token_loss(stop_logits, mel_lengths, self.reduction_factor, self.pos_weight)

    def get_config(self):
        return {"reduction_factor": self.reduction_factor, "pos_weight": self.pos_weight}
