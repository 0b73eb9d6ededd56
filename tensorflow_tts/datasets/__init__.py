"""tf.data pipelines over the dump (docs/dump_layout.md): examples, length buckets, frame budgets."""

from tensorflow_tts.datasets.acoustic_dataset import (
    AcousticDataset,
    CharactorDurationF0EnergyMelDataset,
)
from tensorflow_tts.datasets.audio_mel_dataset import AudioMelDataset
from tensorflow_tts.datasets.batching import (
    bucketed_batches,
    frame_budget_batch_sizes,
    frame_budget_batches,
    pad_to_lengths,
    padded_batches,
    padding_ratio,
    with_padding_ratio,
)
from tensorflow_tts.datasets.dump_dataset import (
    DumpDataset,
    DumpError,
    DumpFeature,
    read_utt_ids,
    with_num_workers,
)
from tensorflow_tts.datasets.synthetic import ljspeech_lengths, write_synthetic_dump

__all__ = [
    "AcousticDataset",
    "AudioMelDataset",
    "CharactorDurationF0EnergyMelDataset",
    "DumpDataset",
    "DumpError",
    "DumpFeature",
    "bucketed_batches",
    "frame_budget_batch_sizes",
    "frame_budget_batches",
    "ljspeech_lengths",
    "pad_to_lengths",
    "padded_batches",
    "padding_ratio",
    "read_utt_ids",
    "with_num_workers",
    "with_padding_ratio",
    "write_synthetic_dump",
]
