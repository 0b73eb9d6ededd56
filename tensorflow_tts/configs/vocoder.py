"""VocoderTrainingConfig: the data, loss and optimizer keys of a GAN vocoder training YAML.

A TensorFlowTTS 1.8 vocoder YAML is flat: model blocks (`model_type`, `*_params` of a model,
read by `configs.registry`), loop keys (`TrainerConfig`) and everything else, which is this
config. Unknown keys are errors, so a typo in an old file is reported instead of ignored.
"""

import dataclasses
import typing

from tensorflow_tts.configs.base_config import BaseConfig, ConfigError
from tensorflow_tts.configs.data import check_num_workers
from tensorflow_tts.configs.registry import split_training_yaml
from tensorflow_tts.configs.trainer import TrainerConfig


@dataclasses.dataclass
class STFTLossConfig(BaseConfig):
    """Resolutions of a multi-resolution STFT loss (`stft_loss_params`, `subband_stft_loss_params`)."""

    fft_lengths: typing.List[int] = dataclasses.field(default_factory=lambda: [1024, 2048, 512])
    frame_steps: typing.List[int] = dataclasses.field(default_factory=lambda: [120, 240, 50])
    frame_lengths: typing.List[int] = dataclasses.field(default_factory=lambda: [600, 1200, 240])

    def __post_init__(self):
        if not len(self.fft_lengths) == len(self.frame_steps) == len(self.frame_lengths) > 0:
            raise ValueError(
                f"fft_lengths ({len(self.fft_lengths)}), frame_steps ({len(self.frame_steps)}) and "
                f"frame_lengths ({len(self.frame_lengths)}) must be non-empty lists of the same length"
            )
        for fft_length, frame_length in zip(self.fft_lengths, self.frame_lengths):
            if frame_length > fft_length:
                raise ValueError(f"frame_length {frame_length} is longer than its fft_length {fft_length}")

    def as_kwargs(self):
        """Keyword arguments of `losses.stft.TFMultiResolutionSTFT`."""
        return {"fft_lengths": self.fft_lengths, "frame_lengths": self.frame_lengths, "frame_steps": self.frame_steps}

    @property
    def min_samples(self):
        """The shortest signal every resolution can frame."""
        return max(self.frame_lengths)


@dataclasses.dataclass
class MelLossConfig(BaseConfig):
    """`mel_loss_params`: L1 between log10 mels (the feature mel of `tensorflow_tts.audio`) of the
    generated and the recorded audio, as HiFi-GAN's mel loss; give the preprocessing's values.
    The STFT hop is the config's `hop_size`."""

    fft_size: int = 1024
    win_length: typing.Optional[int] = None  # null = fft_size
    window: str = "hann"
    num_mels: int = 80
    fmin: typing.Optional[float] = 80.0  # Hz; null = 0
    fmax: typing.Optional[float] = 7600.0  # Hz; null = sampling_rate / 2
    log_floor: float = 1e-5  # mel magnitudes are floored here before log10 (silence does not dominate)

    def __post_init__(self):
        if self.log_floor <= 0:
            raise ValueError(f"log_floor: expected a number > 0, got {self.log_floor!r}")


@dataclasses.dataclass
class VocoderTrainingConfig(BaseConfig):
    """Data, loss and optimizer keys of `examples/{melgan,melgan_stft,multiband_melgan,hifigan}/conf/*.yaml`.

    Which losses a recipe uses follows from the keys present, as in TensorFlowTTS 1.8:
    `stft_loss_params` adds the full-band MR-STFT loss (MelGAN-STFT, MB-MelGAN, HiFi-GAN);
    `subband_stft_loss_params` adds the sub-band one (MB-MelGAN only); `mel_loss_params` adds a
log10-mel L1 loss (new, off in the published recipes); feature matching is on
    for MelGAN and HiFi-GAN and off for MB-MelGAN unless `use_feat_match_loss` says otherwise.
    """

    # --- features (must match the dump; checked against the generator's hop size)
    sampling_rate: int = 22050  # Hz, for audio summaries and decoded wavs
    hop_size: int = 256  # samples per mel frame = the generator's upsampling factor
    format: str = "npy"  # dump file format; only npy
    # --- losses
    stft_loss_params: typing.Optional[STFTLossConfig] = None  # full-band MR-STFT loss; null = none
    subband_stft_loss_params: typing.Optional[STFTLossConfig] = None  # MB-MelGAN PQMF sub-band MR-STFT loss
    lambda_feat_match: float = 10.0  # weight of feature matching inside the adversarial term
    lambda_adv: float = 1.0  # weight of the adversarial term (1.8: 2.5 MB-MelGAN, 4.0 MelGAN-STFT/HiFi-GAN)
    use_feat_match_loss: typing.Optional[bool] = None  # null: on for MelGAN/HiFi-GAN, off for MB-MelGAN
    mel_loss_params: typing.Optional[MelLossConfig] = None  # log10-mel L1 loss (new; none in the 1.8 recipes)
    lambda_mel: float = 10.0  # its weight (HiFi-GAN's 45 on natural-log mels is about 100 on log10 mels)
    adversarial_loss_type: str = "mse"  # "mse" (LSGAN, as 1.8) or "hinge"
    # --- data loader
    batch_size: int = 16  # per replica; the global batch is batch_size * replicas
    eval_batch_size: typing.Optional[int] = None  # per replica; null = batch_size
    batch_max_steps: int = 8192  # training segment in samples, a multiple of hop_size
    batch_max_steps_valid: int = 81920  # validation segment in samples, a multiple of hop_size
    remove_short_samples: bool = True  # kept for old YAMLs: shorter utterances are always left out
    allow_cache: bool = True  # keep the decoded dump in memory after the first epoch
    cache_max_ram_fraction: float = 0.5  # allow_cache refuses a split estimated above this share of RAM
    is_shuffle: bool = True  # reshuffle the training utterances every epoch
    seed: int = 42  # initialisation, dropout, shuffling and segment positions (--seed overrides it)
    num_workers: typing.Optional[int] = None  # threads of the input pipeline; null = one per core
    # --- optimizers (see optimizers.factory.OptimizerConfig; `lr` of 1.8 MelGAN files is accepted)
    generator_optimizer_params: dict = dataclasses.field(default_factory=dict)
    discriminator_optimizer_params: dict = dataclasses.field(default_factory=dict)
    # --- written by the training script into <outdir>/config.yml; decoding reads it
    use_norm: typing.Optional[bool] = None  # the vocoder was trained on normalised mels; null = unknown

    def __post_init__(self):
        for key in ("sampling_rate", "hop_size", "batch_size", "batch_max_steps", "batch_max_steps_valid"):
            value = getattr(self, key)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{key}: expected a whole number > 0, got {value!r}")
        for key in ("batch_max_steps", "batch_max_steps_valid"):
            if getattr(self, key) % self.hop_size:
                raise ValueError(
                    f"{key}: {getattr(self, key)} is not a multiple of hop_size ({self.hop_size}); "
                    f"use {getattr(self, key) // self.hop_size * self.hop_size}"
                )
        if self.format != "npy":
            raise ValueError(f"format: {self.format!r} is not supported; use npy")
        check_num_workers(self.num_workers)
        if self.adversarial_loss_type not in ("mse", "hinge"):
            raise ValueError(f"adversarial_loss_type: expected 'mse' or 'hinge', got {self.adversarial_loss_type!r}")
        for key, config_class in (
            ("stft_loss_params", STFTLossConfig),
            ("subband_stft_loss_params", STFTLossConfig),
            ("mel_loss_params", MelLossConfig),
        ):
            value = getattr(self, key)
            if isinstance(value, dict):  # from_dict only builds non-Optional nested configs
                setattr(self, key, config_class.from_dict(value, source=key))
        for key in ("generator_optimizer_params", "discriminator_optimizer_params"):
            if not isinstance(getattr(self, key) or {}, dict):
                raise ValueError(f"{key}: expected a mapping of optimizer keys")

    @property
    def global_eval_batch_size(self):
        return self.eval_batch_size or self.batch_size


def split_vocoder_yaml(values, source="config"):
    """A flat vocoder YAML -> (model blocks, TrainerConfig, VocoderTrainingConfig).

    Raises ConfigError naming the file and the unknown key.
    """
    model_values, rest = split_training_yaml(values)
    if "model_type" not in model_values:
        raise ConfigError(f"{source}: no 'model_type' key; expected e.g. model_type: multiband_melgan_generator")
    trainer_config, rest = TrainerConfig.split(rest, source=source)
    return model_values, trainer_config, VocoderTrainingConfig.from_dict(rest, source=source)
