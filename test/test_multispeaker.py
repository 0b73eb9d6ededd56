"""Multi-speaker FastSpeech2 on LibriTTS (1.8's fastspeech2_libritts): preprocess the bundled
three-speaker corpus, train a few steps with the recipe YAML sized from the dump, decode per speaker."""

import tensorflow_tts  # noqa: F401

from pathlib import Path

import numpy as np
import pytest
import yaml

from tensorflow_tts.dump import layout
from tensorflow_tts.recipes import fastspeech2
from tensorflow_tts.recipes.acoustic import load_recipe, restore_weights

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "test" / "files" / "corpus" / "libritts"
RECIPE = REPO / "examples" / "fastspeech2_libritts" / "conf" / "fastspeech2libritts.yaml"
# The recipe as shipped (n_speakers: null, 1.8's keys) with a small network and a short run.
SMALL = dict(
    encoder_hidden_size=64, encoder_num_hidden_layers=1, encoder_attention_head_size=32, encoder_intermediate_size=128,
    decoder_hidden_size=64, decoder_num_hidden_layers=1, decoder_attention_head_size=32, decoder_intermediate_size=128,
    variant_predictor_filter=64, n_conv_postnet=1, postnet_conv_filters=64,
)
RUN = dict(train_max_steps=2, save_interval_steps=2, eval_interval_steps=100, log_interval_steps=1, batch_size=4,
           use_griffin=False, aligner_params={"embedding_size": 32, "attention_channels": 32})


def recipe_file(path, **model_overrides):
    values = yaml.safe_load(RECIPE.read_text(encoding="utf-8"))
    values.update(RUN)
    values["fastspeech2_params"].update(SMALL, **model_overrides)
    path.write_text(yaml.safe_dump(values), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Preprocess the three-speaker corpus, then train the recipe two steps."""
    from tensorflow_tts.bin import preprocess

    root = tmp_path_factory.mktemp("multispeaker")
    dump = root / "dump"
    assert preprocess.main([
        "--rootdir", str(CORPUS), "--outdir", str(dump), "--config", str(REPO / "preprocess" / "libritts_preprocess.yaml"),
        "--dataset", "libritts", "--n_cpus", "1", "--verbose", "0", "--test_size", "3",
    ]) == 0
    config = recipe_file(root / "recipe.yaml")
    assert fastspeech2.train_main(["--dump-dir", str(dump), "--outdir", str(root / "exp"), "--config", str(config)]) == 0
    return {"root": root, "dump": dump, "config": config, "exp": root / "exp", "weights": pinned_weights(root)}


def pinned_weights(root):
    """The trained weights with 3 frames per token: two steps leave the duration predictor
    anywhere, and all-zero durations would decode empty mels that no speaker can change."""
    from tensorflow_tts.inference import save_pretrained

    recipe = load_recipe(root / "exp" / "config.yml", "fastspeech2")
    model, _ = fastspeech2.build_fastspeech2(recipe.model_config)
    restore_weights({"model": model}, str(root / "exp" / "checkpoints"))
    projection = model.duration_predictor.projection
    projection.kernel.assign(np.zeros(projection.kernel.shape, np.float32))
    projection.bias.assign([np.log(4.0)])
    save_pretrained(model, root / "pinned")
    return root / "pinned" / "model.h5"


def decode(run, outdir, *flags):
    status = fastspeech2.decode_main([
        "--rootdir", str(run["dump"] / "valid"), "--outdir", str(outdir), "--config", str(run["config"]),
        "--checkpoint", str(run["weights"]), *flags,
    ])
    assert status == 0
    mels = {path.name[: -len("-norm-feats.npy")]: np.load(path) for path in outdir.glob("*-norm-feats.npy")}
    lines = (outdir / "speakers.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "utt_id\tspeaker_id\tspeaker_name" and len(lines) == len(mels) + 1
    return mels, {utt_id: (int(speaker), name) for utt_id, speaker, name in (line.split("\t") for line in lines[1:])}


@pytest.fixture(scope="module")
def own_speakers(run):
    """The valid split decoded with each utterance's own speaker: (mels, {utt_id: (speaker id, name)})."""
    return decode(run, run["root"] / "decode_own")


def test_preprocessing_gives_each_speaker_folder_an_id(run):
    _, speakers_map = layout.read_speakers_map(run["dump"])
    assert sorted(speakers_map) == ["103", "1034", "19"] and sorted(speakers_map.values()) == [0, 1, 2]
    seen = set()
    for split in layout.SPLITS:
        for utt_id in layout.IDS.utt_ids(run["dump"] / split):
            speaker = int(layout.load_feature(layout.SPEAKER_ID, run["dump"] / split, utt_id))
            assert speaker == speakers_map[utt_id.split("_")[0]], utt_id
            seen.add(speaker)
    assert seen == {0, 1, 2}


def test_the_model_is_sized_from_the_dump_speakers(run):
    saved = yaml.safe_load((run["exp"] / "config.yml").read_text(encoding="utf-8"))
    assert saved["fastspeech2_params"]["n_speakers"] == 3  # null in the recipe, filled in from the dump
    recipe = load_recipe(run["exp"] / "config.yml", "fastspeech2")
    model, _ = fastspeech2.build_fastspeech2(recipe.model_config)
    restore_weights({"model": model}, str(run["exp"] / "checkpoints"))
    tables = [v for v in model.weights if "speaker_embedding/embedding/embeddings" in v.name]
    assert tables and all(table.shape[0] == 3 for table in tables)


def test_decoding_writes_each_utterance_with_its_own_speaker(run, own_speakers):
    mels, speakers = own_speakers
    _, speakers_map = layout.read_speakers_map(run["dump"])
    assert len(mels) == 3 and sorted(speakers) == sorted(mels)
    for utt_id, (speaker, name) in speakers.items():
        assert name == utt_id.split("_")[0] and speaker == speakers_map[name], utt_id


def test_another_speaker_gives_another_mel_of_the_same_text(run, own_speakers, tmp_path):
    own_mels, own = own_speakers
    utt_id = sorted(own)[0]
    other = (own[utt_id][0] + 1) % 3
    mels, speakers = decode(run, tmp_path, "--speaker-id", str(other), "--num-samples", "1")
    assert list(speakers) == [utt_id] and speakers[utt_id][0] == other
    a, b = own_mels[utt_id], mels[utt_id]
    assert a.shape == b.shape and a.shape[0] > 0  # the same pinned durations
    assert not np.allclose(a, b, atol=1e-3)


def test_a_speaker_id_the_model_lacks_is_refused(run, tmp_path, caplog):
    status = fastspeech2.decode_main([
        "--rootdir", str(run["dump"] / "valid"), "--outdir", str(tmp_path), "--config", str(run["config"]),
        "--checkpoint", str(run["exp"] / "checkpoints"), "--speaker-id", "3",
    ])
    assert status == 2 and "--speaker-id 3: the model has n_speakers 3 (ids 0..2)" in caplog.text


def test_n_speakers_smaller_than_the_dump_speakers_is_a_clear_error(run, tmp_path, caplog):
    config = recipe_file(tmp_path / "two.yaml", n_speakers=2)
    status = fastspeech2.train_main(["--dump-dir", str(run["dump"]), "--outdir", str(tmp_path / "exp"), "--config", str(config)])
    assert status == 2
    assert "n_speakers is 2, but" in caplog.text and "libritts_mapper.json has 3 speakers" in caplog.text
    assert "set n_speakers: 3, or null" in caplog.text and not (tmp_path / "exp" / "checkpoints").exists()


def test_n_speakers_null_without_a_dump_asks_for_a_number():
    from tensorflow_tts.configs.base_config import ConfigError

    with pytest.raises(ConfigError, match="n_speakers: null takes the number of speakers from the dump, but this "
                                          "command reads no dump; set a number"):
        load_recipe(RECIPE, "fastspeech2")
