"""tensorflow-tts-preprocess, -compute-statistics and -normalize on real (tiny) corpora."""

import json
import logging
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from tensorflow_tts.bin import compute_statistics as compute_statistics_cli
from tensorflow_tts.bin import normalize as normalize_cli
from tensorflow_tts.bin import preprocess as preprocess_cli
from tensorflow_tts.configs import ConfigError, PreprocessConfig

ROOT = Path(__file__).parents[1]
CORPUS = Path(__file__).parent / "files" / "corpus"
LJSPEECH_CONFIG = ROOT / "preprocess" / "ljspeech_preprocess.yaml"
KINDS = {  # folder: (file suffix, dtype)
    "ids": ("ids", np.int32),
    "raw-feats": ("raw-feats", np.float32),
    "norm-feats": ("norm-feats", np.float32),
    "raw-f0": ("raw-f0", np.float32),
    "raw-energies": ("raw-energy", np.float32),
    "wavs": ("wave", np.float32),
    "speaker-ids": ("speaker-ids", np.int32),
}


def preprocess(corpus, outdir, *flags, config=LJSPEECH_CONFIG, dataset="ljspeech"):
    argv = ["--rootdir", str(corpus), "--outdir", str(outdir), "--config", str(config), "--dataset", dataset]
    return preprocess_cli.main([*argv, "--n_cpus", "1", *flags])


def feature(dump, split, folder, utt_id):
    suffix, _ = KINDS[folder]
    return np.load(Path(dump) / split / folder / f"{utt_id}-{suffix}.npy")


def utt_ids(dump, split):
    return list(np.load(Path(dump) / f"{split}_utt_ids.npy"))


def all_mels(dump, split, folder="raw-feats"):
    return np.concatenate([feature(dump, split, folder, utt_id) for utt_id in utt_ids(dump, split)])


def write_config(path, **overrides):
    values = yaml.safe_load(LJSPEECH_CONFIG.read_text())
    values.update(overrides)
    path.write_text(yaml.safe_dump(values))
    return path


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory):
    """The first 16 utterances of the bundled LJSpeech-layout corpus."""
    root = tmp_path_factory.mktemp("ljspeech")
    lines = (CORPUS / "ljspeech" / "metadata.csv").read_text(encoding="utf-8").splitlines()[:16]
    (root / "wavs").mkdir()
    for line in lines:
        utt_id = line.split("|")[0]
        shutil.copy(CORPUS / "ljspeech" / "wavs" / f"{utt_id}.wav", root / "wavs")
    (root / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def dump(small_corpus, tmp_path_factory):
    outdir = tmp_path_factory.mktemp("dump")
    assert preprocess(small_corpus, outdir, "--test_size", "0.25", "--seed", "7", "--n_cpus", "2") == 0
    return outdir


# --- the dump layout ---------------------------------------------------------------------------


def test_dump_follows_the_layout(dump):
    config = PreprocessConfig.from_yaml(LJSPEECH_CONFIG)
    mapper = json.loads((dump / "ljspeech_mapper.json").read_text(encoding="utf-8"))
    assert set(mapper) >= {"symbol_to_id", "id_to_symbol", "speakers_map", "processor_name"}
    train, valid = utt_ids(dump, "train"), utt_ids(dump, "valid")
    assert (len(train), len(valid)) == (12, 4)
    assert not set(train) & set(valid)

    for split, ids in (("train", train), ("valid", valid)):
        for folder, (suffix, dtype) in KINDS.items():
            files = sorted((dump / split / folder).iterdir())
            assert [f.name for f in files] == [f"{utt_id}-{suffix}.npy" for utt_id in ids], (split, folder)
        for utt_id in ids:
            arrays = {folder: feature(dump, split, folder, utt_id) for folder in KINDS}
            for folder, (_, dtype) in KINDS.items():
                assert arrays[folder].dtype == dtype, (utt_id, folder)
            frames = len(arrays["raw-feats"])
            assert arrays["raw-feats"].shape == arrays["norm-feats"].shape == (frames, config.num_mels)
            assert arrays["raw-f0"].shape == arrays["raw-energies"].shape == (frames,)
            assert arrays["wavs"].shape == (frames * config.hop_size,)
            assert arrays["speaker-ids"].shape == () and arrays["speaker-ids"] == mapper["speakers_map"]["ljspeech"]
            assert arrays["ids"][-1] == mapper["symbol_to_id"]["eos"]

    assert np.load(dump / "stats.npy").shape == (2, config.num_mels)
    assert np.load(dump / "stats.npy").dtype == np.float32
    assert np.load(dump / "stats_f0.npy").shape == np.load(dump / "stats_energy.npy").shape == (2,)
    report = json.loads((dump / "preprocess_report.json").read_text(encoding="utf-8"))
    assert (report["n_ok"], report["skipped"], report["converted"]) == (16, [], [])
    assert PreprocessConfig.from_yaml(dump / "preprocess_config.yml") == config  # the settings it was made with
    assert not (dump / ".preprocess-staging").exists()


def test_split_is_reproducible_whatever_the_number_of_cores(dump, small_corpus, tmp_path):
    assert preprocess(small_corpus, tmp_path / "again", "--test_size", "0.25", "--seed", "7") == 0
    assert utt_ids(tmp_path / "again", "valid") == utt_ids(dump, "valid")
    assert utt_ids(tmp_path / "again", "train") == utt_ids(dump, "train")
    utt_id = utt_ids(dump, "valid")[0]
    np.testing.assert_array_equal(
        feature(tmp_path / "again", "valid", "raw-feats", utt_id), feature(dump, "valid", "raw-feats", utt_id)
    )

    assert preprocess(small_corpus, tmp_path / "other", "--test_size", "0.25", "--seed", "8") == 0
    assert utt_ids(tmp_path / "other", "valid") != utt_ids(dump, "valid")


def test_statistics_come_from_the_train_split_only(dump):
    train = all_mels(dump, "train")
    everything = np.concatenate([train, all_mels(dump, "valid")])
    stats = np.load(dump / "stats.npy")
    np.testing.assert_allclose(stats, [train.mean(axis=0), train.std(axis=0)], rtol=1e-4, atol=1e-5)
    assert not np.allclose(stats[0], everything.mean(axis=0), rtol=1e-4, atol=1e-5)


def test_f0_and_energy_statistics_use_voiced_frames_of_train(dump):
    f0 = np.concatenate([feature(dump, "train", "raw-f0", u) for u in utt_ids(dump, "train")])
    energy = np.concatenate([feature(dump, "train", "raw-energies", u) for u in utt_ids(dump, "train")])
    assert np.any(f0 == 0)  # there are unvoiced frames to leave out
    np.testing.assert_allclose(np.load(dump / "stats_f0.npy"), [f0[f0 > 0].mean(), f0[f0 > 0].std()], rtol=1e-4)
    np.testing.assert_allclose(
        np.load(dump / "stats_energy.npy"), [energy[energy > 0].mean(), energy[energy > 0].std()], rtol=1e-4
    )


def test_normalized_train_mel_has_zero_mean_and_unit_std_per_bin(dump):
    normalized = all_mels(dump, "train", "norm-feats")
    np.testing.assert_allclose(normalized.mean(axis=0), 0.0, atol=1e-4)
    np.testing.assert_allclose(normalized.std(axis=0), 1.0, atol=1e-4)


def test_statistics_and_normalize_commands_reproduce_preprocess(dump, tmp_path):
    copy = tmp_path / "dump"
    shutil.copytree(dump, copy)
    for name in ("stats.npy", "stats_f0.npy", "stats_energy.npy"):
        (copy / name).unlink()
    for split in ("train", "valid"):
        shutil.rmtree(copy / split / "norm-feats")
    config = str(LJSPEECH_CONFIG)

    statistics_argv = ["--rootdir", str(copy / "train"), "--outdir", str(copy), "--config", config]
    assert compute_statistics_cli.main(statistics_argv) == 0
    assert normalize_cli.main(
        ["--rootdir", str(copy), "--outdir", str(copy), "--config", config, "--stats", str(copy / "stats.npy")]
    ) == 0

    for name in ("stats.npy", "stats_f0.npy", "stats_energy.npy"):
        np.testing.assert_array_equal(np.load(copy / name), np.load(dump / name))
    for split in ("train", "valid"):
        for utt_id in utt_ids(dump, split):
            np.testing.assert_array_equal(
                feature(copy, split, "norm-feats", utt_id), feature(dump, split, "norm-feats", utt_id)
            )


def test_rerunning_into_a_dump_removes_stale_utterances(dump, small_corpus, tmp_path):
    copy = tmp_path / "dump"
    shutil.copytree(dump, copy)
    stale = copy / "train" / "raw-feats" / "gone-raw-feats.npy"
    np.save(stale, np.zeros((3, 80), np.float32))
    assert preprocess(small_corpus, copy, "--test_size", "0.25", "--seed", "7") == 0
    assert not stale.exists()
    np.testing.assert_array_equal(np.load(copy / "stats.npy"), np.load(dump / "stats.npy"))


# --- bad input ---------------------------------------------------------------------------------

BROKEN_SKIPPED = {
    "metadata.csv line 11 (empty-text)": "empty text",
    "metadata.csv line 12 (few-fields)": "expected 3 fields separated by '|', got 1",
    "metadata.csv line 13": "utterance id '../x' is not a plain file name",
    "missing-wav": "file not found",
    "zero-length": "zero-length audio",
    "truncated-header": "truncated or corrupt WAV header",
    "unreadable": "not a readable audio file",
    "no-known-symbols": "no known symbols in text '#~^*'",
    "too-long": "too long: 1.88 s after trimming silence, above max_duration_seconds=1.5",
    "silence": "silent",
}
BROKEN_CONVERTED = {
    "unknown-symbols": "dropped character(s) with no symbol: '~' '#'",
    "stereo": "2 channels mixed down to mono",
    "rate-44100": "resampled from 44100 Hz to 22050 Hz",
    "pcm-u8": "sample format PCM_U8 converted to float32",
    "float32": "sample format FLOAT converted to float32",
}
BROKEN_OK = {f"good-{number:02d}" for number in range(1, 7)} | set(BROKEN_CONVERTED)


@pytest.fixture(scope="module")
def broken_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("broken")
    config = write_config(tmp / "config.yaml", max_duration_seconds=1.5)
    handler = _ListHandler()
    logging.getLogger().addHandler(handler)
    try:
        code = preprocess(CORPUS / "broken", tmp / "dump", config=config)
    finally:
        logging.getLogger().removeHandler(handler)
    report = json.loads((tmp / "dump" / "preprocess_report.json").read_text(encoding="utf-8"))
    return code, tmp / "dump", report, handler.messages


class _ListHandler(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_broken_corpus_skips_exactly_the_unusable_items(broken_run):
    code, _, report, _ = broken_run
    assert code == 0
    skipped = {entry["item"]: entry["reason"] for entry in report["skipped"]}
    assert set(skipped) == set(BROKEN_SKIPPED)
    for item, reason in BROKEN_SKIPPED.items():
        assert skipped[item].startswith(reason), (item, skipped[item])


def test_broken_corpus_converts_exactly_the_odd_but_usable_items(broken_run):
    _, _, report, _ = broken_run
    assert {entry["item"]: entry["reason"] for entry in report["converted"]} == BROKEN_CONVERTED


def test_broken_corpus_keeps_every_good_item(broken_run):
    metadata = (CORPUS / "broken" / "metadata.csv").read_bytes()
    assert metadata.startswith(b"\xef\xbb\xbfgood-01|") and metadata.count(b"\r\n") == 19
    _, dump, report, _ = broken_run
    assert report["n_ok"] == len(BROKEN_OK)
    assert set(utt_ids(dump, "train")) | set(utt_ids(dump, "valid")) == BROKEN_OK
    assert sorted(p.name for p in dump.iterdir() if p.is_dir()) == ["train", "valid"]


def test_broken_corpus_logs_one_line_per_bad_item(broken_run):
    _, _, report, messages = broken_run
    for entry in report["skipped"] + report["converted"]:
        lines = [m for m in messages if entry["item"] in m and entry["reason"] in m]
        assert lines and all("\n" not in m for m in lines), entry


def test_converted_audio_is_stored_as_mono_at_the_config_rate(broken_run):
    _, dump, _, _ = broken_run
    split = {utt_id: split for split in ("train", "valid") for utt_id in utt_ids(dump, split)}
    good = feature(dump, split["good-04"], "wavs", "good-04")
    for utt_id in ("stereo", "rate-44100", "pcm-u8", "float32"):
        wave = feature(dump, split[utt_id], "wavs", utt_id)
        assert wave.ndim == 1 and abs(len(wave) - len(good)) <= 2 * 256, utt_id


def test_no_usable_item_is_a_failure(tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "wavs").mkdir(parents=True)
    (corpus / "metadata.csv").write_text("missing|Some text.|Some text.\n", encoding="utf-8")
    assert preprocess(corpus, tmp_path / "dump") == 1
    report = json.loads((tmp_path / "dump" / "preprocess_report.json").read_text(encoding="utf-8"))
    assert report["n_ok"] == 0 and report["skipped"] == [{"item": "missing", "reason": "file not found"}]


def test_unknown_config_key_stops_before_any_work(tmp_path, caplog):
    config = write_config(tmp_path / "config.yaml", hop_lenght=256)
    assert preprocess(CORPUS / "broken", tmp_path / "dump", config=config) == 2
    assert "hop_lenght" in caplog.text
    assert not (tmp_path / "dump").exists()


def test_unknown_dataset_and_missing_corpus_are_usage_errors(tmp_path, caplog):
    assert preprocess(CORPUS / "broken", tmp_path / "dump", dataset="nosuchcorpus") == 2
    assert "nosuchcorpus" in caplog.text and "ljspeech" in caplog.text
    assert preprocess(tmp_path / "nowhere", tmp_path / "dump") == 2


# --- config ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted((ROOT / "preprocess").glob("*_preprocess.yaml")), ids=lambda p: p.name)
def test_every_bundled_preprocess_config_loads(path):
    config = PreprocessConfig.from_yaml(path)
    assert config.mel_fmax <= config.sampling_rate / 2


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("hop_size", 0, "hop_size: expected a whole number > 0"),
        ("fft_size", -1024, "fft_size: expected a whole number > 0"),
        ("num_mels", True, "num_mels: expected a whole number > 0"),
        ("sampling_rate", 22050.5, "sampling_rate: expected a whole number > 0"),
        ("fmax", 12000, "fmax: 12000 Hz is above the Nyquist frequency"),
        ("fmin", 8000, "fmin: 8000.0 Hz must be below fmax"),
        ("win_length", 2048, "win_length: 2048 is larger than fft_size"),
        ("hop_size", 2048, "hop_size: 2048 is larger than the window"),
        ("window", "nosuchwindow", "window: 'nosuchwindow' is not a known window function"),
        ("format", "hdf5", "format: 'hdf5' is not supported"),
        ("trim_silence", "yes please", "trim_silence: expected true or false"),
        ("trim_threshold_in_db", -60, "trim_threshold_in_db: expected a number > 0"),
        ("global_gain_scale", 0, "global_gain_scale: expected a number > 0"),
        ("max_duration_seconds", 0, "max_duration_seconds: expected a number > 0"),
        ("hop_lenght", 256, "unknown key(s) 'hop_lenght'"),
    ],
)
def test_invalid_config_values_name_the_key(tmp_path, key, value, message):
    config = write_config(tmp_path / "config.yaml", **{key: value})
    with pytest.raises(ConfigError, match=re.escape(f"config.yaml: {message}")):
        PreprocessConfig.from_yaml(config)
