"""tf.data pipelines over a real tiny dump: examples, filters, shuffling, batching modes."""

import collections

import numpy as np
import pytest

import tensorflow_tts  # noqa: F401  (sets up tf.keras before tensorflow is used)
from tensorflow_tts.datasets import (
    AcousticDataset,
    AudioMelDataset,
    CharactorDurationF0EnergyMelDataset,
    DumpError,
    frame_budget_batch_sizes,
    pad_to_lengths,
    padding_ratio,
    write_synthetic_dump,
)

HOP_SIZE = 256


def utt_order(dataset):
    return [utt_id.decode() for utt_id in dataset.map(lambda example: example["utt_ids"]).as_numpy_iterator()]


def batch_list(dataset):
    return list(dataset.as_numpy_iterator())


def load(dump, split, folder, utt_id, suffix):
    return np.load(dump / split / folder / f"{utt_id}-{suffix}.npy")


# -- examples --------------------------------------------------------------------------


def test_acoustic_examples_have_the_documented_keys_shapes_and_dtypes(tiny_dump):
    dataset = AcousticDataset(tiny_dump, "train")
    example = next(dataset.examples(shuffle=False).as_numpy_iterator())
    utt_id = example["utt_ids"].decode()
    frames = len(load(tiny_dump, "train", "raw-feats", utt_id, "raw-feats"))
    tokens = len(load(tiny_dump, "train", "ids", utt_id, "ids"))

    assert sorted(example) == sorted(
        ["utt_ids", "input_ids", "speaker_ids", "mel_gts", "mel_lengths", "input_lengths"]
        + ["duration_gts", "f0_gts", "energy_gts"]
    )
    assert example["input_ids"].dtype == np.int32 and example["input_ids"].shape == (tokens,)
    assert example["speaker_ids"].dtype == np.int32 and example["speaker_ids"].shape == ()
    assert example["mel_gts"].dtype == np.float32 and example["mel_gts"].shape == (frames, 80)
    assert example["duration_gts"].dtype == np.int32 and example["duration_gts"].sum() == frames
    assert example["f0_gts"].shape == (frames,) and example["energy_gts"].shape == (frames,)
    assert (example["mel_lengths"], example["input_lengths"]) == (frames, tokens)
    np.testing.assert_array_equal(example["mel_gts"], load(tiny_dump, "train", "norm-feats", utt_id, "norm-feats"))
    np.testing.assert_array_equal(example["input_ids"], load(tiny_dump, "train", "ids", utt_id, "ids"))


def test_use_norm_false_reads_raw_feats(tiny_dump):
    example = next(AcousticDataset(tiny_dump, "valid", use_norm=False).examples(shuffle=False).as_numpy_iterator())
    raw = load(tiny_dump, "valid", "raw-feats", example["utt_ids"].decode(), "raw-feats")
    np.testing.assert_array_equal(example["mel_gts"], raw)


def test_f0_and_energy_can_be_standardised_with_the_dump_stats(tiny_dump):
    example = next(AcousticDataset(tiny_dump, normalize_f0_energy=True).examples(shuffle=False).as_numpy_iterator())
    utt_id = example["utt_ids"].decode()
    f0 = load(tiny_dump, "train", "raw-f0", utt_id, "raw-f0")
    mean, std = np.load(tiny_dump / "stats_f0.npy")
    voiced = f0 != 0
    assert (example["f0_gts"][~voiced] == 0).all()
    np.testing.assert_allclose(example["f0_gts"][voiced], (f0[voiced] - mean) / std, rtol=1e-5)


def test_old_name_is_the_acoustic_dataset():
    assert CharactorDurationF0EnergyMelDataset is AcousticDataset


def test_durations_are_optional(tmp_path):
    write_synthetic_dump(tmp_path, num_utterances=3, with_durations=False, with_waves=False)
    dataset = AcousticDataset(tmp_path)
    assert not dataset.with_durations and dataset.with_f0_energy
    assert "duration_gts" not in dataset.examples().element_spec
    with pytest.raises(DumpError, match="durations"):
        AcousticDataset(tmp_path, with_durations=True)


def test_missing_norm_feats_error_names_the_fix(tmp_path):
    write_synthetic_dump(tmp_path, num_utterances=3, with_norm_feats=False, with_waves=False)
    with pytest.raises(DumpError, match="use_norm=False"):
        AcousticDataset(tmp_path)
    assert len(AcousticDataset(tmp_path, use_norm=False)) == 3


# -- filters ---------------------------------------------------------------------------


def test_utt_ids_filter_from_npy_text_or_list(tiny_dump, tmp_path):
    all_ids = list(np.load(tiny_dump / "train_utt_ids.npy"))
    chosen = sorted(all_ids[::5])
    np.save(tmp_path / "keep.npy", np.array(chosen))
    (tmp_path / "keep.txt").write_text("# kept\n" + "\n".join(chosen) + "\n\nnot-in-the-split\n", encoding="utf-8")

    for source in (tmp_path / "keep.npy", tmp_path / "keep.txt", chosen):
        dataset = AcousticDataset(tiny_dump, utt_ids=source)
        assert sorted(dataset.utt_ids) == chosen
        assert sorted(utt_order(dataset.examples())) == chosen


def test_mel_length_threshold_drops_short_utterances(tiny_dump):
    full = AcousticDataset(tiny_dump)
    threshold = int(np.median(full.mel_lengths))
    kept = AcousticDataset(tiny_dump, mel_length_threshold=threshold)

    assert 0 < len(kept) < len(full)
    assert kept.mel_lengths.min() > threshold
    lengths = [int(length) for length in kept.examples().map(lambda example: example["mel_lengths"])]
    assert sorted(lengths) == sorted(kept.mel_lengths.tolist())


def test_filtering_everything_out_is_an_error(tiny_dump):
    with pytest.raises(DumpError, match="no utterance left"):
        AcousticDataset(tiny_dump, mel_length_threshold=10_000)


# -- shuffling -------------------------------------------------------------------------


def test_shuffling_is_seeded_and_changes_every_epoch(tiny_dump):
    examples = AcousticDataset(tiny_dump).examples(seed=3)
    first_epoch, second_epoch = utt_order(examples), utt_order(examples)
    again = utt_order(AcousticDataset(tiny_dump).examples(seed=3))
    other_seed = utt_order(AcousticDataset(tiny_dump).examples(seed=4))

    assert first_epoch == again
    assert first_epoch != second_epoch and sorted(first_epoch) == sorted(second_epoch)
    assert first_epoch != other_seed


def test_cached_examples_match_uncached(tiny_dump):
    cached = AcousticDataset(tiny_dump, "valid", allow_cache=True).examples(shuffle=False)
    plain = AcousticDataset(tiny_dump, "valid").examples(shuffle=False)
    batch_list(cached)  # fills the cache
    for left, right in zip(batch_list(cached), batch_list(plain)):
        np.testing.assert_array_equal(left["mel_gts"], right["mel_gts"])
        assert left["utt_ids"] == right["utt_ids"]


# -- batching --------------------------------------------------------------------------


def test_padded_batches_pad_every_key(tiny_dump):
    dataset = AcousticDataset(tiny_dump, mel_pad_value=-4.0)
    batches = batch_list(dataset.create(batch_size=5, shuffle=False))

    assert [len(batch["utt_ids"]) for batch in batches] == [5, 5, 5, 5, 4]
    batch = batches[0]
    longest = batch["mel_lengths"].max()
    assert batch["mel_gts"].shape == (5, longest, 80)
    for row, utt_id in enumerate(batch["utt_ids"]):
        utt_id = utt_id.decode()
        frames, tokens = batch["mel_lengths"][row], batch["input_lengths"][row]
        mel = load(tiny_dump, "train", "norm-feats", utt_id, "norm-feats")
        np.testing.assert_array_equal(batch["mel_gts"][row, :frames], mel)
        assert (batch["mel_gts"][row, frames:] == -4.0).all()
        assert (batch["input_ids"][row, tokens:] == 0).all() and (batch["duration_gts"][row, tokens:] == 0).all()
        assert (batch["f0_gts"][row, frames:] == 0).all() and (batch["energy_gts"][row, frames:] == 0).all()


def test_fixed_shapes_pad_every_batch_to_the_longest_utterance_of_the_split(tiny_dump):
    dataset = AcousticDataset(tiny_dump, mel_pad_value=-4.0)
    lengths = dataset.longest_lengths()
    frames = max(load(tiny_dump, "train", "norm-feats", u, "norm-feats").shape[0] for u in dataset.utt_ids)
    tokens = max(load(tiny_dump, "train", "ids", u, "ids").shape[0] for u in dataset.utt_ids)
    assert lengths == {"mel_gts": frames, "f0_gts": frames, "energy_gts": frames,
                       "input_ids": tokens, "duration_gts": tokens}
    plain = batch_list(dataset.create(batch_size=5, shuffle=False))
    fixed = batch_list(pad_to_lengths(dataset.create(batch_size=5, shuffle=False), lengths, dataset.padding_values))
    assert len(fixed) == len(plain)
    for short, padded in zip(plain, fixed):
        for key, length in lengths.items():
            assert padded[key].shape[1] == length, key
            width = short[key].shape[1]
            np.testing.assert_array_equal(padded[key][:, :width], short[key], err_msg=key)
            pad_value = -4.0 if key == "mel_gts" else 0
            assert (padded[key][:, width:] == pad_value).all(), key
        np.testing.assert_array_equal(padded["mel_lengths"], short["mel_lengths"])


def test_drop_remainder_keeps_only_full_batches(tiny_dump):
    batches = batch_list(AcousticDataset(tiny_dump).create(batch_size=5, drop_remainder=True))
    assert [len(batch["utt_ids"]) for batch in batches] == [5, 5, 5, 5]


def test_batch_ratio_is_padded_over_all_frames(tiny_dump):
    for batch in AcousticDataset(tiny_dump).create(batch_size=6):
        lengths = batch["mel_lengths"].numpy()
        expected = 1.0 - lengths.sum() / (len(lengths) * lengths.max())
        assert float(padding_ratio(batch)) == pytest.approx(expected, rel=1e-5)
        np.testing.assert_allclose(batch["padding_ratio"].numpy(), expected, rtol=1e-5)


@pytest.mark.parametrize("allow_cache", [False, True], ids=["planned", "cached"])
def test_frame_budget_batches_fit_the_budget_and_cover_the_epoch_once(tiny_dump, allow_cache):
    dataset = AcousticDataset(tiny_dump, allow_cache=allow_cache)
    batches = dataset.create(batching="frames", batch_frames=1000, sort_window=12, seed=5)
    for _ in range(2):
        seen = collections.Counter()
        for batch in batch_list(batches):
            size, padded_frames = batch["mel_gts"].shape[:2]
            assert size * padded_frames <= 1000
            assert padded_frames == batch["mel_lengths"].max()
            seen.update(utt_id.decode() for utt_id in batch["utt_ids"])
        assert seen == collections.Counter(dataset.utt_ids.tolist())


@pytest.mark.parametrize("allow_cache", [False, True], ids=["planned", "cached"])
def test_frame_budget_batch_sizes_are_multiples_of_replicas(tiny_dump, allow_cache):
    dataset = AcousticDataset(tiny_dump, allow_cache=allow_cache)
    batches = batch_list(
        dataset.create(batching="frames", batch_frames=1200, num_replicas=2, drop_remainder=True, seed=1)
    )
    assert batches
    for batch in batches:
        size, padded_frames = batch["mel_gts"].shape[:2]
        assert size % 2 == 0 and size * padded_frames <= 1200


def test_frame_budget_batch_sizes_greedy_over_sorted_lengths():
    sizes = frame_budget_batch_sizes(np.array([10, 20, 30, 40, 50, 100, 300], np.int32), batch_frames=120)
    # [10, 20, 30, 40]: 4 * 40 > 120, so [10, 20, 30]; then [40, 50], [100]; 300 > 120 goes alone
    assert sizes.numpy().tolist() == [3, 2, 1, 1]
    sizes = frame_budget_batch_sizes(np.array([10] * 7, np.int32), batch_frames=60, batch_multiple=4)
    assert sizes.numpy().tolist() == [4, 3]


def test_length_aware_batching_pads_less_than_plain(tiny_dump):
    dataset = AcousticDataset(tiny_dump)

    def mean_ratio(batches):
        padded = total = 0
        for batch in batch_list(batches):
            size, frames = batch["mel_gts"].shape[:2]
            total += size * frames
            padded += size * frames - batch["mel_lengths"].sum()
        return padded / total

    plain = mean_ratio(dataset.create(batch_size=4, seed=0))
    bucketed = mean_ratio(dataset.create(batch_size=4, batching="bucket", num_buckets=6, seed=0))
    budget = mean_ratio(dataset.create(batching="frames", batch_frames=1200, seed=0))
    assert bucketed < plain and budget < plain


def test_bucket_with_frame_budget_stays_within_budget(tiny_dump):
    for batch in AcousticDataset(tiny_dump).create(batching="bucket", batch_frames=1200, num_buckets=4):
        assert batch["mel_gts"].shape[0] * batch["mel_gts"].shape[1] <= 1200


def test_batch_size_must_be_a_multiple_of_replicas(tiny_dump):
    with pytest.raises(ValueError, match="multiple of num_replicas"):
        AcousticDataset(tiny_dump).create(batch_size=5, num_replicas=2)


# -- vocoder ---------------------------------------------------------------------------


def test_audio_mel_examples_pair_whole_utterances(tiny_dump):
    dataset = AudioMelDataset(tiny_dump, "valid")
    assert dataset.hop_size == HOP_SIZE
    example = next(dataset.examples(shuffle=False).as_numpy_iterator())
    utt_id = example["utt_ids"].decode()
    frames = example["mel_lengths"]
    assert example["mels"].shape == (frames, 80) and example["audios"].dtype == np.float32
    assert example["audio_lengths"] == frames * HOP_SIZE
    np.testing.assert_array_equal(example["audios"], load(tiny_dump, "valid", "wavs", utt_id, "wave"))


def test_vocoder_segments_are_aligned_to_mel_frames(tiny_dump):
    segment_frames = 32
    dataset = AudioMelDataset(tiny_dump, batch_max_steps=segment_frames * HOP_SIZE)
    starts = set()
    for batch in batch_list(dataset.create(batch_size=8, seed=7)):
        assert batch["mels"].shape[1:] == (segment_frames, 80)
        assert batch["audios"].shape[1] == segment_frames * HOP_SIZE
        assert (batch["audio_lengths"] == segment_frames * HOP_SIZE).all()
        for row, utt_id in enumerate(batch["utt_ids"]):
            utt_id = utt_id.decode()
            mel = load(tiny_dump, "train", "norm-feats", utt_id, "norm-feats")
            wave = load(tiny_dump, "train", "wavs", utt_id, "wave")
            # Random features make every frame unique, so the first frame locates the segment.
            start = int(np.flatnonzero((mel == batch["mels"][row][0]).all(axis=1))[0])
            np.testing.assert_array_equal(batch["mels"][row], mel[start : start + segment_frames])
            np.testing.assert_array_equal(
                batch["audios"][row], wave[start * HOP_SIZE : (start + segment_frames) * HOP_SIZE]
            )
            starts.add(start)
    assert len(starts) > 1


def test_vocoder_segments_are_reproducible_and_change_every_epoch(tiny_dump):
    def segments(examples):
        return {example["utt_ids"]: example["audios"][:4].tolist() for example in examples.as_numpy_iterator()}

    examples = AudioMelDataset(tiny_dump, batch_max_steps=16 * HOP_SIZE).examples(seed=9)
    first, second = segments(examples), segments(examples)
    again = segments(AudioMelDataset(tiny_dump, batch_max_steps=16 * HOP_SIZE).examples(seed=9))
    assert first == again and first != second


def test_utterances_shorter_than_a_segment_are_left_out(tiny_dump):
    segment_frames = 200
    dataset = AudioMelDataset(tiny_dump, batch_max_steps=segment_frames * HOP_SIZE)
    assert 0 < len(dataset) < 24 and dataset.mel_lengths.min() >= segment_frames


def test_batch_max_steps_must_be_whole_frames(tiny_dump):
    with pytest.raises(ValueError, match="multiple of hop_size"):
        AudioMelDataset(tiny_dump, batch_max_steps=1000)
