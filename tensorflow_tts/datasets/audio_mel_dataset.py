"""AudioMelDataset: waveform and mel pairs from a dump, optionally cut into aligned segments.

For vocoders (MelGAN, Multi-band MelGAN, HiFi-GAN).
"""

import logging

import numpy as np
import tensorflow as tf

from tensorflow_tts.datasets.dump_dataset import DumpDataset, DumpError, DumpFeature
from tensorflow_tts.dump import layout

AUTOTUNE = tf.data.AUTOTUNE

logger = logging.getLogger(__name__)


class AudioMelDataset(DumpDataset):
    """Examples for vocoders, one per utterance of a dump split.

    An example is a dict:
        utt_ids: tf.string scalar
        audios: float32 `(T_audio,)`, `T_audio = T_mel * hop_size`
        mels: float32 `(T_mel, num_mels)`, norm-feats with `use_norm`, else raw-feats
        mel_lengths, audio_lengths: int32 scalars

    With `batch_max_steps`, every epoch cuts each utterance at a fresh random mel frame
    `start` (seeded, reproducible): `mels[start:start + frames]` and
    `audios[start * hop_size:(start + frames) * hop_size]` with `frames = batch_max_steps
    // hop_size`. Utterances shorter than that are left out.

    Args:
        dump_dir, split, utt_ids, mel_length_threshold, max_mel_length, allow_cache,
        cache_max_ram_fraction: see `DumpDataset`. With `allow_cache` whole utterances
            are cached and the segments are still cut anew every epoch.
        use_norm: read `norm-feats` (True) or `raw-feats` (False).
        batch_max_steps: segment length in samples, a multiple of `hop_size`; None
            yields whole utterances.
        hop_size: samples per mel frame; None infers it from the first utterance.
        mel_pad_value: pad value of `mels` in batches.
    """

    frames_key = "mels"

    def __init__(
        self,
        dump_dir,
        split="train",
        *,
        use_norm=True,
        batch_max_steps=None,
        hop_size=None,
        mel_pad_value=0.0,
        utt_ids=None,
        mel_length_threshold=0,
        max_mel_length=None,
        allow_cache=False,
        cache_max_ram_fraction=0.5,
    ):
        self.use_norm = use_norm
        self.mel_pad_value = mel_pad_value
        self._mel_kind = layout.mel_kind(use_norm)
        super().__init__(
            dump_dir,
            split,
            utt_ids=utt_ids,
            mel_length_threshold=mel_length_threshold,
            max_mel_length=max_mel_length,
            allow_cache=allow_cache,
            cache_max_ram_fraction=cache_max_ram_fraction,
        )
        self.hop_size = hop_size if hop_size is not None else self._infer_hop_size()
        self.batch_max_steps = batch_max_steps
        self.segment_frames = None
        if batch_max_steps is not None:
            if batch_max_steps % self.hop_size:
                raise ValueError(
                    f"batch_max_steps={batch_max_steps} is not a multiple of hop_size={self.hop_size}; "
                    f"use {batch_max_steps // self.hop_size * self.hop_size} or "
                    f"{(batch_max_steps // self.hop_size + 1) * self.hop_size}"
                )
            self.segment_frames = batch_max_steps // self.hop_size
            keep = self.mel_lengths >= self.segment_frames
            if not keep.any():
                raise DumpError(
                    f"{self.split_dir}: no utterance has {self.segment_frames} mel frames for "
                    f"batch_max_steps={batch_max_steps}; lower batch_max_steps"
                )
            if not keep.all():
                logger.info(
                    "%s: %d utterance(s) shorter than batch_max_steps=%d are left out",
                    self.split_dir,
                    int((~keep).sum()),
                    batch_max_steps,
                )
            self.utt_ids = self.utt_ids[keep]
            self.mel_lengths = self.mel_lengths[keep]

    @property
    def num_mels(self):
        return self.features[0].inner_shape[0]

    def _features(self):
        return [
            DumpFeature("mels", self._mel_kind, (self._mel_channels(self._mel_kind),)),
            DumpFeature("audios", layout.WAVE),
        ]

    def _infer_hop_size(self):
        mel_feature, audio_feature = self.features
        utt_id = self.utt_ids[0]
        frames, samples = (int(self._rows(feature, [utt_id])[0]) for feature in (mel_feature, audio_feature))
        if frames == 0 or samples % frames:
            raise DumpError(
                f"{self.split_dir}: utterance {utt_id} has {samples} samples for {frames} mel frames, "
                "not a whole number per frame; pass hop_size or rerun preprocessing"
            )
        return samples // frames

    def _finish(self, example):
        mel_lengths = tf.shape(example["mels"], out_type=tf.int32)[0]
        audio_lengths = tf.size(example["audios"], out_type=tf.int32)
        check = tf.debugging.Assert(
            tf.equal(audio_lengths, mel_lengths * self.hop_size),
            [
                f"wave samples != mel frames * hop_size ({self.hop_size}), breaking the dump layout; utterance:",
                example["utt_ids"],
                "samples:",
                audio_lengths,
                "frames:",
                mel_lengths,
            ],
        )
        with tf.control_dependencies([check]):
            example["mel_lengths"] = tf.identity(mel_lengths)
        example["audio_lengths"] = audio_lengths
        return example

    def _transform(self, examples, seed):
        if self.segment_frames is None:
            return examples
        frames = self.segment_frames
        hop_size = self.hop_size

        def crop(example, pair_seed):
            start = tf.random.stateless_uniform(
                [], seed=pair_seed, minval=0, maxval=example["mel_lengths"] - frames + 1, dtype=tf.int32
            )
            cropped = dict(example)
            cropped["mels"] = example["mels"][start : start + frames]
            cropped["audios"] = example["audios"][start * hop_size : (start + frames) * hop_size]
            cropped["mel_lengths"] = tf.constant(frames, tf.int32)
            cropped["audio_lengths"] = tf.constant(frames * hop_size, tf.int32)
            return cropped

        # One seed pair per example, drawn from a seeded stream that changes every epoch;
        # stateless cropping then gives the same segments whatever the parallelism.
        seeds = tf.data.Dataset.random(seed=seed, rerandomize_each_iteration=True).batch(2)
        return tf.data.Dataset.zip((examples, seeds)).map(crop, num_parallel_calls=AUTOTUNE)

    def _rows_per_frame(self, feature):
        return self.hop_size if feature.key == "audios" else 1

    def _example_lengths(self):
        if self.segment_frames is None:
            return self.mel_lengths
        return np.full_like(self.mel_lengths, self.segment_frames)

    @property
    def padding_values(self):
        return {"mels": self.mel_pad_value}
