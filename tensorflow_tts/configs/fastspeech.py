"""FastSpeech hyper-parameters: the keys of TensorFlowTTS 1.8's ``fastspeech_params``."""

import dataclasses
from typing import ClassVar

from tensorflow_tts.configs.base_config import BaseConfig, ConfigError
from tensorflow_tts.configs.legacy_vocab import legacy_vocab_size


ACTIVATIONS = ("identity", "tanh", "gelu", "relu", "swish", "gelu_new", "mish")


@dataclasses.dataclass
class FastSpeechConfig(BaseConfig):
    """FastSpeech: FFT-block encoder, duration predictor, length regulator, FFT-block decoder.

    Keys and defaults are those of the published ``fastspeech.v1.yaml`` (LJSpeech), so old
    YAML files (the mapping under ``fastspeech_params:``) load unchanged.
    """

    model_types: ClassVar[tuple] = ("fastspeech",)

    # Text front end. `vocab_size` is only read when `dataset` is "ljspeech" (as in 1.8);
    # any other corpus name sets the size of 1.8's symbol table for it (see legacy_vocab.py).
    dataset: str = "ljspeech"
    vocab_size: int = 149
    # More than 1 adds a speaker embedding to the encoder and decoder inputs.
    n_speakers: int = 1

    # Encoder: a stack of FFT blocks (self-attention + 1-D conv feed-forward).
    encoder_hidden_size: int = 384
    encoder_num_hidden_layers: int = 4
    encoder_num_attention_heads: int = 2
    encoder_attention_head_size: int = 192  # usually hidden_size // num_attention_heads
    encoder_intermediate_size: int = 1024  # feed-forward conv channels
    encoder_intermediate_kernel_size: int = 3
    encoder_hidden_act: str = "mish"  # one of ACTIVATIONS

    # Decoder: same structure over mel frames. A width different from the encoder's adds
    # a Dense projection (`project_compatible_decoder` in 1.8) in front of it.
    decoder_hidden_size: int = 384
    decoder_num_hidden_layers: int = 4
    decoder_num_attention_heads: int = 2
    decoder_attention_head_size: int = 192
    decoder_intermediate_size: int = 1024
    decoder_intermediate_kernel_size: int = 3
    decoder_hidden_act: str = "mish"

    # Accepted for compatibility: 1.8 computed these but never returned them from the model.
    output_attentions: bool = False
    output_hidden_states: bool = False

    hidden_dropout_prob: float = 0.1  # after attention and after the feed-forward convs
    attention_probs_dropout_prob: float = 0.1
    initializer_range: float = 0.02  # stddev of the truncated-normal initialisers
    layer_norm_eps: float = 1e-5
    # Size of the sinusoidal position tables (encoder tokens and decoder frames); longer
    # inputs need `model.resize_positional_embeddings(n)`.
    max_position_embeddings: int = 2048

    # Duration predictor: convs with layer norm and relu6; predicts log(1 + frames).
    num_duration_conv_layers: int = 2
    duration_predictor_filters: int = 256
    duration_predictor_kernel_sizes: int = 3
    duration_predictor_dropout_probs: float = 0.1

    num_mels: int = 80

    # Postnet: convs with batch norm and tanh, added to the mel projection as a residual.
    n_conv_postnet: int = 5
    postnet_conv_filters: int = 512
    postnet_conv_kernel_sizes: int = 5
    postnet_dropout_rate: float = 0.1

    def __post_init__(self):
        self.vocab_size = legacy_vocab_size(self.dataset, self.vocab_size)
        for part in ("encoder", "decoder"):
            hidden = getattr(self, f"{part}_hidden_size")
            heads = getattr(self, f"{part}_num_attention_heads")
            if heads < 1 or hidden % heads != 0:
                raise ConfigError(
                    f"{part}_hidden_size ({hidden}) must be a multiple of "
                    f"{part}_num_attention_heads ({heads})"
                )
            activation = getattr(self, f"{part}_hidden_act")
            if activation not in ACTIVATIONS:
                raise ConfigError(
                    f"{part}_hidden_act {activation!r} is not one of {', '.join(ACTIVATIONS)}"
                )
        if self.n_speakers is None:
            raise ConfigError(
                "n_speakers: null takes the number of speakers from a dump, which the training and "
                "decode scripts read; set a number to build the model without one"
            )
        if self.n_speakers < 1:
            raise ConfigError(f"n_speakers must be at least 1, got {self.n_speakers}")
