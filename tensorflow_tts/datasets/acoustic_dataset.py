"""AcousticDataset: text ids, speaker, mel and optional durations, F0, energy from a dump.

For acoustic models (Tacotron 2, FastSpeech, FastSpeech 2).
"""

import tensorflow as tf

from tensorflow_tts.datasets.dump_dataset import DumpDataset, DumpFeature
from tensorflow_tts.dump import layout
from tensorflow_tts.dump.statistics import read_stats


class AcousticDataset(DumpDataset):
    """Examples for acoustic models, one per utterance of a dump split.

    An example is a dict:
        utt_ids: tf.string scalar
        input_ids: int32 `(T_text,)`
        speaker_ids: int32 scalar
        mel_gts: float32 `(T_mel, num_mels)`, norm-feats with `use_norm`, else raw-feats
        mel_lengths, input_lengths: int32 scalars
        duration_gts: int32 `(T_text,)`     when durations are read
        f0_gts, energy_gts: float32 `(T_mel,)`  when F0 and energy are read
    Batches pad ids, durations, F0 and energy with 0 and mels with `mel_pad_value`.

    Args:
        dump_dir, split, utt_ids, mel_length_threshold, max_mel_length, allow_cache,
        cache_max_ram_fraction: see `DumpDataset`.
        use_norm: read `norm-feats` (True) or `raw-feats` (False).
        with_durations: read `durations`; None reads them when the split has them.
        with_f0_energy: read `raw-f0` and `raw-energies`; None reads them when present.
        num_mels: mel channels; None takes them from the first mel file.
        mel_pad_value: pad value of `mel_gts` in batches.
        normalize_f0_energy: standardise non-zero F0 and energy frames with the dump's
            `stats_f0.npy` and `stats_energy.npy`; zeros (unvoiced, silent) stay 0.
    """

    frames_key = "mel_gts"

    def __init__(
        self,
        dump_dir,
        split="train",
        *,
        use_norm=True,
        with_durations=None,
        with_f0_energy=None,
        num_mels=None,
        mel_pad_value=0.0,
        normalize_f0_energy=False,
        utt_ids=None,
        mel_length_threshold=0,
        max_mel_length=None,
        allow_cache=False,
        cache_max_ram_fraction=0.5,
    ):
        self.use_norm = use_norm
        self.mel_pad_value = mel_pad_value
        self._mel_kind = layout.mel_kind(use_norm)
        self._num_mels = num_mels
        self._with_durations = with_durations
        self._with_f0_energy = with_f0_energy
        self.normalize_f0_energy = normalize_f0_energy
        super().__init__(
            dump_dir,
            split,
            utt_ids=utt_ids,
            mel_length_threshold=mel_length_threshold,
            max_mel_length=max_mel_length,
            allow_cache=allow_cache,
            cache_max_ram_fraction=cache_max_ram_fraction,
        )
        self.f0_stats = self.energy_stats = None
        if normalize_f0_energy and self.with_f0_energy:
            self.f0_stats = read_stats(self.dump_dir / layout.F0_STATS_NAME)
            self.energy_stats = read_stats(self.dump_dir / layout.ENERGY_STATS_NAME)

    @property
    def num_mels(self):
        return self.features[0].inner_shape[0]

    @property
    def with_durations(self):
        return any(feature.key == "duration_gts" for feature in self.features)

    @property
    def with_f0_energy(self):
        return any(feature.key == "f0_gts" for feature in self.features)

    def _features(self):
        num_mels = self._num_mels
        if num_mels is None:
            num_mels = self._mel_channels(self._mel_kind)
        features = [
            DumpFeature("mel_gts", self._mel_kind, (num_mels,)),
            DumpFeature("input_ids", layout.IDS),
            DumpFeature("speaker_ids", layout.SPEAKER_ID),
        ]
        with_durations = self._with_durations
        if with_durations is None:
            with_durations = self._has_files(layout.DURATIONS)
        if with_durations:
            features.append(DumpFeature("duration_gts", layout.DURATIONS))
        with_f0_energy = self._with_f0_energy
        if with_f0_energy is None:
            with_f0_energy = self._has_files(layout.F0) and self._has_files(layout.ENERGY)
        if with_f0_energy:
            features.append(DumpFeature("f0_gts", layout.F0))
            features.append(DumpFeature("energy_gts", layout.ENERGY))
        return features

    def _missing_hint(self, feature):
        if feature.key == "mel_gts" and self.use_norm:
            return " (or run tensorflow-tts-normalize, or pass use_norm=False)"
        if feature.key == "duration_gts":
            return " (or pass with_durations=False)"
        if feature.key in ("f0_gts", "energy_gts"):
            return " (or pass with_f0_energy=False)"
        return ""

    def _finish(self, example):
        example["mel_lengths"] = tf.shape(example["mel_gts"], out_type=tf.int32)[0]
        example["input_lengths"] = tf.shape(example["input_ids"], out_type=tf.int32)[0]
        if self.f0_stats is not None:
            for key, (mean, std) in (("f0_gts", self.f0_stats), ("energy_gts", self.energy_stats)):
                value = example[key]
                example[key] = tf.where(value != 0.0, (value - mean) / std, 0.0)
        return example

    @property
    def padding_values(self):
        return {"mel_gts": self.mel_pad_value}

    def longest_lengths(self):
        """{key: longest length in the split} for every padded axis of a batch (frames for
        mels, F0 and energy, tokens for ids and durations): the fixed shapes of
        `use_fixed_shapes`."""
        frames = int(self.mel_lengths.max())
        (ids,) = [feature for feature in self.features if feature.key == "input_ids"]
        tokens = int(self._rows(ids, self.utt_ids).max())
        per_key = {"mel_gts": frames, "f0_gts": frames, "energy_gts": frames, "input_ids": tokens, "duration_gts": tokens}
        return {feature.key: per_key[feature.key] for feature in self.features if feature.key in per_key}


#: The old TensorFlowTTS name, kept for scripts written against it.
CharactorDurationF0EnergyMelDataset = AcousticDataset
