"""Tacotron 2 (Shen et al., 2018): autoregressive text to mel with location-sensitive attention
(or, with ``attention_type: sma``, stepwise monotonic attention).

The decoder loop is our own `tf.while_loop` (no tensorflow-addons): teacher-forced in
`call`, free-running with a stop token and an iteration limit in `inference`.
"""

import logging
from typing import NamedTuple

import tensorflow as tf

from tensorflow_tts.configs.tacotron2 import Tacotron2Config
from tensorflow_tts.layers.embeddings import TokenEmbedding
from tensorflow_tts.layers.location_attention import (
    LocationSensitiveAttention,
    window_mask,
)
from tensorflow_tts.layers.stepwise_monotonic_attention import (
    StepwiseMonotonicAttention,
)
from tensorflow_tts.layers.zoneout_lstm import ZoneoutLSTMCell
from tensorflow_tts.models.legacy_weights import LegacyWeightsMixin, regex_renamer
from tensorflow_tts.models.serving import ServableModel

logger = logging.getLogger(__name__)

# TensorFlowTTS 1.8 weight names -> ours. Both sides are counter-free (`dense_3` -> `dense`,
# `tf_tacotron_conv_batch_norm_4` -> `tf_tacotron_conv_batch_norm`) and written without the
# model name, which `legacy_renamer` strips from the old name and puts in front of ours.
# Names not matched by any rule are the same in both (encoder/bilstm/..., the prenet's
# dense_._i, frame_projection, stop_projection, residual_projection).
TACOTRON2_LEGACY_RENAMES = [
    (r"^encoder/embeddings/character_embeddings/weight$", "encoder/token_embeddings/embeddings"),
    (r"^encoder/embeddings/speaker_embeddings/", "encoder/speaker_embeddings/"),
    (r"^encoder/embeddings/speaker_fc/", "encoder/speaker_projection/"),
    (r"^encoder/embeddings/LayerNorm/", "encoder/layer_norm/"),
    # 1.8: conv_batch_norm/tf_tacotron_conv_batch_norm_<counter>/conv_._<i>/kernel; the
    # counter is gone after normalisation, the index <i> says which block it is.
    (
        r"^encoder/conv_batch_norm/tf_tacotron_conv_batch_norm/(conv|batch_norm)_\._(\d+)/",
        r"encoder/conv_batch_norm_._\2/\1/",
    ),
    (r"^encoder/encoder_speaker_embeddings/", "encoder/output_speaker_embeddings/"),
    (r"^encoder/encoder_speaker_fc/", "encoder/output_speaker_projection/"),
    # 1.8 built the memory layer when the memory was set up, in the model's scope.
    (r"^LocationSensitiveAttention/memory_layer/", "decoder_cell/attention/memory_layer/"),
    (r"^decoder/decoder_cell/(query_layer|location_conv|location_layer)/", r"decoder_cell/attention/\1/"),
    (r"^decoder/decoder_cell/scores_attention/", "decoder_cell/attention/scores/"),
    (r"^decoder/decoder_cell/attention_lstm_cell/", "decoder_cell/attention_lstm/"),
    (r"^decoder/decoder_cell/decoder_lstms/lstm_cell_\._(\d+)/", r"decoder_cell/decoder_lstm_._\1/"),
    (r"^decoder/decoder_cell/", "decoder_cell/"),  # prenet, frame_projection, stop_projection
    (
        r"^post_net/tf_tacotron_conv_batch_norm/(conv|batch_norm)_\._(\d+)/",
        r"postnet/conv_batch_norm_._\2/\1/",
    ),
]


def legacy_renamer(prefix, renames=TACOTRON2_LEGACY_RENAMES):
    """A renamer for `load_legacy_weights`: "<old model name>/<rest>" -> "<prefix>/<renamed rest>"."""
    return regex_renamer([(r"^[^/]+/", "")] + list(renames) + [(r"^", f"{prefix}/")])


def _activation(name):
    return tf.keras.activations.get("linear" if name == "identity" else name)


def _truncated_normal(stddev):
    return tf.keras.initializers.TruncatedNormal(stddev=stddev)


class ConvBatchNorm(tf.keras.layers.Layer):
    """Conv1D ("same" padding) -> batch norm (synchronised across replicas) -> activation -> dropout."""

    def __init__(self, filters, kernel_size, activation, dropout_rate, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.filters = filters
        self.kernel_size = kernel_size
        self.activation = activation
        self.dropout_rate = dropout_rate
        self.initializer_range = initializer_range
        self.conv = tf.keras.layers.Conv1D(
            filters,
            kernel_size,
            padding="same",
            kernel_initializer=_truncated_normal(initializer_range),
            name="conv",
        )
        # 1.8 used SyncBatchNormalization (= synchronized=True): in training, the statistics
        # span every replica's batch and the variance is E[x^2] - E[x]^2, not the two-pass
        # variance of plain batch norm. The postnet amplifies that rounding difference to
        # ~1e-5 with a 20-frame batch, so we compute it the same way.
        self.batch_norm = tf.keras.layers.BatchNormalization(axis=-1, synchronized=True, name="batch_norm")
        self.dropout = tf.keras.layers.Dropout(dropout_rate)
        self._activation_fn = _activation(activation)

    def call(self, inputs, step_mask=None, training=False):
        """inputs (B, T, C), step_mask optional (B, T) bool -> (B, T, filters).

        With a mask, padded steps are zeroed before the conv, so a padded sequence sees
        the same zeros at its end as an unpadded one.
        """
        if step_mask is not None:
            inputs = inputs * tf.cast(step_mask, inputs.dtype)[:, :, tf.newaxis]
        outputs = self.batch_norm(self.conv(inputs), training=training)
        return self.dropout(self._activation_fn(outputs), training=training)

    def get_config(self):
        config = super().get_config()
        config.update(
            filters=self.filters,
            kernel_size=self.kernel_size,
            activation=self.activation,
            dropout_rate=self.dropout_rate,
            initializer_range=self.initializer_range,
        )
        return config


class Tacotron2Encoder(tf.keras.layers.Layer):
    """Token (+ speaker) embeddings, layer norm, conv stack, BiLSTM (+ speaker features)."""

    def __init__(self, config, **kwargs):
        super().__init__(**kwargs)
        self.config = config
        hidden = config.embedding_hidden_size
        self.token_embeddings = TokenEmbedding(
            config.vocab_size, hidden, config.initializer_range, name="token_embeddings"
        )
        if config.n_speakers > 1:
            self.speaker_embeddings = tf.keras.layers.Embedding(
                config.n_speakers,
                hidden,
                embeddings_initializer=_truncated_normal(config.initializer_range),
                name="speaker_embeddings",
            )
            self.speaker_projection = tf.keras.layers.Dense(hidden, name="speaker_projection")
            self.output_speaker_embeddings = tf.keras.layers.Embedding(
                config.n_speakers,
                hidden,
                embeddings_initializer=_truncated_normal(config.initializer_range),
                name="output_speaker_embeddings",
            )
            self.output_speaker_projection = tf.keras.layers.Dense(
                config.encoder_output_size, name="output_speaker_projection"
            )
        self.layer_norm = tf.keras.layers.LayerNormalization(epsilon=config.layer_norm_eps, name="layer_norm")
        self.dropout = tf.keras.layers.Dropout(config.embedding_dropout_prob)
        self.convs = [
            ConvBatchNorm(
                config.encoder_conv_filters,
                config.encoder_conv_kernel_sizes,
                config.encoder_conv_activation,
                config.encoder_conv_dropout_rate,
                config.initializer_range,
                name=f"conv_batch_norm_._{i}",
            )
            for i in range(config.n_conv_encoder)
        ]
        self.bilstm = tf.keras.layers.Bidirectional(
            tf.keras.layers.LSTM(config.encoder_lstm_units, return_sequences=True), name="bilstm"
        )

    def call(self, input_ids, speaker_ids, input_mask, training=False):
        """input_ids (B, T) int, speaker_ids (B,) int, input_mask (B, T) bool -> (B, T, 2 * encoder_lstm_units)."""
        hidden = self.token_embeddings(input_ids)
        if self.config.n_speakers > 1:
            speaker_ids = tf.cast(speaker_ids, tf.int32)
            hidden += tf.math.softplus(self.speaker_projection(self.speaker_embeddings(speaker_ids)))[:, tf.newaxis]
        hidden = self.dropout(self.layer_norm(hidden), training=training)
        for conv in self.convs:
            hidden = conv(hidden, step_mask=input_mask, training=training)
        outputs = self.bilstm(hidden, mask=input_mask, training=training)
        if self.config.n_speakers > 1:
            features = self.output_speaker_projection(self.output_speaker_embeddings(speaker_ids))
            outputs += tf.math.softplus(features)[:, tf.newaxis]
        return outputs

    def get_config(self):
        config = super().get_config()
        config.update(config=self.config.to_dict())
        return config


class Tacotron2Prenet(tf.keras.layers.Layer):
    """Dense layers with an activation, each followed by dropout.

    The dropout is also applied outside training when ``dropout_at_inference`` (Tacotron 2
    relies on it). Given a ``seed``, the dropout masks are stateless: the same seed gives
    the same masks, in eager mode, in a tf.function and across processes.
    """

    def __init__(self, units, num_layers, activation, dropout_rate, dropout_at_inference=True, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.num_layers = num_layers
        self.activation = activation
        self.dropout_rate = dropout_rate
        self.dropout_at_inference = dropout_at_inference
        self.dense_layers = [
            tf.keras.layers.Dense(units, activation=_activation(activation), name=f"dense_._{i}")
            for i in range(num_layers)
        ]

    def build(self, input_shape):
        size = input_shape[-1]
        for dense in self.dense_layers:
            with tf.name_scope(dense.name):
                dense.build(tf.TensorShape([None, size]))
            size = self.units
        super().build(input_shape)

    def call(self, inputs, training=False, seed=None):
        """inputs (B, D), seed optional (2,) int32 -> (B, units)."""
        use_dropout = (training or self.dropout_at_inference) and self.dropout_rate > 0.0
        outputs = inputs
        for i, dense in enumerate(self.dense_layers):
            outputs = dense(outputs)
            if use_dropout:
                if seed is None:
                    outputs = tf.nn.dropout(outputs, rate=self.dropout_rate)
                else:
                    layer_seed = tf.random.experimental.stateless_fold_in(seed, i)
                    outputs = tf.nn.experimental.stateless_dropout(outputs, rate=self.dropout_rate, seed=layer_seed)
        return outputs

    def get_config(self):
        config = super().get_config()
        config.update(
            units=self.units,
            num_layers=self.num_layers,
            activation=self.activation,
            dropout_rate=self.dropout_rate,
            dropout_at_inference=self.dropout_at_inference,
        )
        return config


class DecoderState(NamedTuple):
    """Everything one decoder step hands to the next (fixed shapes, so it can loop)."""

    attention_lstm: list  # [h, c], each (B, decoder_lstm_units)
    decoder_lstms: list  # one [h, c] per decoder LSTM
    context: tf.Tensor  # (B, E), the previous attention context
    alignments: tf.Tensor  # (B, T), the previous alignment (token 0 before the first step)
    cumulative_alignments: tf.Tensor  # (B, T), sum of the alignments so far


class Tacotron2DecoderCell(tf.keras.layers.Layer):
    """One decoder step: prenet -> attention LSTM -> attention -> decoder LSTMs -> frames, stop logits.

    Sub-layers: ``prenet``, ``attention_lstm``, ``decoder_lstm_._i``, ``attention``,
    ``frame_projection`` (to ``reduction_factor * n_mels``) and ``stop_projection`` (to
    ``reduction_factor`` logits, from the decoder LSTM output and the frames).
    """

    def __init__(self, config, **kwargs):
        super().__init__(**kwargs)
        self.config = config
        self.prenet = Tacotron2Prenet(
            config.prenet_units,
            config.n_prenet_layers,
            config.prenet_activation,
            config.prenet_dropout_rate,
            config.prenet_dropout_at_inference,
            name="prenet",
        )
        self.attention_lstm = ZoneoutLSTMCell(
            config.decoder_lstm_units, config.decoder_zoneout_rate, name="attention_lstm"
        )
        self.decoder_lstms = [
            ZoneoutLSTMCell(config.decoder_lstm_units, config.decoder_zoneout_rate, name=f"decoder_lstm_._{i}")
            for i in range(config.n_lstm_decoder)
        ]
        if config.attention_type == "sma":
            self.attention = StepwiseMonotonicAttention(
                config.attention_dim, config.attention_filters, config.attention_kernel,
                noise_std=config.attention_noise_std, name="attention",
            )
        else:
            self.attention = LocationSensitiveAttention(
                config.attention_dim, config.attention_filters, config.attention_kernel, name="attention"
            )
        self.frame_projection = tf.keras.layers.Dense(
            config.n_mels * config.reduction_factor, name="frame_projection"
        )
        self.stop_projection = tf.keras.layers.Dense(config.reduction_factor, name="stop_projection")

    def build(self, input_shape=None):
        """Every weight follows from the config; ``input_shape`` (B, n_mels) is not needed."""
        config = self.config
        memory_size = config.encoder_output_size
        lstm_units = config.decoder_lstm_units
        frame_size = config.n_mels * config.reduction_factor
        shapes = [
            (self.prenet, [None, config.n_mels]),
            (self.attention_lstm, [None, config.prenet_units + memory_size]),
            (self.attention, ([None, lstm_units], [None, None, memory_size])),
            (self.frame_projection, [None, lstm_units + memory_size]),
            (self.stop_projection, [None, lstm_units + frame_size]),
        ]
        shapes += [(lstm, [None, lstm_units + memory_size]) for lstm in self.decoder_lstms[:1]]
        shapes += [(lstm, [None, lstm_units]) for lstm in self.decoder_lstms[1:]]
        for layer, shape in shapes:
            with tf.name_scope(layer.name):
                layer.build(shape if isinstance(shape, tuple) else tf.TensorShape(shape))
        super().build(input_shape)

    def _initial_alignments(self, batch_size, memory_length, dtype):
        """(B, T): all zeros, or all attention on token 0 (``initial_alignment: first_token``)."""
        if self.config.initial_alignment == "first_token":
            return tf.one_hot(tf.zeros([batch_size], tf.int32), memory_length, dtype=dtype)
        return tf.zeros([batch_size, memory_length], dtype)

    def get_initial_state(self, batch_size, memory_length, dtype=tf.float32):
        """The state before the first step, for a memory of ``memory_length`` steps: zeros, but for the
        cumulative alignment of ``initial_alignment: first_token``."""
        return DecoderState(
            attention_lstm=self.attention_lstm.get_initial_state(batch_size, dtype),
            decoder_lstms=[lstm.get_initial_state(batch_size, dtype) for lstm in self.decoder_lstms],
            context=tf.zeros([batch_size, self.config.encoder_output_size], dtype),
            alignments=tf.one_hot(tf.zeros([batch_size], tf.int32), memory_length, dtype=dtype),
            cumulative_alignments=self._initial_alignments(batch_size, memory_length, dtype),
        )

    def call(self, previous_frame, state, keys, values, memory_mask, training=False, dropout_seed=None, window=None,
             free_running=False):
        """One decoder step.

        Args:
            previous_frame: (B, n_mels), the last frame of the previous step (zeros at step 0).
            state: a `DecoderState`.
            keys, values: (B, T, attention_dim), (B, T, E) from ``attention.process_memory``.
            memory_mask: (B, T) bool, False at padded tokens.
            training: dropout, zoneout masks.
            dropout_seed: optional (2,) int32 for a reproducible prenet dropout.
            window: optional ``(win_front, win_back)``: attend only around the previous peak.
            free_running: the decoder feeds back its own frames (synthesis): a stepwise
                monotonic attention then takes hard stay-or-move decisions.

        Returns:
            frames (B, reduction_factor * n_mels), stop logits (B, reduction_factor),
            alignments (B, T) and the next `DecoderState`.
        """
        prenet_output = self.prenet(previous_frame, training=training, seed=dropout_seed)
        attention_lstm_output, attention_lstm_state = self.attention_lstm(
            tf.concat([prenet_output, state.context], axis=-1), state.attention_lstm, training=training
        )
        allowed = None
        if window is not None:
            peaks = tf.argmax(state.alignments, axis=-1, output_type=tf.int32)
            allowed = window_mask(peaks, tf.shape(keys)[1], window[0], window[1])
        context, alignments = self.attention(
            attention_lstm_output, state.alignments, state.cumulative_alignments, keys, values, memory_mask,
            allowed=allowed, training=training, hard=free_running,
        )
        hidden = tf.concat([attention_lstm_output, context], axis=-1)
        decoder_lstm_states = []
        for lstm, lstm_state in zip(self.decoder_lstms, state.decoder_lstms):
            hidden, lstm_state = lstm(hidden, lstm_state, training=training)
            decoder_lstm_states.append(lstm_state)
        frames = self.frame_projection(tf.concat([hidden, context], axis=-1))
        stop_logits = self.stop_projection(tf.concat([hidden, frames], axis=-1))
        next_state = DecoderState(
            attention_lstm=attention_lstm_state,
            decoder_lstms=decoder_lstm_states,
            context=context,
            alignments=alignments,
            cumulative_alignments=state.cumulative_alignments + alignments,
        )
        return frames, stop_logits, alignments, next_state

    def get_config(self):
        config = super().get_config()
        config.update(config=self.config.to_dict())
        return config


class Tacotron2Postnet(tf.keras.layers.Layer):
    """``n_conv_postnet`` x ConvBatchNorm (tanh, the last one linear), all ``postnet_conv_filters`` wide."""

    def __init__(self, config, **kwargs):
        super().__init__(**kwargs)
        self.config = config
        self.convs = [
            ConvBatchNorm(
                config.postnet_conv_filters,
                config.postnet_conv_kernel_sizes,
                "tanh" if i < config.n_conv_postnet - 1 else "identity",
                config.postnet_dropout_rate,
                config.initializer_range,
                name=f"conv_batch_norm_._{i}",
            )
            for i in range(config.n_conv_postnet)
        ]

    def call(self, mels, step_mask=None, training=False):
        """mels (B, F, n_mels), step_mask optional (B, F) bool -> (B, F, postnet_conv_filters)."""
        outputs = mels
        for conv in self.convs:
            outputs = conv(outputs, step_mask=step_mask, training=training)
        return outputs

    def get_config(self):
        config = super().get_config()
        config.update(config=self.config.to_dict())
        return config


class TFTacotron2(LegacyWeightsMixin, ServableModel, tf.keras.Model):
    """Tacotron 2: token ids -> mel frames, ``reduction_factor`` frames per decoder step.

    * ``model(input_ids, input_lengths, speaker_ids, mel_gts, mel_lengths, training=...)``:
      the teacher-forced pass for training and evaluation.
    * ``model.inference(input_ids, input_lengths, speaker_ids)``: free-running synthesis,
      up to ``model.maximum_iterations`` steps (see `setup_maximum_iterations`,
      `setup_window`, `setup_prenet_dropout`).

    Both return ``(decoder_output, mel_outputs, stop_token_prediction, alignment_history)``:
    frames (B, S * r, n_mels) before and after the postnet, stop logits (B, S * r) and the
    alignments (B, T_in, S), for S decoder steps and r = ``reduction_factor``.
    """

    config_class = Tacotron2Config
    legacy_renames = TACOTRON2_LEGACY_RENAMES  # old weight name -> ours, see legacy_renamer

    def __init__(self, config, **kwargs):
        kwargs.setdefault("name", "tacotron2")
        super().__init__(**kwargs)
        if isinstance(config, dict):
            config = self.config_class.from_dict(config)
        self.config = config
        self.encoder = Tacotron2Encoder(config, name="encoder")
        self.decoder_cell = Tacotron2DecoderCell(config, name="decoder_cell")
        self.postnet = Tacotron2Postnet(config, name="postnet")
        self.residual_projection = tf.keras.layers.Dense(config.n_mels, name="residual_projection")

        # Inference settings (1.8's API); `inference` is re-traced whenever one changes.
        self.maximum_iterations = 4000
        self.window = None  # (win_front, win_back) or None
        self.prenet_seed = None
        self._setup_inference_fn()

    # ------------------------------------------------------------------ inference settings
    def setup_window(self, win_front, win_back):
        """At inference, attend only to tokens ``peak - win_front .. peak + win_back`` of the
        previous step's peak: keeps long sentences from skipping or repeating."""
        self.window = (int(win_front), int(win_back))
        self._setup_inference_fn()

    def setup_maximum_iterations(self, maximum_iterations):
        """At inference, stop after ``maximum_iterations`` decoder steps at the latest."""
        if maximum_iterations < 1:
            raise ValueError(f"maximum_iterations must be at least 1, got {maximum_iterations}")
        self.maximum_iterations = int(maximum_iterations)
        self._setup_inference_fn()

    def setup_prenet_dropout(self, enabled=None, seed=None):
        """Prenet dropout at inference: ``enabled`` switches it (default: the config's
        ``prenet_dropout_at_inference``); an int ``seed`` makes its masks reproducible."""
        if enabled is not None:
            self.decoder_cell.prenet.dropout_at_inference = bool(enabled)
        self.prenet_seed = None if seed is None else int(seed)
        self._setup_inference_fn()

    def _setup_inference_fn(self):
        """`inference` (any batch) and `inference_tflite` (batch 1) as tf.functions, as in 1.8."""
        self.inference = tf.function(
            self._inference, input_signature=self.serving_signature(None), reduce_retracing=True
        )
        self.inference_tflite = tf.function(self._inference_tflite, input_signature=self.serving_signature(1))

    mel_output = "mel_outputs"

    @property
    def num_mels(self):
        return self.config.n_mels

    def serving_signature(self, batch_size=None):
        """input_ids (B, T_in), input_lengths (B,), speaker_ids (B,)."""
        return [
            tf.TensorSpec([batch_size, None], tf.int32, name="input_ids"),
            tf.TensorSpec([batch_size], tf.int32, name="input_lengths"),
            tf.TensorSpec([batch_size], tf.int32, name="speaker_ids"),
        ]

    # ------------------------------------------------------------------------- building
    def build(self, input_shape):
        # The decoder cell is first called inside the decoder's while loop, where no weight
        # may be created; everything else builds on its first call.
        with tf.name_scope(self.decoder_cell.name):
            self.decoder_cell.build(tf.TensorShape([None, self.config.n_mels]))
        self.built = True

    def serve(self, inputs, batch_size=None):
        """The `serving_signature` inputs (a dict) -> {decoder_output, mel_outputs (B, S*r, n_mels),
        stop_logits (B, S*r)} + alignment_history (B, T_in, S) unless batch_size is 1 (TFLite:
        the alignments are left out of the graph)."""
        args = (inputs["input_ids"], inputs["input_lengths"], inputs["speaker_ids"])
        names = ["decoder_output", "mel_outputs", "stop_logits"]
        if batch_size == 1:
            return dict(zip(names, self._inference_tflite(*args)))
        return dict(zip(names + ["alignment_history"], self._inference(*args)))

    def build_once(self, num_mels=None):
        """Create every weight by calling the model once on a dummy input; returns the model."""
        input_ids = tf.constant([[1, 2, 3, 4, 5, 6, 7, 8, 9]], tf.int32)
        mel_gts = tf.zeros([1, 2 * self.config.reduction_factor, self.config.n_mels])
        self(input_ids, tf.constant([9]), tf.constant([0]), mel_gts, tf.constant([mel_gts.shape[1]]), training=False)
        return self

    # ---------------------------------------------------------------------- computation
    def _encode(self, input_ids, input_lengths, speaker_ids, training):
        """-> keys (B, T, attention_dim), values (B, T, E), input_mask (B, T) bool."""
        input_ids = tf.cast(input_ids, tf.int32)
        input_mask = tf.sequence_mask(input_lengths, tf.shape(input_ids)[1])
        memory = self.encoder(input_ids, speaker_ids, input_mask, training=training)
        keys, values = self.decoder_cell.attention.process_memory(memory, input_mask)
        return keys, values, input_mask

    def _decode(self, keys, values, memory_mask, training, targets=None, teacher_forcing_ratio=1.0,
                maximum_iterations=None, window=None, prenet_seed=None, keep_alignments=True):
        """Run the decoder loop.

        With ``targets`` (B, F, n_mels) it teacher-forces: step 0 gets a zero frame and step
        t + 1 gets ``ratio * targets[:, r*t + r-1] + (1 - ratio) * (own last frame)``, for
        ceil(F / r) steps. Without, it feeds back its own last frame and stops when every
        sequence has predicted a stop or after ``maximum_iterations`` steps.

        Returns:
            frames (B, S * r, n_mels), stop logits (B, S * r), alignments (B, T, S) (None
            unless ``keep_alignments``: their element shape depends on T, which TFLite's
            builtin tensor lists do not allow).
        """
        config = self.config
        r, n_mels = config.reduction_factor, config.n_mels
        batch_size, memory_length = tf.shape(keys)[0], tf.shape(keys)[1]
        dtype = values.dtype
        teacher = targets is not None
        if teacher:
            targets = tf.cast(targets, dtype)
            num_frames = tf.shape(targets)[1]
            max_steps = (num_frames + r - 1) // r
            targets = tf.pad(targets, [[0, 0], [0, max_steps * r - num_frames], [0, 0]])
            teacher_frames = targets[:, r - 1 :: r]  # (B, S, n_mels): what step t + 1 gets
        else:
            max_steps = tf.constant(maximum_iterations, tf.int32)
        mix = not (isinstance(teacher_forcing_ratio, (int, float)) and teacher_forcing_ratio == 1.0)
        seed = None if prenet_seed is None else tf.cast(tf.stack([prenet_seed, 0]), tf.int32)

        def body(step, frame, state, finished, arrays):
            step_seed = None if seed is None else tf.random.experimental.stateless_fold_in(seed, step)
            frames, stop_logits, alignments, state = self.decoder_cell(
                frame, state, keys, values, memory_mask, training=training, dropout_seed=step_seed, window=window,
                free_running=not teacher,
            )
            outputs = (frames, stop_logits, alignments)
            arrays = tuple(array.write(step, output) for array, output in zip(arrays, outputs))
            own_frame = frames[:, -n_mels:]
            if teacher:
                target = tf.gather(teacher_frames, tf.minimum(step, max_steps - 1), axis=1)
                frame = teacher_forcing_ratio * target + (1.0 - teacher_forcing_ratio) * own_frame if mix else target
            else:
                frame = own_frame
                stopped = tf.reduce_all(tf.sigmoid(stop_logits) > config.stop_threshold, axis=-1)
                finished = tf.logical_or(finished, stopped)
            return step + 1, frame, state, finished, arrays

        def cond(step, frame, state, finished, arrays):
            return tf.logical_and(step < max_steps, tf.logical_not(tf.reduce_all(finished)))

        def array(size):
            # Fixed size and, with a static batch (`inference_tflite`), a fully static element
            # shape: what TFLite's builtin tensor-list lowering needs.
            return tf.TensorArray(dtype, size=max_steps, element_shape=tf.TensorShape([keys.shape[0], size]))

        loop_vars = (
            tf.constant(0, tf.int32),
            tf.zeros([batch_size, n_mels], dtype),
            self.decoder_cell.get_initial_state(batch_size, memory_length, dtype),
            tf.zeros([batch_size], tf.bool),
            (array(r * n_mels), array(r)) + ((array(None),) if keep_alignments else ()),
        )
        steps, _, _, _, arrays = tf.while_loop(cond, body, loop_vars, maximum_iterations=max_steps)
        # (S, B, ...) -> (B, S, ...), only the S steps actually run. Teacher-forced, every
        # step runs, and stack is what XLA can differentiate. Otherwise unwritten elements
        # stack as zeros only with a fully known element shape; gather needs no such thing
        # but is no TFLite builtin.
        arrays = [
            array.stack() if teacher
            else array.stack()[:steps] if array.element_shape.is_fully_defined()
            else array.gather(tf.range(steps))
            for array in arrays
        ]
        frames = tf.reshape(tf.transpose(arrays[0], [1, 0, 2]), [batch_size, -1, n_mels])
        stop_logits = tf.reshape(tf.transpose(arrays[1], [1, 0, 2]), [batch_size, -1])
        alignments = tf.transpose(arrays[2], [1, 2, 0]) if keep_alignments else None
        return frames, stop_logits, alignments

    def _postnet(self, decoder_output, step_mask, training):
        residual = self.residual_projection(self.postnet(decoder_output, step_mask=step_mask, training=training))
        return decoder_output + residual

    def call(self, input_ids, input_lengths, speaker_ids, mel_gts, mel_lengths=None, training=False,
             teacher_forcing_ratio=1.0, maximum_iterations=None, prenet_seed=None):
        """Teacher-forced pass (training and evaluation).

        Args:
            input_ids: (B, T_in) int32 token ids.
            input_lengths: (B,) int32; tokens past a length are padding.
            speaker_ids: (B,) int32; ignored when ``n_speakers`` is 1.
            mel_gts: (B, F, n_mels) ground-truth frames, fed back with one step's delay.
            mel_lengths: (B,) int32 or None; frames past a length are zeroed before each
                postnet conv (their outputs are not meaningful, mask them in the loss).
            training: dropout, batch-norm batch statistics, zoneout masks.
            teacher_forcing_ratio: scalar; 1 feeds the ground truth, less mixes in the
                model's own previous frame (scheduled teacher forcing, as in 1.8).
            maximum_iterations: only with ``legacy_free_running_eval`` and training off
                (default ``self.maximum_iterations``).
            prenet_seed: optional int (or int32 scalar) for reproducible prenet dropout.

        Returns:
            decoder_output (B, S*r, n_mels), mel_outputs (B, S*r, n_mels) = decoder_output
            + postnet residual, stop_token_prediction (B, S*r) logits, alignment_history
            (B, T_in, S); S = ceil(F / r) decoder steps, r = ``reduction_factor``. With
            ``legacy_free_running_eval`` and training off, S is the number of free-running
            steps instead (1.8's evaluation call).
        """
        keys, values, input_mask = self._encode(input_ids, input_lengths, speaker_ids, training)
        if self.config.legacy_free_running_eval and not training:
            decoder_output, stop_logits, alignments = self._decode(
                keys, values, input_mask, training,
                maximum_iterations=maximum_iterations or self.maximum_iterations,
                prenet_seed=prenet_seed,
            )
            step_mask = None
        else:
            decoder_output, stop_logits, alignments = self._decode(
                keys, values, input_mask, training,
                targets=mel_gts,
                teacher_forcing_ratio=teacher_forcing_ratio,
                prenet_seed=prenet_seed,
            )
            step_mask = None
            if mel_lengths is not None:
                step_mask = tf.sequence_mask(mel_lengths, tf.shape(decoder_output)[1])
        mel_outputs = self._postnet(decoder_output, step_mask, training)
        return decoder_output, mel_outputs, stop_logits, alignments

    def _inference_tflite(self, input_ids, input_lengths, speaker_ids):
        """`_inference` for a batch of 1 without the alignments, convertible to builtin TFLite ops.

        Returns decoder_output (1, S*r, n_mels), mel_outputs (1, S*r, n_mels) and the stop
        logits (1, S*r).
        """
        return self._inference(input_ids, input_lengths, speaker_ids, keep_alignments=False)[:3]

    def _inference(self, input_ids, input_lengths, speaker_ids, keep_alignments=True):
        """Free-running synthesis.

        Args:
            input_ids: (B, T_in) int32; input_lengths: (B,) int32; speaker_ids: (B,) int32.

        Returns:
            decoder_output (B, S*r, n_mels), mel_outputs (B, S*r, n_mels), stop logits
            (B, S*r) and alignment_history (B, T_in, S). Decoding stops once every sequence
            has predicted a stop (sigmoid > ``stop_threshold`` for all r frames of a step)
            or after ``maximum_iterations`` steps; in a batch, a sequence that stopped
            earlier keeps being decoded: cut it at its first stop.
        """
        if not self.built:
            self.build_once()
        keys, values, input_mask = self._encode(input_ids, input_lengths, speaker_ids, training=False)
        decoder_output, stop_logits, alignments = self._decode(
            keys, values, input_mask, training=False,
            maximum_iterations=self.maximum_iterations,
            window=self.window,
            prenet_seed=self.prenet_seed,
            keep_alignments=keep_alignments,
        )
        mel_outputs = self._postnet(decoder_output, None, training=False)
        return decoder_output, mel_outputs, stop_logits, alignments

    # ---------------------------------------------------------------------------- weights
    def _legacy_renamer(self, prefix, filepath):
        return legacy_renamer(prefix, self.legacy_renames)

    def get_config(self):
        return {"config": self.config.to_dict(), "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(cls.config_class.from_dict(config["config"]), name=config.get("name"))
