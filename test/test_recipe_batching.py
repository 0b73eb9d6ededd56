"""The published acoustic recipes batch by length: <= 10 % padded frames on LJSpeech's
lengths, with 1.8's batch size.

Each recipe's data keys go through the recipes' own `build_dataset` over a dump whose
utterances have LJSpeech's length spread (`ljspeech_lengths`; one mel channel, the padding
share does not depend on the channels). Plain padded batches of 16 pad ~29 % of the frames,
so a recipe that goes back to them fails here.
"""

import tensorflow_tts  # noqa: F401

from pathlib import Path

import pytest

from tensorflow_tts.datasets import ljspeech_lengths, write_synthetic_dump
from tensorflow_tts.recipes import acoustic, tacotron2

REPO = Path(__file__).resolve().parents[1]
PUBLISHED_RECIPES = [
    "fastspeech2/conf/fastspeech2.v1.yaml",
    "fastspeech2/conf/fastspeech2.jsut.v1.yaml",
    "fastspeech2/conf/fastspeech2.kss.v1.yaml",
    "fastspeech2/conf/fastspeech2.v2.yaml",
    "fastspeech2/conf/fastspeech2.baker.v2.yaml",
    "fastspeech2/conf/fastspeech2.kss.v2.yaml",
    "fastspeech2_libritts/conf/fastspeech2libritts.yaml",
    "fastspeech/conf/fastspeech.v1.yaml",
    "fastspeech/conf/fastspeech.v3.yaml",
    "tacotron2/conf/tacotron2.v1.yaml",
    "tacotron2/conf/tacotron2.baker.v1.yaml",
    "tacotron2/conf/tacotron2.kss.v1.yaml",
    "tacotron2/conf/tacotron2.lju.v1.yaml",
    "tacotron2/conf/tacotron2.synpaflex.v1.yaml",
]
UTTERANCES = 1500  # ~190 per length bucket: the share is within ~0.5 % of 13,100 utterances'
VOCAB_SIZE = 40
MAX_PADDING = 0.10


@pytest.fixture(scope="module")
def ljspeech_like_dump(tmp_path_factory):
    dump = tmp_path_factory.mktemp("ljspeech_lengths")
    frames, tokens = ljspeech_lengths(UTTERANCES)
    write_synthetic_dump(dump, num_utterances=UTTERANCES, num_mels=1, frame_lengths=frames, token_lengths=tokens,
                         num_speakers=1, vocab_size=VOCAB_SIZE, with_durations=False, with_norm_feats=False,
                         with_waves=False)
    return dump


def data_config(name, dump):
    path = REPO / "examples" / name
    if "tacotron2" in name:
        return tacotron2.load_recipe(path).data_config
    return acoustic.load_recipe(path, None, dump_dir=dump).data_config  # the dump sizes `n_speakers: null`


def one_epoch(dump, config):
    """(padded frames / all frames, mean utterances per batch) of one training epoch."""
    batches, dataset = acoustic.build_dataset(
        dump / "train", config, use_norm=False, with_durations=False, with_f0_energy=False, n_speakers=1,
        vocab_size=VOCAB_SIZE, num_replicas=1, training=True,
    )
    assert len(dataset) == UTTERANCES
    total = padded = utterances = count = 0
    for batch in batches.as_numpy_iterator():
        size, frames = batch["mel_gts"].shape[:2]
        total += size * frames
        padded += size * frames - int(batch["mel_lengths"].sum())
        utterances += size
        count += 1
    return padded / total, utterances / count


@pytest.mark.parametrize("name", PUBLISHED_RECIPES)
def test_published_recipe_pads_at_most_a_tenth_at_the_batch_size_of_1_8(ljspeech_like_dump, name):
    config = data_config(name, ljspeech_like_dump)
    share, per_batch = one_epoch(ljspeech_like_dump, config)
    assert share <= MAX_PADDING, f"{name}: {share:.1%} of the frames are padding"
    # 1.8 dropped the last partial batch; buckets end with one partial batch each.
    assert 0.9 * config.batch_size <= per_batch <= config.batch_size, f"{name}: {per_batch:.1f} utterances per step"


def test_plain_padded_batches_of_the_same_size_pad_far_more(ljspeech_like_dump):
    config = data_config(PUBLISHED_RECIPES[0], ljspeech_like_dump)
    config.batching = "padded"
    share, per_batch = one_epoch(ljspeech_like_dump, config)
    assert share > 0.2 and per_batch == pytest.approx(config.batch_size)
