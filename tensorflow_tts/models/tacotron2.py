"""Tacotron 2 (Shen et al., 2018): autoregressive text to mel with location-sensitive attention
(or, with ``attention_type: sma``, stepwise monotonic attention).

The decoder loop is our own `tf.while_loop` (no tensorflow-addons): teacher-forced in
`call`, free-running with a stop token and an iteration limit in `inference`. The blocks
it composes (encoder, prenet, decoder cell, postnet) live in `layers/tacotron2.py` and
`layers/postnet.py`. Free-running, a step's products with the attention context are taken
out of the loop where that reads fewer weights per step (`layers.tacotron2.MemoryProjection`).
"""

import logging

import tensorflow as tf

from tensorflow_tts.configs.tacotron2 import Tacotron2Config
from tensorflow_tts.layers.dense import Dense

# ConvBatchNorm, Tacotron2Prenet and DecoderState are not used here: imported so that their
# old path, tensorflow_tts.models.tacotron2, keeps working.
from tensorflow_tts.layers.postnet import ConvBatchNorm, Tacotron2Postnet  # noqa: F401
from tensorflow_tts.layers.tacotron2 import (  # noqa: F401
    DecoderState,
    Tacotron2DecoderCell,
    Tacotron2Encoder,
    Tacotron2Prenet,
)
from tensorflow_tts.models.legacy_weights import LegacyWeightsMixin, regex_renamer
from tensorflow_tts.models.serving import ServableModel
from tensorflow_tts.utils.precision import stored_weights, to_float32
from tensorflow_tts.utils.step_random import next_seed

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
        self.residual_projection = Dense(config.n_mels, name="residual_projection")

        # Inference settings (1.8's API); `inference` is re-traced whenever one changes.
        self.maximum_iterations = 4000
        self.window = None  # (win_front, win_back) or None
        self.prenet_seed = None
        self.memory_projection = True  # see setup_memory_projection
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

    def setup_memory_projection(self, enabled=True):
        """Free-running steps take the attention context's products out of the loop where that
        reads less per step (`Tacotron2DecoderCell.project_memory`; on by default); False keeps
        them in it, as in training: the same values up to float rounding, for comparisons."""
        self.memory_projection = bool(enabled)
        self._setup_inference_fn()

    def _setup_inference_fn(self):
        """`inference` (any batch) and `inference_tflite` (batch 1) as tf.functions, as in 1.8."""
        self.inference = tf.function(
            self._inference, input_signature=self.serving_signature(None), reduce_retracing=True, autograph=False
        )
        self.inference_tflite = tf.function(
            self._inference_tflite, input_signature=self.serving_signature(1), autograph=False
        )

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
        ceil(F / r) steps (at most ``maximum_iterations`` when given). Without, it feeds back its own last frame and stops when every
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
            if maximum_iterations is not None:
                max_steps = tf.minimum(max_steps, tf.cast(maximum_iterations, tf.int32))
        else:
            max_steps = tf.constant(maximum_iterations, tf.int32)
        mix = not (isinstance(teacher_forcing_ratio, (int, float)) and teacher_forcing_ratio == 1.0)
        if prenet_seed is None:
            seed = next_seed() if training is True else None  # the training step's seed, so a resume repeats it
        else:
            seed = tf.cast(tf.stack([prenet_seed, 0]), tf.int32)

        def body(step, frame, state, finished, arrays, projection):
            step_seed = None if seed is None else tf.random.experimental.stateless_fold_in(seed, step)
            frames, stop_logits, alignments, state = self.decoder_cell(
                frame, state, keys, values, memory_mask, training=training, dropout_seed=step_seed, window=window,
                free_running=not teacher, projection=projection,
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

        def loop(projection=None):
            """(frames, stop logits, alignments) of the loop, with or without a `MemoryProjection`."""
            loop_vars = (
                tf.constant(0, tf.int32),
                tf.zeros([batch_size, n_mels], dtype),
                self.decoder_cell.get_initial_state(batch_size, memory_length, dtype, projected=projection is not None),
                tf.zeros([batch_size], tf.bool),
                (array(r * n_mels), array(r)) + ((array(None),) if keep_alignments else ()),
            )
            steps, _, _, _, arrays = tf.while_loop(
                cond, lambda *loop_vars: body(*loop_vars, projection), loop_vars, maximum_iterations=max_steps)
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

        def array(size):
            # Fixed size and, with a static batch (`inference_tflite`), a fully static element
            # shape: what TFLite's builtin tensor-list lowering needs.
            return tf.TensorArray(dtype, size=max_steps, element_shape=tf.TensorShape([keys.shape[0], size]))

        if teacher or training or not self.memory_projection or stored_weights() == "int8":
            return loop()
        # Free-running inference over float weights: the context's products move out of the
        # loop where that reads less per step (`Tacotron2DecoderCell.project_memory`): B * T < E.
        # (In an int8 file the rows take a quarter of the bytes of the float projected memory:
        # its steps took 1.11x the time with it.)
        if keys.shape[0] == 1:
            # A static batch of one (`inference_tflite`) takes the projected loop for any T: a
            # TFLite file with both loops would hold most decoder weights twice (+33 % on disk).
            return loop(self.decoder_cell.project_memory(values))
        def outputs(projected):  # tf.cond's branches return tensors only: no None for the alignments
            found = loop(self.decoder_cell.project_memory(values) if projected else None)
            return [output for output in found if output is not None]

        frames, stop_logits, *alignments = tf.cond(
            batch_size * memory_length < config.encoder_output_size, lambda: outputs(True), lambda: outputs(False))
        return frames, stop_logits, alignments[0] if keep_alignments else None

    def _postnet(self, decoder_output, step_mask, training):
        residual = self.residual_projection(self.postnet(decoder_output, step_mask=step_mask, training=training))
        return decoder_output + residual

    def call(self, input_ids, input_lengths, speaker_ids, mel_gts, mel_lengths=None, maximum_iterations=None,
             use_window_mask=False, win_front=2, win_back=3, training=False, teacher_forcing_ratio=1.0,
             prenet_seed=None):
        """Teacher-forced pass (training and evaluation); the arguments up to ``training`` keep 1.8's order.

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
            maximum_iterations: at most this many decoder steps (None: ceil(F / r)); with
                ``legacy_free_running_eval`` and training off, the free-running cap
                (default ``self.maximum_iterations``).
            use_window_mask, win_front, win_back: attend only to tokens ``peak - win_front
                .. peak + win_back`` of the previous step's peak (see `setup_window`).
            prenet_seed: optional int (or int32 scalar) for reproducible prenet dropout.

        Returns:
            decoder_output (B, S*r, n_mels), mel_outputs (B, S*r, n_mels) = decoder_output
            + postnet residual, stop_token_prediction (B, S*r) logits, alignment_history
            (B, T_in, S); S = ceil(F / r) decoder steps, r = ``reduction_factor``. With
            ``legacy_free_running_eval`` and training off, S is the number of free-running
            steps instead (1.8's evaluation call).
        """
        keys, values, input_mask = self._encode(input_ids, input_lengths, speaker_ids, training)
        window = (int(win_front), int(win_back)) if use_window_mask else None
        if self.config.legacy_free_running_eval and not training:
            decoder_output, stop_logits, alignments = self._decode(
                keys, values, input_mask, training,
                maximum_iterations=maximum_iterations or self.maximum_iterations,
                window=window,
                prenet_seed=prenet_seed,
            )
            step_mask = None
        else:
            decoder_output, stop_logits, alignments = self._decode(
                keys, values, input_mask, training,
                targets=mel_gts,
                teacher_forcing_ratio=teacher_forcing_ratio,
                maximum_iterations=maximum_iterations,
                window=window,
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
        return to_float32((decoder_output, mel_outputs, stop_logits, alignments))

    # ---------------------------------------------------------------------------- weights
    def _legacy_renamer(self, prefix, filepath):
        return legacy_renamer(prefix, self.legacy_renames)

    def get_config(self):
        return {"config": self.config.to_dict(), "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(cls.config_class.from_dict(config["config"]), name=config.get("name"))
