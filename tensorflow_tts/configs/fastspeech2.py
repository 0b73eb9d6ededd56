"""FastSpeech2 hyper-parameters: the keys of TensorFlowTTS 1.8's ``fastspeech2_params``."""

import dataclasses
from typing import ClassVar

from tensorflow_tts.configs.base_config import ConfigError
from tensorflow_tts.configs.fastspeech import FastSpeechConfig

VARIANCE_LEVELS = ("token", "frame")


@dataclasses.dataclass
class FastSpeech2Config(FastSpeechConfig):
    """FastSpeech2: FastSpeech plus a variance adaptor (duration, pitch and energy).

    Defaults follow the published ``fastspeech2.v1.yaml`` (LJSpeech). All FastSpeech keys
    are accepted, but the duration predictor is built from the ``variant_predictor_*``
    keys, so ``num_duration_conv_layers`` and the ``duration_predictor_*`` keys are unused
    (as in 1.8).
    """

    model_types: ClassVar[tuple] = ("fastspeech2",)

    hidden_dropout_prob: float = 0.2

    # Duration, f0 and energy predictors: convs with relu and layer norm.
    variant_prediction_num_conv_layers: int = 2
    variant_predictor_filter: int = 256
    variant_predictor_kernel_size: int = 3
    variant_predictor_dropout_rate: float = 0.5
    # Accepted for compatibility, unused (also in 1.8): the f0/energy embedding conv
    # always has kernel size 9 and its dropout is `variance_embedding_dropout_rate`.
    variant_kernel_size: int = 9
    variant_dropout_rate: float = 0.5

    # --- Not in 1.8 ---
    # "token": one f0/energy value per input token, predicted from the encoder output and
    # embedded before the length regulator (1.8's behaviour; f0_gts/energy_gts [B, T_text]).
    # "frame": one value per mel frame, predicted and embedded after the length regulator
    # (f0_gts/energy_gts [B, T_frames]).
    variance_level: str = "token"
    # Dropout on the f0/energy embeddings (1.8 hard-coded 0.5).
    variance_embedding_dropout_rate: float = 0.5
    # 1.8 applied that dropout also at inference and in `training=False` calls, so its
    # outputs were random. False (default): only when training. True reproduces 1.8.
    variance_embedding_dropout_at_inference: bool = False

    def __post_init__(self):
        super().__post_init__()
        if self.variance_level not in VARIANCE_LEVELS:
            raise ConfigError(
                f"variance_level {self.variance_level!r} is not one of {', '.join(VARIANCE_LEVELS)}"
            )
