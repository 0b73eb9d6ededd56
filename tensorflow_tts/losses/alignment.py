"""Alignment losses of the built-in aligner (One TTS Alignment To Rule Them All, Badlani et al. 2022).

* Forward-sum loss: -log P(mel | text) summed over every monotonic alignment, computed as a
  CTC loss whose labels are the token positions 1..T in order (each frame emits one token
  or a blank). It teaches the soft alignment without any duration target.
* Binarization loss: pulls the soft alignment towards the hard (MAS) alignment so the
  durations the model is trained with match what the aligner believes.
"""

import tensorflow as tf

# Log-probability given to the CTC blank before renormalising (as in FastPitch / RAD-TTS).
DEFAULT_BLANK_LOGPROB = -1.0
_MASKED = -1e4


def forward_sum_loss(log_probs, input_lengths, mel_lengths, blank_logprob=DEFAULT_BLANK_LOGPROB):
    """Per-example forward-sum loss, divided by the number of tokens.

    Args:
        log_probs: (B, F, T) float: unnormalised log scores of frame f for token t (the
            aligner's ``log_probs``); padded frames and tokens are ignored.
        input_lengths: (B,) int, real tokens per item (T_b >= 1).
        mel_lengths: (B,) int, real frames per item. An item with fewer frames than tokens
            has no path through every token: its loss is computed for its first F_b tokens.
        blank_logprob: score of the blank class added in front of the tokens.

    Returns:
        (B,) float32: -log(sum over paths of prod of per-frame probabilities) / T_b, with
        per-frame probabilities = softmax over [blank, tokens 1..T_b].
    """
    log_probs = tf.cast(log_probs, tf.float32)
    input_lengths = tf.cast(input_lengths, tf.int32)
    mel_lengths = tf.cast(mel_lengths, tf.int32)
    batch_size = tf.shape(log_probs)[0]
    num_tokens = tf.shape(log_probs)[2]
    token_mask = tf.sequence_mask(input_lengths, num_tokens)
    logits = tf.where(token_mask[:, tf.newaxis, :], log_probs, _MASKED)
    blank = tf.fill([batch_size, tf.shape(log_probs)[1], 1], tf.constant(blank_logprob, tf.float32))
    logits = tf.nn.log_softmax(tf.concat([blank, logits], axis=2), axis=2)  # (B, F, T + 1)
    label_lengths = tf.maximum(tf.minimum(input_lengths, mel_lengths), 1)
    labels = tf.range(1, num_tokens + 1)[tf.newaxis, :] * tf.cast(
        tf.sequence_mask(label_lengths, num_tokens), tf.int32
    )
    labels = tf.broadcast_to(labels, [batch_size, num_tokens])
    loss = tf.nn.ctc_loss(
        labels=labels,
        logits=logits,
        label_length=label_lengths,
        logit_length=tf.maximum(mel_lengths, 1),
        logits_time_major=False,
        blank_index=0,
    )
    return loss / tf.cast(label_lengths, tf.float32)


def binarization_loss(hard_alignment, soft_alignment, mel_lengths, eps=1e-12):
    """Per-example -mean over frames of log(soft probability of the hard path's token).

    Args:
        hard_alignment: (B, F, T) 0/1, one 1 per real frame (the MAS path).
        soft_alignment: (B, F, T) probabilities over tokens per frame.
        mel_lengths: (B,) int, real frames per item.

    Returns: (B,) float32.
    """
    hard_alignment = tf.stop_gradient(tf.cast(hard_alignment, tf.float32))
    soft_alignment = tf.cast(soft_alignment, tf.float32)
    log_soft = tf.math.log(tf.maximum(soft_alignment, eps))
    total = tf.reduce_sum(hard_alignment * log_soft, axis=[1, 2])
    frames = tf.cast(tf.maximum(mel_lengths, 1), tf.float32)
    return -total / frames


def ramped_weight(step, weight, start_steps, warmup_steps):
    """``weight`` x a linear ramp: 0 before ``start_steps``, full after ``warmup_steps`` more (a tensor)."""
    step = tf.cast(step, tf.float32)
    return weight * tf.clip_by_value((step - start_steps) / max(warmup_steps, 1), 0.0, 1.0)
