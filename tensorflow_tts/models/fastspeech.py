"""FastSpeech (Ren et al., 2019): non-autoregressive text to mel with a duration predictor."""

import dataclasses
import re
from collections import defaultdict

import h5py
import tensorflow as tf

from tensorflow_tts.configs.fastspeech import FastSpeechConfig
from tensorflow_tts.layers.dense import Dense
from tensorflow_tts.layers.embeddings import (
    PositionEmbedding,
    SpeakerEmbedding,
    TokenEmbedding,
    position_ids,
)
from tensorflow_tts.layers.fft_block import FFTStack
from tensorflow_tts.layers.length_regulator import LengthRegulator
from tensorflow_tts.layers.postnet import Postnet
from tensorflow_tts.layers.variance_predictor import VariancePredictor
from tensorflow_tts.models.legacy_weights import (
    LegacyWeightsMixin,
    normalize_weight_name,
)
from tensorflow_tts.models.serving import ServableModel
from tensorflow_tts.utils.precision import to_float32

# Old TensorFlowTTS 1.8 weight paths -> ours, both without Keras counters ("dense_3" ->
# "dense") and without the model name. An old path is "<group>/<rest>", where <group> is
# the model attribute's HDF5 group; see `legacy_renamer` for how it is formed.
FASTSPEECH_LEGACY_RENAMES = [
    (r"^embeddings/charactor_embeddings/weight$", "token_embeddings/embeddings"),
    (r"^embeddings/speaker_embeddings/embeddings$", "encoder_speaker_embedding/embedding/embeddings"),
    (r"^embeddings/speaker_fc/", "encoder_speaker_embedding/projection/"),
    (r"^(encoder|decoder)/(layer_\._\d+)/attention/self/", r"\1/\2/self_attention/"),
    (r"^(encoder|decoder)/(layer_\._\d+)/attention/output/dense/", r"\1/\2/self_attention/output/"),
    (r"^(encoder|decoder)/(layer_\._\d+)/attention/output/LayerNorm/", r"\1/\2/attention_norm/"),
    # conv1d_1 and conv1d_2 both lose their number with the counters; `legacy_renamer`
    # tells them apart by order (kernel, bias of conv1d_1 come first).
    (r"^(encoder|decoder)/(layer_\._\d+)/intermediate/conv1d/", r"\1/\2/feed_forward/"),
    (r"^(encoder|decoder)/(layer_\._\d+)/output/LayerNorm/", r"\1/\2/output_norm/"),
    (r"^decoder/speaker_embeddings/embeddings$", "decoder_speaker_embedding/embedding/embeddings"),
    (r"^decoder/speaker_fc/", "decoder_speaker_embedding/projection/"),
    (r"^decoder/project_compatible_decoder/", "decoder_projection/"),
    # mel_before/{kernel,bias} and postnet/{conv,batch_norm}_._i/... keep their names.
    (r"^(duration_predictor|f0_predictor|energy_predictor)/LayerNorm_\._(\d+)/", r"\1/norm_._\2/"),
    (r"^(duration_predictor|f0_predictor|energy_predictor)/dense/", r"\1/projection/"),
    (
        r"^(duration_predictor|f0_predictor|energy_predictor)/speaker_embeddings/embeddings$",
        r"\1/speaker_embedding/embedding/embeddings",
    ),
    (r"^(duration_predictor|f0_predictor|energy_predictor)/speaker_fc/", r"\1/speaker_embedding/projection/"),
]
# 1.8 stored the sinusoidal tables as weights; ours are computed from the config.
FASTSPEECH_LEGACY_IGNORED = [r"(embeddings|decoder)/position_embeddings/embeddings"]


def _legacy_groups(path):
    """Counter-free weight name -> the HDF5 groups holding it, in load order.

    The loader hands a renamer only the weight name, and the variance predictors' convs
    and norms are stored as bare "conv_._0/kernel" in each predictor's group.
    """
    groups = defaultdict(list)
    with h5py.File(path, "r") as h5:
        for group in h5.attrs["layer_names"]:
            group = group.decode() if isinstance(group, bytes) else str(group)
            for weight in h5[group].attrs.get("weight_names", []):
                weight = weight.decode() if isinstance(weight, bytes) else str(weight)
                groups[normalize_weight_name(weight)].append(group)
    return groups


def legacy_renamer(prefix, path, renames=FASTSPEECH_LEGACY_RENAMES, ignored=FASTSPEECH_LEGACY_IGNORED):
    """A renamer for `load_legacy_weights` mapping the old file ``path`` onto our model.

    An old weight is named "<old model name>/<group>/<rest>" (the old model name is
    whatever the model was built with, usually "tf_fast_speech2") or, for the variance
    predictors' convs and norms, just "<rest>" inside <group>. Both become "<group>/<rest>",
    go through ``renames`` and get ``prefix`` (our model name, without counters) in front.
    """
    groups = _legacy_groups(path)
    rules = [(re.compile(pattern), replacement) for pattern, replacement in renames]
    ignored = [re.compile(pattern) for pattern in ignored]

    def rename(name, occurrence):
        group = groups[name][occurrence]
        parts = name.split("/")
        relative = "/".join(parts[1:]) if len(parts) > 2 and parts[1] == group else f"{group}/{name}"
        if any(pattern.fullmatch(relative) for pattern in ignored):
            return None
        for pattern, replacement in rules:
            relative = pattern.sub(replacement, relative)
        if "/feed_forward/" in relative:
            relative = relative.replace("/feed_forward/", "/feed_forward_in/" if occurrence == 0 else "/feed_forward_out/")
        return f"{prefix}/{relative}"

    return rename


def bucketed_size(size, steps_per_octave):
    """A scalar int32 size > 0 rounded up to one of `steps_per_octave` sizes per octave.

    The graph form of `inference.batching.bucket` (the same sizes): sizes up to
    2 * steps_per_octave stay as they are; above, the step is 1 / steps_per_octave of the
    power of two below the size, so at most that share is added.
    """
    powers = tf.constant([1 << i for i in range(31)], tf.int32)
    bit_length = tf.reduce_sum(tf.cast(powers <= size - 1, tf.int32))  # of size - 1
    step = tf.maximum(tf.gather(powers, tf.maximum(bit_length - 1, 0)) // steps_per_octave, 1)
    rounded = (size + step - 1) // step * step
    return tf.where(size <= 2 * steps_per_octave, size, rounded)


class TFFastSpeech(LegacyWeightsMixin, ServableModel, tf.keras.Model):
    """FastSpeech: token ids -> mel frames, with durations from a predictor or given.

    Structure: token + sinusoidal position (+ speaker) embeddings, an FFT-block encoder,
    a duration predictor, the length regulator, an FFT-block decoder over frames (with its
    own position and speaker embeddings), a Dense mel projection and a conv postnet.
    Token id 0 is padding.

    `frame_buckets_per_octave` (default 0: decode exactly the frames the durations give):
    n > 0 makes inference decode the frames rounded up to one of n sizes per octave, masked
    so the mels are the same (within float round-off) and cut back to their length. A server
    sets it so TensorFlow's CPU kernels, which keep memory for every input shape they meet,
    see a few frame counts instead of one per text. It is read when a function is traced
    (`inference` at its first call, `serving_function()` when first called).
    """

    config_class = FastSpeechConfig
    frame_buckets_per_octave = 0
    legacy_renames = FASTSPEECH_LEGACY_RENAMES  # old weight name -> ours, see legacy_renamer
    mel_output = "mel_after"
    serving_outputs = ("mel_before", "mel_after", "durations")  # what `_inference` returns, in order

    def __init__(self, config, **kwargs):
        super().__init__(**kwargs)
        if isinstance(config, dict):
            config = self.config_class.from_dict(config)
        self.config = config
        encoder_size = config.encoder_hidden_size
        decoder_size = config.decoder_hidden_size

        self.token_embeddings = TokenEmbedding(
            config.vocab_size, encoder_size, config.initializer_range, name="token_embeddings"
        )
        self.encoder_position_embeddings = PositionEmbedding(
            config.max_position_embeddings, encoder_size, name="encoder_position_embeddings"
        )
        self.encoder_speaker_embedding = self._speaker_embedding(encoder_size, "encoder_speaker_embedding")
        self.encoder = FFTStack(name="encoder", **self._stack_kwargs("encoder"))
        self.duration_predictor = self._make_duration_predictor()
        self.length_regulator = LengthRegulator(name="length_regulator")
        self.decoder_projection = (
            Dense(decoder_size, name="decoder_projection") if encoder_size != decoder_size else None
        )
        self.decoder_position_embeddings = PositionEmbedding(
            config.max_position_embeddings, decoder_size, name="decoder_position_embeddings"
        )
        self.decoder_speaker_embedding = self._speaker_embedding(decoder_size, "decoder_speaker_embedding")
        self.decoder = FFTStack(name="decoder", **self._stack_kwargs("decoder"))
        self.mel_dense = Dense(config.num_mels, name="mel_before")
        self.postnet = Postnet(
            config.num_mels,
            config.postnet_conv_filters,
            config.postnet_conv_kernel_sizes,
            config.n_conv_postnet,
            config.postnet_dropout_rate,
            name="postnet",
        )
        self._setup_inference_fn()

    # ----------------------------------------------------------------- construction
    def _speaker_embedding(self, hidden_size, name):
        if self.config.n_speakers <= 1:
            return None
        return SpeakerEmbedding(self.config.n_speakers, hidden_size, self.config.initializer_range, name=name)

    def _stack_kwargs(self, part):
        config = self.config
        return dict(
            num_layers=getattr(config, f"{part}_num_hidden_layers"),
            hidden_size=getattr(config, f"{part}_hidden_size"),
            num_heads=getattr(config, f"{part}_num_attention_heads"),
            head_size=getattr(config, f"{part}_attention_head_size"),
            intermediate_size=getattr(config, f"{part}_intermediate_size"),
            kernel_size=getattr(config, f"{part}_intermediate_kernel_size"),
            activation=getattr(config, f"{part}_hidden_act"),
            hidden_dropout_rate=config.hidden_dropout_prob,
            attention_dropout_rate=config.attention_probs_dropout_prob,
            layer_norm_eps=config.layer_norm_eps,
            initializer_range=config.initializer_range,
        )

    def _make_duration_predictor(self):
        config = self.config
        return VariancePredictor(
            config.duration_predictor_filters,
            config.duration_predictor_kernel_sizes,
            config.num_duration_conv_layers,
            config.duration_predictor_dropout_probs,
            layer_norm_eps=config.layer_norm_eps,
            activation="relu6",
            norm_before_activation=True,
            output_activation="relu6",
            name="duration_predictor",
        )

    def _setup_inference_fn(self):
        """`inference` (any batch) and `inference_tflite` (batch 1) as tf.functions, as in 1.8."""
        signature = self.serving_signature(batch_size=None)
        self.inference = tf.function(
            self._checked_inference, input_signature=signature, reduce_retracing=True, autograph=False
        )
        # No Assert op here: the batch-1 function is the one users convert to builtin-only TFLite.
        self.inference_tflite = tf.function(
            self._inference, input_signature=self.serving_signature(batch_size=1), reduce_retracing=True,
            autograph=False,
        )

    @staticmethod
    def _assert_positive_speed(speed_ratios):
        return tf.debugging.assert_positive(
            speed_ratios, message="speed_ratios must be > 0 (1.0 = normal speed, 2.0 = twice as fast)"
        )

    def _checked_inference(self, input_ids, speaker_ids, speed_ratios):
        """`_inference`, refusing a non-positive speed ratio with a clear error."""
        with tf.control_dependencies([self._assert_positive_speed(speed_ratios)]):
            return self._inference(input_ids, speaker_ids, speed_ratios)

    @property
    def num_mels(self):
        return self.config.num_mels

    def serving_signature(self, batch_size=None):
        """input_ids (B, T), speaker_ids (B,), speed_ratios (B,) [FastSpeech2: + f0_ratios, energy_ratios (B,)]."""
        return [
            tf.TensorSpec([batch_size, None], tf.int32, name="input_ids"),
            tf.TensorSpec([batch_size], tf.int32, name="speaker_ids"),
            tf.TensorSpec([batch_size], tf.float32, name="speed_ratios"),
        ]

    def serve(self, inputs, batch_size=None):
        """The `serving_signature` inputs (a dict) -> {mel_before, mel_after (B, F, num_mels), durations (B, T)}
        [FastSpeech2: + f0_outputs, energy_outputs]."""
        outputs = self._inference(*(inputs[spec.name] for spec in self.serving_signature(batch_size)))
        return dict(zip(self.serving_outputs, outputs))

    def build_once(self, num_mels=None):
        """Create every weight by calling the model once on a dummy input; returns the model."""
        length = min(10, self.config.max_position_embeddings)
        input_ids = tf.range(1, length + 1, dtype=tf.int32)[tf.newaxis]
        self(input_ids, tf.constant([0], tf.int32), tf.ones([1, length], tf.int32), training=False)
        return self

    def resize_positional_embeddings(self, new_size):
        """Allow inputs of up to ``new_size`` tokens and outputs of up to ``new_size`` frames."""
        self.config = dataclasses.replace(self.config, max_position_embeddings=new_size)
        self.encoder_position_embeddings.resize(new_size)
        self.decoder_position_embeddings.resize(new_size)
        self._setup_inference_fn()  # the old functions captured the old tables

    # ----------------------------------------------------------------- computation
    def _encode(self, input_ids, speaker_ids, training):
        """input_ids (B, T), speaker_ids (B,) -> encoder output (B, T, C_enc), token mask (B, T)."""
        mask = tf.math.not_equal(input_ids, 0)
        hidden = self.token_embeddings(input_ids)
        hidden += self.encoder_position_embeddings(position_ids(mask))
        if self.encoder_speaker_embedding is not None:
            hidden += self.encoder_speaker_embedding(speaker_ids)
        return self.encoder(hidden, mask, training=training), mask

    def _decode(self, frames, frame_mask, speaker_ids, training):
        """frames (B, F, C_enc), frame_mask (B, F) -> mel_before, mel_after (B, F, num_mels)."""
        if self.decoder_projection is not None:
            frames = self.decoder_projection(frames)
        frames += self.decoder_position_embeddings(position_ids(frame_mask))
        if self.decoder_speaker_embedding is not None:
            frames += self.decoder_speaker_embedding(speaker_ids)
        hidden = self.decoder(frames, frame_mask, training=training)
        mel_before = self.mel_dense(hidden)
        mel_after = mel_before + self.postnet(mel_before, frame_mask, training=training)
        return mel_before, mel_after

    def _predicted_frames(self, log_durations, speed_ratios):
        """log(1 + frames) (B, T), speed_ratios (B,) -> frames (B, T) int32, rounded as 1.8 did.

        A speed ratio is how much faster to speak: 2.0 halves every duration. (TensorFlowTTS
        multiplied by it, so an old ratio r is our 1 / r; at 1.0 both agree.) Ratios must
        be > 0; the Python entry points check it, the graph does not (no Assert op, so the
        TFLite export stays builtin-only).
        """
        durations = tf.nn.relu(tf.math.exp(log_durations) - 1.0)
        # NaN or inf (non-finite weights) would cast to INT_MIN frames: count them as 0.
        durations = tf.where(tf.math.is_finite(durations), durations, tf.zeros_like(durations))
        speed_ratios = tf.cast(speed_ratios, durations.dtype)[:, tf.newaxis]
        return tf.cast(tf.math.round(durations / speed_ratios), tf.int32)

    def _inference_frames(self, durations):
        """durations (B, T) -> (frames to decode, frames to return): the longest total duration,
        decoded as at least 1 frame since the convs cannot run on none (every duration 0 then
        returns mels of shape (B, 0, num_mels)), and rounded up to a bucket when
        `frame_buckets_per_octave` is set (the frames past the durations are masked)."""
        total = tf.reduce_max(tf.reduce_sum(durations, axis=1))
        decoded = tf.maximum(total, 1)
        if self.frame_buckets_per_octave:
            decoded = bucketed_size(decoded, self.frame_buckets_per_octave)
        return decoded, total

    def call(self, input_ids, speaker_ids, duration_gts, training=False, num_frames=None):
        """Teacher-forced pass: frames follow the given durations.

        Args:
            input_ids: (B, T) int32, 0 = padding.
            speaker_ids: (B,) int32; ignored when ``n_speakers`` is 1.
            duration_gts: (B, T) int32 frames per token (0 at padding).
            training: enables dropout and batch-norm updates.
            num_frames: F, when known (the padded mel length in training): keeps shapes
                static for XLA (`jit_compile`). Default: the largest sum of durations.

        Returns:
            mel_before (B, F, num_mels), mel_after (B, F, num_mels) and duration_outputs
            (B, T): the predicted log(1 + frames), clipped to [0, 6].
        """
        encoder_output, mask = self._encode(input_ids, speaker_ids, training)
        duration_outputs = self.duration_predictor(encoder_output, mask, training=training)
        duration_gts = duration_gts * tf.cast(mask, duration_gts.dtype)
        frames, frame_mask = self.length_regulator(encoder_output, duration_gts, num_frames)
        mel_before, mel_after = self._decode(frames, frame_mask, speaker_ids, training)
        return mel_before, mel_after, duration_outputs

    def _inference(self, input_ids, speaker_ids, speed_ratios):
        """Synthesis with predicted durations.

        Args:
            input_ids: (B, T) int32, 0 = padding.
            speaker_ids: (B,) int32.
            speed_ratios: (B,) float32 > 0; how much faster to speak (2.0 = twice as fast).

        Returns:
            mel_before, mel_after (B, F, num_mels) and durations (B, T) int32: frames per
            token, round(max(exp(prediction) - 1, 0) / speed_ratio) (0 where not finite);
            F is 0 when every duration is.
        """
        encoder_output, mask = self._encode(input_ids, speaker_ids, training=False)
        log_durations = self.duration_predictor(encoder_output, mask, training=False)
        durations = self._predicted_frames(log_durations, speed_ratios)
        decoded_frames, num_frames = self._inference_frames(durations)
        frames, frame_mask = self.length_regulator(encoder_output, durations, decoded_frames)
        mel_before, mel_after = self._decode(frames, frame_mask, speaker_ids, training=False)
        return to_float32((mel_before[:, :num_frames], mel_after[:, :num_frames], durations))

    # ----------------------------------------------------------------- weights and config
    def _legacy_renamer(self, prefix, filepath):
        return legacy_renamer(prefix, filepath, self.legacy_renames)

    def get_config(self):
        return {"config": self.config.to_dict(), "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(cls.config_class.from_dict(config["config"]), name=config.get("name"))
