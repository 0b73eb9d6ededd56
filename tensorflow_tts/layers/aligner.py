"""The built-in aligner: learns which mel frames belong to which token, during training only.

As in FastPitch / RAD-TTS ("One TTS Alignment To Rule Them All", Badlani et al. 2022):
tokens and mel frames are projected by small conv encoders into one space; the soft
alignment of frame f is a softmax over tokens of their negative squared distances, plus a
log beta-binomial prior that favours the diagonal. Monotonic alignment search turns it into
hard durations that sum exactly to the mel length. Trained by the forward-sum loss and the
binarization loss (tensorflow_tts.losses.alignment).
"""

import tensorflow as tf

from tensorflow_tts.layers.conv1d import Conv1D
from tensorflow_tts.alignment.search import batch_monotonic_alignment_search
from tensorflow_tts.configs.aligner import AlignerConfig

_MASKED = -1e4  # a finite -inf: exp() of it is 0, and no inf - inf appears


def log_beta_binomial_prior(input_lengths, mel_lengths, num_tokens, num_frames, scaling=1.0):
    """Log prior of frame f (1-based i = f + 1) being token k: BetaBinomial(k; n = T_b - 1, a = s*i, b = s*(F_b + 1 - i)).

    Args:
        input_lengths, mel_lengths: (B,) int, T_b and F_b.
        num_tokens, num_frames: the padded T and F.
        scaling: s; larger values concentrate the prior around the diagonal.

    Returns: (B, F, T) float32; 0 at padded frames or tokens.
    """
    n = tf.cast(tf.maximum(input_lengths - 1, 0), tf.float32)[:, tf.newaxis, tf.newaxis]
    frames_total = tf.cast(mel_lengths, tf.float32)[:, tf.newaxis, tf.newaxis]
    k = tf.cast(tf.range(num_tokens), tf.float32)[tf.newaxis, tf.newaxis, :]
    i = tf.cast(tf.range(1, num_frames + 1), tf.float32)[tf.newaxis, :, tf.newaxis]
    a = scaling * i
    b = scaling * tf.maximum(frames_total + 1.0 - i, 1.0)
    valid = (k <= n) & (i <= frames_total)
    k_safe = tf.minimum(k, n)
    lgamma = tf.math.lgamma
    log_choose = lgamma(n + 1.0) - lgamma(k_safe + 1.0) - lgamma(n - k_safe + 1.0)
    log_beta_num = lgamma(k_safe + a) + lgamma(n - k_safe + b) - lgamma(n + a + b)
    log_beta_den = lgamma(a) + lgamma(b) - lgamma(a + b)
    prior = log_choose + log_beta_num - log_beta_den
    return tf.where(valid, prior, 0.0)


class Aligner(tf.keras.Model):
    """Token/frame soft alignment and its hard durations.

    Owned by the trainer, beside the acoustic model (its own token embedding, so the
    model's inference graph does not depend on it). Always computes in float32.

    Args:
        config: AlignerConfig (or a dict of its keys).
        vocab_size: token ids are in [0, vocab_size); 0 is padding.
        num_mels: mel channels of the frames it reads.
    """

    def __init__(self, config, vocab_size, num_mels, **kwargs):
        kwargs.setdefault("name", "aligner")
        super().__init__(**kwargs)
        if isinstance(config, dict):
            config = AlignerConfig.from_dict(config, source="aligner_params")
        self.config = config
        self.vocab_size = int(config.vocab_size or vocab_size)
        self.num_mels = int(num_mels)
        channels = config.embedding_size
        conv = Conv1D
        self.token_embeddings = tf.keras.layers.Embedding(
            self.vocab_size, channels, dtype="float32", name="token_embeddings"
        )
        self.key_convs = [
            conv(2 * channels, 3, padding="same", activation="relu", dtype="float32", name="key_conv_0"),
            conv(config.attention_channels, 1, dtype="float32", name="key_conv_1"),
        ]
        self.query_convs = [
            conv(2 * self.num_mels, 3, padding="same", activation="relu", dtype="float32", name="query_conv_0"),
            conv(self.num_mels, 1, activation="relu", dtype="float32", name="query_conv_1"),
            conv(config.attention_channels, 1, dtype="float32", name="query_conv_2"),
        ]

    def build_once(self):
        """Create the weights with a dummy call (before compile / restoring a checkpoint)."""
        self(
            tf.constant([[1, 2, 3]], tf.int32),
            tf.zeros([1, 5, self.num_mels], tf.float32),
            tf.constant([3], tf.int32),
            tf.constant([5], tf.int32),
        )
        return self

    def call(self, input_ids, mels, input_lengths, mel_lengths, training=False):
        """Align a padded batch.

        Args:
            input_ids: (B, T) int32 token ids, 0 = padding.
            mels: (B, F, num_mels) mel frames (any normalisation, the same in training and
                extraction).
            input_lengths: (B,) int tokens per item; mel_lengths: (B,) int frames per item.
            training: unused (no dropout); kept for the Keras signature.

        Returns: dict with
            log_probs: (B, F, T) float32, log_softmax over tokens of -temperature * squared
                distance, plus the log prior; _MASKED at padded tokens (the forward-sum
                loss input).
            soft: (B, F, T) float32 soft alignment, a softmax over real tokens; 0 at padded
                frames.
            durations: (B, T) int32 hard durations from MAS, summing to mel_lengths.
            hard: (B, F, T) float32 one-hot of the hard path; 0 at padded frames.
        """
        mels = tf.cast(mels, tf.float32)
        num_tokens = tf.shape(input_ids)[1]
        num_frames = tf.shape(mels)[1]
        token_mask = tf.sequence_mask(input_lengths, num_tokens)
        frame_mask = tf.sequence_mask(mel_lengths, num_frames)

        keys = self.token_embeddings(input_ids) * tf.cast(token_mask[:, :, tf.newaxis], tf.float32)
        for layer in self.key_convs:
            keys = layer(keys)  # (B, T, A)
        queries = mels * tf.cast(frame_mask[:, :, tf.newaxis], tf.float32)
        for layer in self.query_convs:
            queries = layer(queries)  # (B, F, A)

        # Squared distance of every (frame, token) pair: |q|^2 - 2 q.k + |k|^2.
        distance = (
            tf.reduce_sum(tf.square(queries), axis=2)[:, :, tf.newaxis]
            - 2.0 * tf.matmul(queries, keys, transpose_b=True)
            + tf.reduce_sum(tf.square(keys), axis=2)[:, tf.newaxis, :]
        )
        scores = -self.config.temperature * tf.maximum(distance, 0.0)
        scores = tf.where(token_mask[:, tf.newaxis, :], scores, _MASKED)
        log_probs = tf.nn.log_softmax(scores, axis=2)
        if self.config.use_prior:
            log_probs += log_beta_binomial_prior(
                input_lengths, mel_lengths, num_tokens, num_frames, self.config.prior_scaling
            )
        log_probs = tf.where(token_mask[:, tf.newaxis, :], log_probs, _MASKED)
        soft = tf.nn.softmax(log_probs, axis=2) * tf.cast(frame_mask[:, :, tf.newaxis], tf.float32)

        durations, path = batch_monotonic_alignment_search(log_probs, input_lengths, mel_lengths)
        hard = tf.one_hot(path, num_tokens, dtype=tf.float32) * tf.cast(frame_mask[:, :, tf.newaxis], tf.float32)
        return {"log_probs": log_probs, "soft": soft, "durations": durations, "hard": hard}

    def get_config(self):
        return {"config": self.config.to_dict(), "vocab_size": self.vocab_size, "num_mels": self.num_mels, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(AlignerConfig.from_dict(config["config"]), config["vocab_size"], config["num_mels"], name=config.get("name"))
