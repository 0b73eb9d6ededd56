"""TrainerConfig: the keys of an example YAML that drive the training loop."""

import dataclasses
import logging
import typing

from tensorflow_tts.configs.base_config import BaseConfig

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class TrainerConfig(BaseConfig):
    """Every knob of the training loop (tensorflow_tts.trainers.BaseTrainer).

    A "step" is one optimizer update; with gradient accumulation it consumes
    `gradient_accumulation_steps` batches of the dataset. `max_steps` (the spelling of the
    multi-GPU guide for TensorFlowTTS 1.8) is read as `train_max_steps`.
    """

    key_aliases = {"max_steps": "train_max_steps"}
    other_keys = {}  # not a field: the rest of a whole YAML, see from_training_yaml

    train_max_steps: int = 100000  # stop after this many updates
    log_interval_steps: int = 200  # write train scalars every N steps
    eval_interval_steps: int = 1000  # evaluate on the whole valid set every N steps
    save_interval_steps: int = 5000  # write a checkpoint every N steps (and at the end)
    num_save_intermediate_results: int = 1  # valid batches drawn (images/audio) at each eval
    gradient_accumulation_steps: int = 1  # batches summed into one update
    grad_norm: float = 0.0  # clip gradients to this global norm; 0 disables clipping
    var_train_expr: typing.Optional[str] = None  # regex: train only variables whose name matches
    outdir: str = "./exp"  # TensorBoard logs (train/, eval/), predictions/, checkpoints/
    max_consecutive_nonfinite_steps: int = 10  # stop with NonFiniteTrainingError after this many
    discriminator_train_start_steps: int = 0  # GAN: first step that updates the discriminator
    max_checkpoints_to_keep: int = 5  # older checkpoints are deleted
    save_weights_h5: bool = True  # also write <model>-<step>.h5 weights next to checkpoints
    jit_compile: bool = False  # XLA-compile the forward/backward pass
    profile_steps: typing.Optional[typing.List[int]] = None  # [first, last] (1-based, inclusive): profiler
    # trace of those updates, written under outdir/plugins/profile for TensorBoard's profile tab
    mixed_precision_policy: typing.Optional[str] = None  # with is_mixed_precision: None = auto
    # (mixed_float16 on GPU, mixed_bfloat16 on CPU); or force "mixed_float16"/"mixed_bfloat16"
    gradient_checkpointing: bool = False  # recompute the activations of the FFT blocks, Tacotron2
    # encoder/postnet units and vocoder residual stacks in the backward pass: less memory, more compute
    deterministic: bool = False  # with a seed: TensorFlow's op determinism, so a rerun gives the same weights

    def __post_init__(self):
        for name in ("train_max_steps", "log_interval_steps", "eval_interval_steps", "save_interval_steps"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name}={getattr(self, name)}: expected a positive number of steps")
        if self.gradient_accumulation_steps < 1:
            raise ValueError(
                f"gradient_accumulation_steps={self.gradient_accumulation_steps}: expected >= 1 (1 = no accumulation)"
            )
        if self.grad_norm < 0:
            raise ValueError(f"grad_norm={self.grad_norm}: expected >= 0 (0 disables clipping)")
        if self.max_consecutive_nonfinite_steps < 1:
            raise ValueError(f"max_consecutive_nonfinite_steps={self.max_consecutive_nonfinite_steps}: expected >= 1")
        if self.profile_steps is not None:
            if len(self.profile_steps) != 2 or not 1 <= self.profile_steps[0] <= self.profile_steps[1]:
                raise ValueError(f"profile_steps={self.profile_steps}: expected [first_step, last_step]")
            self.profile_steps = [int(step) for step in self.profile_steps]
        if self.mixed_precision_policy not in (None, "mixed_float16", "mixed_bfloat16"):
            raise ValueError(
                f"mixed_precision_policy={self.mixed_precision_policy!r}: expected null, "
                "'mixed_float16' or 'mixed_bfloat16'"
            )

    @classmethod
    def split(cls, values, source="config"):
        """Split a flat example YAML into (TrainerConfig, the remaining keys).

        The old TensorFlowTTS YAML keeps the trainer keys at the top level beside the model
        and data keys; the script validates the remainder with its own config class.
        """
        names = {field.name for field in dataclasses.fields(cls)} | set(cls.key_aliases)
        trainer_values = {key: value for key, value in values.items() if key in names}
        rest = {key: value for key, value in values.items() if key not in names}
        return cls.from_dict(trainer_values, source=source), rest

    @classmethod
    def from_training_yaml(cls, values, source="config"):
        """A whole training YAML, as TensorFlowTTS 1.8 passed it to its trainers: the trainer
        keys are read (and checked), the other keys are kept in `other_keys`, for
        ``config["key"]`` reads, and named in one log line."""
        config, rest = cls.split(values, source=source)
        config.other_keys = rest
        if rest:
            logger.info("%s: the trainer ignores %d keys that are not its own: %s", source, len(rest), ", ".join(sorted(rest)))
        return config

    def __getitem__(self, key):
        """``config["key"]``, as 1.8 trainers read their YAML: a trainer key or one of `other_keys`."""
        if key in self.other_keys:
            return self.other_keys[key]
        if key in {field.name for field in dataclasses.fields(self)}:
            return getattr(self, key)
        raise KeyError(f"{key!r}: neither a trainer key nor a key of the training YAML given to the trainer")

    def __contains__(self, key):
        try:
            self[key]
        except KeyError:
            return False
        return True
