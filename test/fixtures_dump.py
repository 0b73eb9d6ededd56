"""Fixtures: a real tiny dump (docs/dump_layout.md) of random features, written once per session."""

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
