"""Fixtures: real dumps (docs/dump_layout.md), written once per session: a tiny one of random
features, and the bundled corpus preprocessed."""

from pathlib import Path

import pytest

from tensorflow_tts.datasets.synthetic import write_synthetic_dump

TINY_DUMP_HOP_SIZE = 256


@pytest.fixture(scope="session")
def tiny_dump(tmp_path_factory):
    """A dump with 24 train and 6 valid utterances: ids of 10-60 tokens, 40-300 mel
    frames x 80, F0, energy, waves of frames * 256 samples, 2 speakers, durations.
    Shared by the session: tests must not change it (write their own for that)."""
    dump_dir = tmp_path_factory.mktemp("tiny_dump")
    write_synthetic_dump(dump_dir, num_utterances=24, split="train", seed=1, hop_size=TINY_DUMP_HOP_SIZE)
    write_synthetic_dump(dump_dir, num_utterances=6, split="valid", seed=2, hop_size=TINY_DUMP_HOP_SIZE)
    return dump_dir


@pytest.fixture(scope="session")
def corpus_dump(tmp_path_factory):
    """The bundled LJSpeech-layout corpus (test/files/corpus/ljspeech) preprocessed: 76 train and
    4 valid utterances, no durations. Shared by the session: tests must not change it."""
    from tensorflow_tts.bin import preprocess

    repo = Path(__file__).resolve().parents[1]
    dump = tmp_path_factory.mktemp("corpus_dump")
    status = preprocess.main(
        ["--rootdir", str(repo / "test" / "files" / "corpus" / "ljspeech"), "--outdir", str(dump),
         "--config", str(repo / "preprocess" / "ljspeech_preprocess.yaml"), "--dataset", "ljspeech", "--verbose", "0"]
    )
    assert status in (0, None)
    return dump
