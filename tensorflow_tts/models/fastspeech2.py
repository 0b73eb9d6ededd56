"""FastSpeech2 (Ren et al., 2020): FastSpeech with a variance adaptor (duration, pitch, energy)."""

import tensorflow as tf

from tensorflow_tts.layers.conv1d import Conv1D
from tensorflow_tts.configs.fastspeech2 import FastSpeech2Config
from tensorflow_tts.layers.dropout import Dropout
from tensorflow_tts.layers.variance_predictor import VariancePredictor
from tensorflow_tts.models.fastspeech import FASTSPEECH_LEGACY_RENAMES, TFFastSpeech
from tensorflow_tts.utils.precision import to_float32

# 1.8 hard-coded this kernel size for the f0/energy embedding convs (it never read
# `variant_kernel_size`, whose default is the same 9).
VARIANCE_EMBEDDING_KERNEL_SIZE = 9

# FastSpeech's map covers FastSpeech2 (its three predictors included); the f0/energy
# embedding convs keep their names ("f0_embeddings/kernel").
FASTSPEECH2_LEGACY_RENAMES = list(FASTSPEECH_LEGACY_RENAMES)


class TFFastSpeech2(TFFastSpeech):
    """FastSpeech2: token ids -> mel frames, conditioned on duration, f0 and energy.

    The duration, f0 and energy predictors share a structure (`VariancePredictor`) and,
    with several speakers, each has its own speaker embedding. f0 and energy are embedded
    with a conv and added to the hidden sequence before the decoder: per token before the
    length regulator (``variance_level: token``, 1.8's behaviour) or per frame after it
    (``variance_level: frame``).
    """

    config_class = FastSpeech2Config
    serving_outputs = TFFastSpeech.serving_outputs + ("f0_outputs", "energy_outputs")
    legacy_renames = FASTSPEECH2_LEGACY_RENAMES

    def __init__(self, config, **kwargs):
        super().__init__(config, **kwargs)
        config = self.config
        self.f0_predictor = self._variance_predictor("f0_predictor")
        self.energy_predictor = self._variance_predictor("energy_predictor")
        self.f0_embeddings = self._variance_embedding("f0_embeddings")
        self.energy_embeddings = self._variance_embedding("energy_embeddings")
        self.f0_dropout = Dropout(config.variance_embedding_dropout_rate)
        self.energy_dropout = Dropout(config.variance_embedding_dropout_rate)

    # ----------------------------------------------------------------- construction
    def _variance_predictor(self, name):
        config = self.config
        return VariancePredictor(
            config.variant_predictor_filter,
            config.variant_predictor_kernel_size,
            config.variant_prediction_num_conv_layers,
            config.variant_predictor_dropout_rate,
            layer_norm_eps=config.layer_norm_eps,
            activation="relu",
            norm_before_activation=False,
            n_speakers=config.n_speakers,
            hidden_size=config.encoder_hidden_size,
            initializer_range=config.initializer_range,
            name=name,
        )

    def _make_duration_predictor(self):
        return self._variance_predictor("duration_predictor")

    def _variance_embedding(self, name):
        return Conv1D(
            self.config.encoder_hidden_size, VARIANCE_EMBEDDING_KERNEL_SIZE, padding="same", name=name
        )

    def serving_signature(self, batch_size=None):
        return super().serving_signature(batch_size) + [
            tf.TensorSpec([batch_size], tf.float32, name="f0_ratios"),
            tf.TensorSpec([batch_size], tf.float32, name="energy_ratios"),
        ]

    def build_once(self, num_mels=None):
        """Create every weight by calling the model once on a dummy input; returns the model."""
        length = min(10, self.config.max_position_embeddings)
        input_ids = tf.range(1, length + 1, dtype=tf.int32)[tf.newaxis]
        durations = tf.ones([1, length], tf.int32)
        values = tf.fill([1, length], 10.0)  # one per token, or one per frame: as many either way
        self(input_ids, tf.constant([0], tf.int32), durations, values, values, training=False)
        return self

    # ----------------------------------------------------------------- computation
    def _add_variance_embeddings(self, hidden, mask, f0, energy, training):
        """hidden (B, L, C) + conv embeddings of f0 and energy (B, L), L = tokens or frames."""
        value_mask = tf.cast(mask, hidden.dtype)
        # 1.8 kept this dropout on outside training too; see variance_embedding_dropout_at_inference.
        dropout_on = True if self.config.variance_embedding_dropout_at_inference else training
        f0_embedding = self.f0_embeddings(tf.expand_dims(tf.cast(f0, hidden.dtype) * value_mask, 2))
        energy_embedding = self.energy_embeddings(tf.expand_dims(tf.cast(energy, hidden.dtype) * value_mask, 2))
        f0_embedding = self.f0_dropout(f0_embedding, training=dropout_on)
        energy_embedding = self.energy_dropout(energy_embedding, training=dropout_on)
        return hidden + f0_embedding + energy_embedding

    def _variance_adaptor(
        self, encoder_output, mask, speaker_ids, durations, training,
        f0_gts=None, energy_gts=None, f0_ratios=None, energy_ratios=None, num_frames=None,
    ):
        """Predict f0 and energy, add their embeddings and expand tokens to frames.

        Embeds ``f0_gts``/``energy_gts`` when given (teacher forcing), else the predictions
        times ``f0_ratios``/``energy_ratios`` (B,).

        Args: encoder_output (B, T, C_enc), mask (B, T), speaker_ids (B,), durations (B, T).
        Returns: frames (B, F, C_enc), frame_mask (B, F), f0_outputs and energy_outputs
            (B, L): L = T (``variance_level: token``) or F (``frame``).
        """
        if self.config.variance_level == "token":
            hidden, hidden_mask = encoder_output, mask
        else:
            hidden, hidden_mask = self.length_regulator(encoder_output, durations, num_frames)
        f0_outputs = self.f0_predictor(hidden, hidden_mask, speaker_ids, training=training)
        energy_outputs = self.energy_predictor(hidden, hidden_mask, speaker_ids, training=training)
        if f0_gts is None:
            f0_outputs *= tf.cast(f0_ratios, f0_outputs.dtype)[:, tf.newaxis]
            energy_outputs *= tf.cast(energy_ratios, energy_outputs.dtype)[:, tf.newaxis]
            f0_gts, energy_gts = f0_outputs, energy_outputs
        hidden = self._add_variance_embeddings(hidden, hidden_mask, f0_gts, energy_gts, training)
        if self.config.variance_level == "token":
            frames, frame_mask = self.length_regulator(hidden, durations, num_frames)
        else:
            frames = hidden * tf.cast(hidden_mask[:, :, tf.newaxis], hidden.dtype)
            frame_mask = hidden_mask
        return frames, frame_mask, f0_outputs, energy_outputs

    def call(self, input_ids, speaker_ids, duration_gts, f0_gts, energy_gts, training=False, num_frames=None):
        """Teacher-forced pass: frames follow the given durations, f0 and energy.

        Args:
            input_ids: (B, T) int32, 0 = padding.
            speaker_ids: (B,) int32; ignored when ``n_speakers`` is 1.
            duration_gts: (B, T) int32 frames per token (0 at padding).
            f0_gts, energy_gts: (B, T) float32 per token (``variance_level: token``) or
                (B, F) per frame (``variance_level: frame``), normalised.
            training: enables dropout and batch-norm updates.
            num_frames: F, when known (the padded mel length in training): keeps shapes
                static for XLA (`jit_compile`). Default: the largest sum of durations.

        Returns:
            mel_before, mel_after (B, F, num_mels); duration_outputs (B, T), the predicted
            log(1 + frames); f0_outputs, energy_outputs, predictions shaped like the targets.
        """
        encoder_output, mask = self._encode(input_ids, speaker_ids, training)
        duration_outputs = self.duration_predictor(encoder_output, mask, speaker_ids, training=training)
        duration_gts = duration_gts * tf.cast(mask, duration_gts.dtype)
        frames, frame_mask, f0_outputs, energy_outputs = self._variance_adaptor(
            encoder_output, mask, speaker_ids, duration_gts, training, f0_gts=f0_gts, energy_gts=energy_gts,
            num_frames=num_frames,
        )
        mel_before, mel_after = self._decode(frames, frame_mask, speaker_ids, training)
        return mel_before, mel_after, duration_outputs, f0_outputs, energy_outputs

    def _checked_inference(self, input_ids, speaker_ids, speed_ratios, f0_ratios, energy_ratios):
        """`_inference`, refusing a non-positive speed ratio with a clear error."""
        with tf.control_dependencies([self._assert_positive_speed(speed_ratios)]):
            return self._inference(input_ids, speaker_ids, speed_ratios, f0_ratios, energy_ratios)

    def _inference(self, input_ids, speaker_ids, speed_ratios, f0_ratios, energy_ratios):
        """Synthesis with predicted durations, f0 and energy.

        Args:
            input_ids: (B, T) int32, 0 = padding.
            speaker_ids: (B,) int32.
            speed_ratios: (B,) float32 > 0; how much faster to speak (2.0 = twice as fast).
            f0_ratios, energy_ratios: (B,) float32; multiply the predicted f0 / energy.

        Returns:
            mel_before, mel_after (B, F, num_mels); durations (B, T) int32 frames per token,
            round(max(exp(prediction) - 1, 0) / speed_ratio), F = 0 when every one is 0; f0_outputs, energy_outputs
            (B, T) or (B, F): the predictions times their ratios.
        """
        encoder_output, mask = self._encode(input_ids, speaker_ids, training=False)
        log_durations = self.duration_predictor(encoder_output, mask, speaker_ids, training=False)
        durations = self._predicted_frames(log_durations, speed_ratios)
        decoded_frames, num_frames = self._inference_frames(durations)
        frames, frame_mask, f0_outputs, energy_outputs = self._variance_adaptor(
            encoder_output, mask, speaker_ids, durations, False, f0_ratios=f0_ratios, energy_ratios=energy_ratios,
            num_frames=decoded_frames,
        )
        mel_before, mel_after = self._decode(frames, frame_mask, speaker_ids, training=False)
        if self.config.variance_level != "token":  # frame-level predictions cover the decoded frames
            f0_outputs, energy_outputs = f0_outputs[:, :num_frames], energy_outputs[:, :num_frames]
        return to_float32((mel_before[:, :num_frames], mel_after[:, :num_frames], durations, f0_outputs, energy_outputs))
