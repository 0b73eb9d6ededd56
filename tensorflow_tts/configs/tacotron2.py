"""Tacotron 2 hyper-parameters: the keys of TensorFlowTTS 1.8's ``tacotron2_params`` plus a few switches."""

import dataclasses
from typing import ClassVar

from tensorflow_tts.configs.base_config import BaseConfig, ConfigError
from tensorflow_tts.configs.legacy_vocab import legacy_vocab_size


INITIAL_ALIGNMENTS = ("zeros", "first_token")
# "lsa": location-sensitive attention (1.8's only one); "sma": stepwise monotonic attention.
ATTENTION_TYPES = ("lsa", "sma")
ACTIVATIONS = ("identity", "linear", "tanh", "relu", "gelu", "swish", "mish")


@dataclasses.dataclass
class Tacotron2Config(BaseConfig):
    """Tacotron 2: conv + BiLSTM encoder, location-sensitive attention, autoregressive LSTM decoder.

    Keys and defaults of the 1.8 keys are those of 1.8's ``Tacotron2Config()`` (5 speakers,
    3 mish encoder convs, mish prenet, reduction factor 5), so 1.8 code that builds the
    config from its defaults builds the same network; old YAML files (the mapping under
    ``tacotron2_params:``) and old ``config.json`` files load unchanged. The published
    recipes (``examples/tacotron2/conf/tacotron2.v1.yaml``: 1 speaker, 5 relu convs, r = 1)
    set every key. The keys after ``postnet_dropout_rate`` are new; their defaults keep the
    1.8 behaviour except ``legacy_free_running_eval`` (see there).
    """

    model_types: ClassVar[tuple] = ("tacotron2",)

    # Text front end. `vocab_size` is only read when `dataset` is "ljspeech" (as in 1.8);
    # any other corpus name sets the size of 1.8's symbol table for it (see legacy_vocab.py).
    dataset: str = "ljspeech"
    vocab_size: int = 149
    embedding_hidden_size: int = 512
    initializer_range: float = 0.02  # stddev of the truncated-normal initialisers
    layer_norm_eps: float = 1e-6  # layer norm after the token (+ speaker) embeddings
    embedding_dropout_prob: float = 0.1
    # More than 1 adds speaker embeddings to the token embeddings and to the encoder output.
    n_speakers: int = 5

    # Encoder: `n_conv_encoder` x (conv, batch norm, activation, dropout), then a BiLSTM.
    n_conv_encoder: int = 3
    encoder_conv_filters: int = 512
    encoder_conv_kernel_sizes: int = 5
    encoder_conv_activation: str = "mish"  # one of ACTIVATIONS
    encoder_conv_dropout_rate: float = 0.5
    encoder_lstm_units: int = 256  # per direction; the encoder output has twice as many channels

    # Decoder: each step emits `reduction_factor` frames.
    reduction_factor: int = 5
    n_prenet_layers: int = 2
    prenet_units: int = 256
    prenet_activation: str = "mish"
    prenet_dropout_rate: float = 0.5
    n_lstm_decoder: int = 1  # decoder LSTMs after the attention LSTM
    decoder_lstm_units: int = 1024
    attention_type: str = "lsa"  # one of ATTENTION_TYPES; "sma" is new (see attention_noise_std)
    attention_dim: int = 128
    attention_filters: int = 32  # location features: conv over the cumulative alignment
    attention_kernel: int = 31
    n_mels: int = 80

    # Postnet: convs with batch norm (tanh except the last), then a Dense to `n_mels`
    # (`residual_projection`) whose output is added to the decoder frames.
    n_conv_postnet: int = 5
    postnet_conv_filters: int = 512
    postnet_conv_kernel_sizes: int = 5
    postnet_dropout_rate: float = 0.1

    # ---- new in 2.0 -------------------------------------------------------------------
    # Tacotron 2 keeps the prenet dropout on at inference: without it the decoder output
    # collapses. 1.8 always did; set False only for deterministic checks.
    prenet_dropout_at_inference: bool = True
    # Zoneout on the decoder LSTMs (the paper uses 0.1). 0 gives plain LSTMs, as in 1.8;
    # a model trained with zoneout must keep its rate at inference (it scales the states).
    decoder_zoneout_rate: float = 0.0
    # A free-running decoder stops once sigmoid(stop logit) > stop_threshold for all
    # `reduction_factor` frames of a step (1.8 rounded the probability: 0.5).
    stop_threshold: float = 0.5
    # 1.8 quirk: `call(..., training=False)` ignored `mel_gts` and decoded free-running
    # (its own predictions fed back, stopping at the stop token or `maximum_iterations`).
    # By default the call always teacher-forces on `mel_gts` (free-running synthesis is
    # `inference`); set True to reproduce 1.8's evaluation outputs.
    legacy_free_running_eval: bool = False
    # What the location features see before the first step. "zeros" (1.8): no attention
    # history, so the first step attends wherever the keys and the empty query point, often
    # a few tokens in. "first_token": the history is one step spent on token 0, which tells
    # the location-sensitive attention where the text starts; alignments begin at the first
    # token and learn to move forward from it sooner. Changes outputs: keep "zeros" for 1.8
    # checkpoints.
    initial_alignment: str = "zeros"
    # attention_type "sma" (stepwise monotonic attention, layers/stepwise_monotonic_attention.py):
    # the alignment starts on token 0 and at each decoder step either stays or moves on by
    # one token, so it is monotonic and reaches the end by construction. Training adds
    # Gaussian noise of this standard deviation to its energies, which makes the stay/move
    # decisions sharp. Not used by "lsa".
    attention_noise_std: float = 1.0

    def __post_init__(self):
        self.vocab_size = legacy_vocab_size(self.dataset, self.vocab_size)
        if self.attention_type not in ATTENTION_TYPES:
            raise ConfigError(
                f"attention_type {self.attention_type!r}: expected 'lsa' (location-sensitive attention) "
                "or 'sma' (stepwise monotonic attention)"
            )
        if self.attention_noise_std < 0:
            raise ConfigError(f"attention_noise_std must be at least 0, got {self.attention_noise_std}")
        for key in ("encoder_conv_activation", "prenet_activation"):
            if getattr(self, key) not in ACTIVATIONS:
                raise ConfigError(f"{key} {getattr(self, key)!r} is not one of {', '.join(ACTIVATIONS)}")
        for key in ("n_speakers", "reduction_factor", "n_lstm_decoder", "n_conv_postnet", "n_prenet_layers"):
            if getattr(self, key) < 1:
                raise ConfigError(f"{key} must be at least 1, got {getattr(self, key)}")
        if not 0.0 <= self.decoder_zoneout_rate < 1.0:
            raise ConfigError(f"decoder_zoneout_rate must lie in [0, 1), got {self.decoder_zoneout_rate}")
        if self.initial_alignment not in INITIAL_ALIGNMENTS:
            raise ConfigError(
                f"initial_alignment {self.initial_alignment!r}: expected one of {', '.join(INITIAL_ALIGNMENTS)}"
            )
        if not 0.0 < self.stop_threshold < 1.0:
            raise ConfigError(f"stop_threshold must lie in (0, 1), got {self.stop_threshold}")

    @property
    def encoder_output_size(self):
        """Channels of the encoder output (the attention memory): both LSTM directions."""
        return 2 * self.encoder_lstm_units
