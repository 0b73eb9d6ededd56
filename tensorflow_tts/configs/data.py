"""AcousticDataConfig: the data-loader keys of acoustic-model training YAMLs (TensorFlowTTS 1.8 + new ones)."""

import dataclasses
import typing

from tensorflow_tts.configs.base_config import BaseConfig

BATCHING_MODES = ("padded", "bucket", "frames")


def check_num_workers(num_workers):
    """`num_workers` of a training YAML: null or a whole number >= 1."""
    if num_workers is not None and (not isinstance(num_workers, int) or isinstance(num_workers, bool) or num_workers < 1):
        raise ValueError(f"num_workers={num_workers!r}: expected a whole number >= 1, or null (one thread per core)")


@dataclasses.dataclass
class AcousticDataConfig(BaseConfig):
    """How a training script reads the dump (keys at the top level of the YAML, as in 1.8)."""

    hop_size: int = 256  # samples per mel frame (must match preprocessing)
    format: str = "npy"  # kept for 1.8 YAMLs: the dump's layout (.npy files or shards) is read from its folder
    batch_size: int = 16  # per replica; the global batch is batch_size * replicas
    remove_short_samples: bool = True  # drop utterances with <= mel_length_threshold frames
    allow_cache: bool = True  # keep decoded examples in memory after the first epoch
    cache_max_ram_fraction: float = 0.5  # allow_cache refuses a split estimated above this share of RAM
    mel_length_threshold: int = 32
    is_shuffle: bool = True  # reshuffle every epoch
    # Pad every batch to the split's longest utterance (frames and tokens): one shape, so
    # `jit_compile` (XLA) compiles once instead of once per padded length.
    use_fixed_shapes: bool = False
    # --- Not in 1.8 ---
    # "padded": batches of batch_size in random order; "bucket": length buckets of
    # batch_size; "frames": batches of at most batch_frames padded frames (per replica).
    batching: str = "padded"
    batch_frames: typing.Optional[int] = None  # per-replica frame budget for batching: frames
    max_batch_size: typing.Optional[int] = None  # per replica, caps "frames"/"bucket" batches
    max_mel_length: typing.Optional[int] = None  # drop longer utterances (null keeps all)
    # Durations read from the dump that miss the mel length by more frames than this are
    # skipped; smaller misses are repaired (null: always repair).
    max_duration_fix_frames: typing.Optional[int] = None
    eval_batch_size: typing.Optional[int] = None  # per replica; null = batch_size
    num_workers: typing.Optional[int] = None  # threads of the input pipeline; null = one per core
    # Seeds initialisation, dropout, shuffling and cropping (--seed overrides it); null: the
    # weights and dropout are unseeded and shuffling uses seed 0.
    seed: typing.Optional[int] = None

    def __post_init__(self):
        if self.format != "npy":
            raise ValueError(f"format={self.format!r}: only 'npy' is accepted (a sharded dump is detected from its folder)")
        if self.batch_size < 1 or self.hop_size < 1:
            raise ValueError("batch_size and hop_size must be >= 1")
        check_num_workers(self.num_workers)
        if self.batching not in BATCHING_MODES:
            raise ValueError(f"batching={self.batching!r}: expected one of {', '.join(BATCHING_MODES)}")
        if self.batching == "frames" and not self.batch_frames:
            raise ValueError("batching: frames needs batch_frames (padded mel frames per replica batch)")

    def length_threshold(self):
        """The mel_length_threshold in effect (0 when remove_short_samples is off)."""
        return self.mel_length_threshold if self.remove_short_samples else 0
