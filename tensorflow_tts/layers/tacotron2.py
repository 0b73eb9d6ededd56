"""Tacotron 2's encoder, prenet and one-step decoder cell; `models/tacotron2.py` runs the
decoder loop around the cell and adds the postnet (`layers/postnet.py`)."""

from typing import NamedTuple

import tensorflow as tf

from tensorflow_tts.layers import bilstm
from tensorflow_tts.layers.checkpointing import run_block
from tensorflow_tts.layers.dense import Dense
from tensorflow_tts.layers.dropout import Dropout
from tensorflow_tts.layers.embeddings import TokenEmbedding, truncated_normal
from tensorflow_tts.layers.location_attention import (
    LocationSensitiveAttention,
    window_mask,
)
from tensorflow_tts.layers.postnet import ConvBatchNorm, keras_activation
from tensorflow_tts.layers.stepwise_monotonic_attention import (
    StepwiseMonotonicAttention,
)
from tensorflow_tts.layers.zoneout_lstm import ZoneoutLSTMCell
from tensorflow_tts.utils.step_random import step_seed


class Tacotron2Encoder(tf.keras.layers.Layer):
    """Token (+ speaker) embeddings, layer norm, conv stack, BiLSTM (+ speaker features).

    With ``gradient_checkpointing``, training recomputes the activations of each conv unit
    and of the BiLSTM in the backward pass (`layers.checkpointing`).
    """

    gradient_checkpointing = False

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
                embeddings_initializer=truncated_normal(config.initializer_range),
                name="speaker_embeddings",
            )
            self.speaker_projection = Dense(hidden, name="speaker_projection")
            self.output_speaker_embeddings = tf.keras.layers.Embedding(
                config.n_speakers,
                hidden,
                embeddings_initializer=truncated_normal(config.initializer_range),
                name="output_speaker_embeddings",
            )
            self.output_speaker_projection = Dense(
                config.encoder_output_size, name="output_speaker_projection"
            )
        self.layer_norm = tf.keras.layers.LayerNormalization(epsilon=config.layer_norm_eps, name="layer_norm")
        self.dropout = Dropout(config.embedding_dropout_prob)
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
        recompute = self.gradient_checkpointing
        for conv in self.convs:
            hidden = run_block(conv, hidden, input_mask, training=training, recompute=recompute)
        if not training and bilstm.loop_form(self.bilstm):
            outputs = bilstm.bidirectional_lstm(self.bilstm, hidden, input_mask)
        else:
            outputs = run_block(self.bilstm, hidden, training=training, recompute=recompute, mask=input_mask)
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
            Dense(units, activation=keras_activation(activation), name=f"dense_._{i}")
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
    # (B, E), the previous attention context; with a `MemoryProjection`, (B, T): the weights
    # over the memory that made it (zeros before the first step)
    context: tf.Tensor
    alignments: tf.Tensor  # (B, T), the previous alignment (token 0 before the first step)
    cumulative_alignments: tf.Tensor  # (B, T), sum of the alignments so far


class MemoryProjection(NamedTuple):
    """The decoder's products with its attention context, taken out of the loop (inference).

    A step's context is ``weights @ values`` (B, T) x (B, T, E), and it enters three products:
    with the attention LSTM's kernel rows for it (next step), the first decoder LSTM's and
    the frame projection's. Since ``(weights @ values) @ W = weights @ (values @ W)``, the
    values times those rows, computed once per utterance, leave each step products over T
    rows where W has E: with T < E a step reads fewer weights (the class defaults: 4.1 MB
    in place of 17.6 MB of its 75 MB at T = 120, E = 512). The same sums in another order:
    equal up to float rounding. `Tacotron2DecoderCell.project_memory` makes one.
    """

    attention_kernel: tf.Tensor  # (prenet units, 4 U): the attention LSTM's kernel rows for the prenet output
    attention_memory: tf.Tensor  # (B, T, 4 U): values @ its rows for the context
    decoder_kernel: tf.Tensor  # (U, 4 U): the first decoder LSTM's kernel rows for the attention LSTM output
    frame_kernel: tf.Tensor  # (U, r * n_mels): the frame projection's rows for the decoder output
    # (B, T, 4 U + r * n_mels): values @ [the first decoder LSTM's rows | the frame projection's rows] for the context
    decoder_memory: tf.Tensor


def _weighted(weights, memory):
    """weights (B, T), memory (B, T, N) or, for B = 1, (N, T) -> (B, N), the weighted sum over T."""
    if memory.shape.rank == 2:
        return tf.matmul(weights, memory, transpose_b=True)
    return tf.squeeze(tf.matmul(weights[:, tf.newaxis, :], memory), 1)


def _memory_product(values, rows):
    """values (B, T, E) @ rows (E, N): (B, T, N), or (N, T) for a static B of 1 (`_weighted`)."""
    if values.shape[0] == 1:
        return tf.reshape(tf.transpose(tf.matmul(tf.squeeze(values, 0), rows)), [rows.shape[-1], -1])
    return tf.matmul(values, rows)


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
        self.frame_projection = Dense(
            config.n_mels * config.reduction_factor, name="frame_projection"
        )
        self.stop_projection = Dense(config.reduction_factor, name="stop_projection")

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

    def get_initial_state(self, batch_size, memory_length, dtype=tf.float32, projected=False):
        """The state before the first step, for a memory of ``memory_length`` steps: zeros, but for the
        cumulative alignment of ``initial_alignment: first_token``. ``projected``: the state for steps
        with a `MemoryProjection` (the context as weights over the memory)."""
        return DecoderState(
            attention_lstm=self.attention_lstm.get_initial_state(batch_size, dtype),
            decoder_lstms=[lstm.get_initial_state(batch_size, dtype) for lstm in self.decoder_lstms],
            context=tf.zeros([batch_size, memory_length if projected else self.config.encoder_output_size], dtype),
            alignments=tf.one_hot(tf.zeros([batch_size], tf.int32), memory_length, dtype=dtype),
            cumulative_alignments=self._initial_alignments(batch_size, memory_length, dtype),
        )

    def project_memory(self, values):
        """values (B, T, E) from ``attention.process_memory`` -> the `MemoryProjection` of one utterance."""
        prenet_units, units = self.config.prenet_units, self.config.decoder_lstm_units
        attention_kernel, decoder_kernel, frame_kernel = (
            tf.cast(layer.kernel, values.dtype) for layer in (self.attention_lstm, self.decoder_lstms[0], self.frame_projection))
        context_rows = tf.concat([decoder_kernel[units:], frame_kernel[units:]], axis=1)  # (E, 4 U + r * n_mels)
        return MemoryProjection(
            attention_kernel=attention_kernel[:prenet_units],
            attention_memory=_memory_product(values, attention_kernel[prenet_units:]),
            decoder_kernel=decoder_kernel[:units],
            frame_kernel=frame_kernel[:units],
            decoder_memory=_memory_product(values, context_rows),
        )

    def call(self, previous_frame, state, keys, values, memory_mask, training=False, dropout_seed=None, window=None,
             free_running=False, projection=None):
        """One decoder step.

        Args:
            previous_frame: (B, n_mels), the last frame of the previous step (zeros at step 0).
            state: a `DecoderState`.
            keys, values: (B, T, attention_dim), (B, T, E) from ``attention.process_memory``.
            memory_mask: (B, T) bool, False at padded tokens.
            training: dropout, zoneout masks.
            dropout_seed: optional (2,) int32 for a reproducible prenet dropout (and, in
                training, zoneout and attention noise).
            window: optional ``(win_front, win_back)``: attend only around the previous peak.
            free_running: the decoder feeds back its own frames (synthesis): a stepwise
                monotonic attention then takes hard stay-or-move decisions.
            projection: optional `MemoryProjection` of ``values`` (inference; ``state``
                then holds the context as weights, see `get_initial_state`).

        Returns:
            frames (B, reduction_factor * n_mels), stop logits (B, reduction_factor),
            alignments (B, T) and the next `DecoderState`.
        """
        prenet_output = self.prenet(previous_frame, training=training, seed=dropout_seed)
        # Zoneout and attention noise draw from a seed of their own, beside the prenet layers'.
        with step_seed(None if dropout_seed is None else tf.random.experimental.stateless_fold_in(dropout_seed, -1)):
            return self._after_prenet(prenet_output, state, keys, values, memory_mask, training, window, free_running,
                                      projection)

    def _after_prenet(self, prenet_output, state, keys, values, memory_mask, training, window, free_running,
                      projection):
        """The rest of `call` from the prenet output (B, prenet units); returns what `call` returns."""
        if projection is None:
            attention_lstm_output, attention_lstm_state = self.attention_lstm(
                tf.concat([prenet_output, state.context], axis=-1), state.attention_lstm, training=training
            )
        else:
            attention_lstm_output, attention_lstm_state = self.attention_lstm.step(
                tf.matmul(prenet_output, projection.attention_kernel) + _weighted(state.context, projection.attention_memory),
                state.attention_lstm, training=training,
            )
        allowed = None
        if window is not None:
            peaks = tf.argmax(state.alignments, axis=-1, output_type=tf.int32)
            allowed = window_mask(peaks, tf.shape(keys)[1], window[0], window[1])
        context, alignments = self.attention(
            attention_lstm_output, state.alignments, state.cumulative_alignments, keys, values, memory_mask,
            allowed=allowed, training=training, hard=free_running,
        )
        hidden = tf.concat([attention_lstm_output, context], axis=-1) if projection is None else attention_lstm_output
        decoder_lstm_states = []
        for i, (lstm, lstm_state) in enumerate(zip(self.decoder_lstms, state.decoder_lstms)):
            if i == 0 and projection is not None:
                lstm_term, frame_term = tf.split(
                    _weighted(alignments, projection.decoder_memory), [4 * lstm.units, projection.frame_kernel.shape[-1]], -1)
                hidden, lstm_state = lstm.step(tf.matmul(hidden, projection.decoder_kernel) + lstm_term, lstm_state, training)
            else:
                hidden, lstm_state = lstm(hidden, lstm_state, training=training)
            decoder_lstm_states.append(lstm_state)
        if projection is None:
            frames = self.frame_projection(tf.concat([hidden, context], axis=-1))
        else:
            frame_bias = tf.cast(self.frame_projection.bias, hidden.dtype)
            frames = tf.nn.bias_add(tf.matmul(hidden, projection.frame_kernel) + frame_term, frame_bias)
        stop_logits = self.stop_projection(tf.concat([hidden, frames], axis=-1))
        next_state = DecoderState(
            attention_lstm=attention_lstm_state,
            decoder_lstms=decoder_lstm_states,
            context=context if projection is None else alignments,
            alignments=alignments,
            cumulative_alignments=state.cumulative_alignments + alignments,
        )
        return frames, stop_logits, alignments, next_state

    def get_config(self):
        config = super().get_config()
        config.update(config=self.config.to_dict())
        return config
