"""Sharded dumps: the .npy -> TFRecord converter, the index, both layouts read alike, FILE sharding, the cache budget."""

import shutil
import types
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
import yaml
from tensorflow.python.data.experimental.ops.distribute import _AutoShardDataset

import tensorflow_tts  # noqa: F401  (sets up tf.keras before tensorflow is used)
from tensorflow_tts.bin import preprocess, shard_dump
from tensorflow_tts.datasets import AcousticDataset, AudioMelDataset
from tensorflow_tts.datasets.memory import CacheTooLargeError, check_cache_fits
from tensorflow_tts.dump import layout
from tensorflow_tts.dump.screening import screen_utterances
from tensorflow_tts.dump.shards import ShardIndex
from tensorflow_tts.recipes import acoustic, tacotron2

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "test" / "files" / "corpus" / "ljspeech"
STORED_KINDS = (layout.IDS, layout.MEL, layout.NORM_MEL, layout.F0, layout.ENERGY, layout.WAVE, layout.SPEAKER_ID,
                layout.DURATIONS)


@pytest.fixture(scope="module")
def sharded_dump(tiny_dump, tmp_path_factory):
    """tiny_dump converted to shards of 5 utterances (train: 5 shards, valid: 2), beside it."""
    outdir = tmp_path_factory.mktemp("sharded_dump")
    assert shard_dump.main(["--rootdir", str(tiny_dump), "--outdir", str(outdir), "--utterances_per_shard", "5",
                            "--verbose", "0"]) == 0
    return outdir


def read_records(index, kind):
    """{utt_id: array} of every record of `kind`, decoded with numpy from the TFRecord files."""
    values = {}
    records = [record for path in index.shard_paths(kind) for record in tf.data.TFRecordDataset(str(path)).as_numpy_iterator()]
    for utt_id, record, rows in zip(index.utt_ids, records, index.rows_of(kind)):
        value = np.frombuffer(record, dtype=np.dtype(kind.dtype).newbyteorder("<"))
        values[str(utt_id)] = value.reshape(()) if kind.scalar else value.reshape(int(rows), *index.inner_shape(kind))
    return values


def utt_ids_of(batches):
    return [utt_id.decode() for batch in batches.as_numpy_iterator() for utt_id in batch["utt_ids"]]


def test_shards_hold_every_feature_kind_unchanged(tiny_dump, sharded_dump):
    index = ShardIndex.load(sharded_dump / "train")
    assert list(index.utt_ids) == layout.load_utt_ids(tiny_dump, "train")
    assert index.num_shards == 5 and list(index.shard_starts) == [0, 5, 10, 15, 20, 24]
    assert sorted(index.kinds) == sorted(kind.folder for kind in STORED_KINDS)
    for kind in STORED_KINDS:
        records = read_records(index, kind)
        for utt_id in index.utt_ids:
            stored = layout.load_feature(kind, tiny_dump / "train", utt_id)
            np.testing.assert_array_equal(records[str(utt_id)], stored, err_msg=f"{kind.folder} {utt_id}")
    # A handful of files instead of one per feature per utterance; the small top-level files come along.
    assert len(list((sharded_dump / "train" / layout.SHARDS_FOLDER).iterdir())) == 5 * len(STORED_KINDS) + 1
    assert (sharded_dump / layout.STATS_NAME).is_file() and (sharded_dump / "train_utt_ids.npy").is_file()


def test_the_index_alone_gives_lengths_speakers_and_screening(tiny_dump, sharded_dump, tmp_path):
    index_only = tmp_path / "index_only"
    (index_only / "train" / layout.SHARDS_FOLDER).mkdir(parents=True)
    shutil.copy(layout.shard_index_path(sharded_dump / "train"), layout.shard_index_path(index_only / "train"))

    dataset = AcousticDataset(index_only, "train")
    reference = AcousticDataset(tiny_dump, "train")
    np.testing.assert_array_equal(dataset.utt_ids, reference.utt_ids)
    np.testing.assert_array_equal(dataset.mel_lengths, reference.mel_lengths)
    assert dataset.num_mels == 80 and dataset.with_durations and dataset.with_f0_energy
    assert dataset.longest_lengths() == reference.longest_lengths()
    index = ShardIndex.load(index_only / "train")
    speakers = [int(layout.load_feature(layout.SPEAKER_ID, tiny_dump / "train", utt_id)) for utt_id in index.utt_ids]
    np.testing.assert_array_equal(index.speaker_ids, speakers)
    assert AudioMelDataset(index_only, "train").hop_size == 256

    options = dict(with_durations=True, n_speakers=2, vocab_size=40)
    assert screen_utterances(index_only, "train", **options).kept == screen_utterances(tiny_dump, "train", **options).kept
    with pytest.raises(ValueError, match="speaker id 1 is outside"):
        screen_utterances(index_only, "train", n_speakers=1)


@pytest.mark.parametrize("batching", ["padded", "frames"])
def test_acoustic_batches_are_the_same_from_both_layouts(tiny_dump, sharded_dump, batching):
    size = dict(batch_size=4) if batching == "padded" else dict(batch_frames=1200)
    from_npy = AcousticDataset(tiny_dump, "train").create(batching=batching, shuffle=False, **size)
    from_shards = AcousticDataset(sharded_dump, "train").create(batching=batching, shuffle=False, **size)
    npy_batches, shard_batches = list(from_npy.as_numpy_iterator()), list(from_shards.as_numpy_iterator())
    assert len(npy_batches) == len(shard_batches) > 1
    for npy_batch, shard_batch in zip(npy_batches, shard_batches):
        assert npy_batch.keys() == shard_batch.keys()
        for key in npy_batch:
            np.testing.assert_array_equal(npy_batch[key], shard_batch[key], err_msg=key)


def test_vocoder_segments_are_the_same_from_both_layouts(tiny_dump, sharded_dump):
    options = dict(batch_max_steps=40 * 256, mel_length_threshold=50)
    from_npy = AudioMelDataset(tiny_dump, "train", **options).create(3, shuffle=False, seed=3)
    from_shards = AudioMelDataset(sharded_dump, "train", **options).create(3, shuffle=False, seed=3)
    for npy_batch, shard_batch in zip(from_npy.as_numpy_iterator(), from_shards.as_numpy_iterator(), strict=True):
        for key in npy_batch:
            np.testing.assert_array_equal(npy_batch[key], shard_batch[key], err_msg=key)


def test_shuffled_shards_cover_the_split_once_per_epoch_in_a_new_order(sharded_dump):
    dataset = AcousticDataset(sharded_dump, "train", utt_ids=[f"train-001-{index:05d}" for index in range(2, 24)])
    batches = dataset.create(batch_frames=1200, batching="bucket", shuffle=True, seed=5)
    first, second = utt_ids_of(batches), utt_ids_of(batches)
    assert sorted(first) == sorted(second) == sorted(dataset.utt_ids)
    assert first != second
    assert first == utt_ids_of(dataset.create(batch_frames=1200, batching="bucket", shuffle=True, seed=5))


@pytest.mark.parametrize("shuffle", [False, True])
def test_two_workers_read_disjoint_whole_shards_covering_the_split(sharded_dump, shuffle):
    dataset = AcousticDataset(sharded_dump, "train")
    index = ShardIndex.load(sharded_dump / "train")
    shard_of = {str(utt_id): int(np.searchsorted(index.shard_starts, position, side="right")) - 1
                for position, utt_id in enumerate(index.utt_ids)}
    # What MultiWorkerMirroredStrategy applies to each worker's copy of the dataset.
    per_worker = [utt_ids_of(_AutoShardDataset(dataset.create(2, shuffle=shuffle), 2, worker)) for worker in (0, 1)]
    assert not set(per_worker[0]) & set(per_worker[1])
    assert sorted(per_worker[0] + per_worker[1]) == sorted(dataset.utt_ids)
    shards = [{shard_of[utt_id] for utt_id in utt_ids} for utt_ids in per_worker]
    assert shards == [{0, 2, 4}, {1, 3}]


def test_allow_cache_refuses_a_split_over_its_share_of_ram(tiny_dump, sharded_dump):
    for dump in (tiny_dump, sharded_dump):
        dataset = AcousticDataset(dump, "train", allow_cache=True, cache_max_ram_fraction=1e-9)
        with pytest.raises(CacheTooLargeError, match=r"about [\d.]+e?-?\d* GB .*cache_max_ram_fraction=1e-09"):
            dataset.examples()
    # From the index, the estimate is the decoded arrays' exact size.
    dataset = AudioMelDataset(sharded_dump, "train")
    exact = sum(value.nbytes for example in dataset.examples(shuffle=False).as_numpy_iterator()
                for key, value in example.items() if key in ("mels", "audios"))
    assert dataset.cache_bytes() == exact
    with pytest.raises(CacheTooLargeError, match=r"about 3 GB .* limit of 2 GB \(cache_max_ram_fraction=0.5 of 4 GB RAM\)"):
        check_cache_fits("DUMP/train", 3 << 30, 0.5, ram=4 << 30)
    check_cache_fits("DUMP/train", 1 << 30, 0.5, ram=4 << 30)


def test_decoding_reads_the_same_utterances_from_both_layouts(tiny_dump, sharded_dump):
    config = types.SimpleNamespace(vocab_size=40, n_speakers=2)
    from_npy = acoustic.read_utterances(tiny_dump / "valid", 4, config)
    from_shards = acoustic.read_utterances(sharded_dump / "valid", 4, config)
    assert [utt_id for utt_id, _, _ in from_shards] == [utt_id for utt_id, _, _ in from_npy] and len(from_npy) == 4
    for (_, npy_ids, npy_speaker), (_, shard_ids, shard_speaker) in zip(from_npy, from_shards):
        np.testing.assert_array_equal(npy_ids, shard_ids)
        assert npy_speaker == shard_speaker


def test_converter_reports_a_folder_without_features(tmp_path, caplog):
    (tmp_path / "empty" / "train").mkdir(parents=True)
    assert shard_dump.main(["--rootdir", str(tmp_path / "empty"), "--verbose", "0"]) == 1
    assert "no split folder with .npy features" in caplog.text


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory):
    """The first 12 utterances of the bundled LJSpeech-layout corpus."""
    root = tmp_path_factory.mktemp("ljspeech")
    lines = (CORPUS / "metadata.csv").read_text(encoding="utf-8").splitlines()[:12]
    (root / "wavs").mkdir()
    for line in lines:
        shutil.copy(CORPUS / "wavs" / f"{line.split('|')[0]}.wav", root / "wavs")
    (root / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def test_preprocess_writes_shards_that_tacotron2_trains_on(small_corpus, tmp_path):
    dump = tmp_path / "dump"
    assert preprocess.main(["--rootdir", str(small_corpus), "--outdir", str(dump), "--config",
                            str(REPO / "preprocess" / "ljspeech_preprocess.yaml"), "--dataset", "ljspeech",
                            "--test_size", "2", "--n_cpus", "2", "--format", "shards", "--verbose", "0"]) == 0
    for split, count in (("train", 10), ("valid", 2)):
        index = ShardIndex.load(dump / split)
        # Far below --shard_mb, yet cut into one shard per utterance: a small split still
        # has a shard for every worker (up to 16).
        assert len(index.utt_ids) == index.num_shards == count
        assert sorted(path.name for path in (dump / split).iterdir()) == [layout.SHARDS_FOLDER]

    values = yaml.safe_load((REPO / "examples" / "tacotron2" / "conf" / "tacotron2.tiny.yaml").read_text())
    values.update(train_max_steps=2, save_interval_steps=2, eval_interval_steps=2, log_interval_steps=1, batch_size=2)
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(values))
    status = tacotron2.train_main(["--train-dir", str(dump / "train"), "--dev-dir", str(dump / "valid"),
                                   "--outdir", str(tmp_path / "exp"), "--config", str(config), "--use-norm", "1",
                                   "--verbose", "0"])
    assert status == 0
    assert (tmp_path / "exp" / "checkpoints" / "ckpt-2.index").is_file()
