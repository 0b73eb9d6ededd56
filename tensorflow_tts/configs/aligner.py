"""AlignerConfig: the `aligner_params` block of FastSpeech/FastSpeech2 training YAMLs (not in 1.8)."""

import dataclasses
import typing

from tensorflow_tts.configs.base_config import BaseConfig


@dataclasses.dataclass
class AlignerConfig(BaseConfig):
    """The built-in aligner (tensorflow_tts.layers.aligner.Aligner) and its losses.

    It learns token durations from the mels during training, so a dump without
    `durations/` is enough to train FastSpeech2. It is a training-time module: its weights
    are saved in checkpoints, but `inference()` never uses it.
    """

    # null: use the aligner exactly when the train split has no durations/ folder;
    # true: always (ignore dump durations); false: never (durations/ is required).
    enabled: typing.Optional[bool] = None
    vocab_size: typing.Optional[int] = None  # null: the model's vocab_size
    embedding_size: int = 256  # width of the aligner's own token embedding
    attention_channels: int = 80  # width of the space where tokens and frames are compared
    temperature: float = 0.0005  # scales the squared distances before the softmax over tokens
    use_prior: bool = True  # add a log beta-binomial prior favouring the diagonal
    prior_scaling: float = 1.0  # its sharpness (larger = closer to the diagonal)
    blank_logprob: float = -1.0  # score of the CTC blank in the forward-sum loss
    forward_sum_loss_weight: float = 1.0
    binarization_loss_weight: float = 1.0
    # The binarization loss is off before this step, then ramps up linearly over the warm-up.
    binarization_start_steps: int = 6000
    binarization_warmup_steps: int = 2000

    def __post_init__(self):
        for name in ("embedding_size", "attention_channels"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)}: expected >= 1")
        if self.temperature <= 0:
            raise ValueError(f"temperature={self.temperature}: expected > 0")
        if self.prior_scaling <= 0:
            raise ValueError(f"prior_scaling={self.prior_scaling}: expected > 0")
        if self.binarization_start_steps < 0 or self.binarization_warmup_steps < 0:
            raise ValueError("binarization_start_steps and binarization_warmup_steps must be >= 0")
