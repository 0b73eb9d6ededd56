"""FastSpeech2 and FastSpeech training from the bundled corpus: built-in aligner, extracted durations, decoding."""

import tensorflow_tts  # noqa: F401

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
import yaml

from helpers.events import read_events
from tensorflow_tts.configs import FastSpeech2Config
from tensorflow_tts.recipes import fastspeech, fastspeech2
from tensorflow_tts.recipes.durations import extract_durations_main
from tensorflow_tts.recipes.fastspeech2 import FastSpeech2Trainer, build_fastspeech2

REPO = Path(__file__).resolve().parents[1]

TINY_CONFIG = REPO / "examples" / "fastspeech2" / "conf" / "fastspeech2.tiny.yaml"
TRAIN_SCRIPT = REPO / "examples" / "fastspeech2" / "train_fastspeech2.py"


def write_config(path, source, model_overrides=None, **overrides):
    values = yaml.safe_load(Path(source).read_text())
    values.update(overrides)
    params_key = f"{values['model_type']}_params"
    values[params_key] = {**values[params_key], **(model_overrides or {})}
    path.write_text(yaml.safe_dump(values))
    return path


SHORT_RUN = dict(train_max_steps=3, save_interval_steps=3, eval_interval_steps=3, log_interval_steps=1, batch_size=4)
# Fewer layers: tracing the training step dominates these runs' time.
SMALL_FASTSPEECH2 = dict(encoder_num_hidden_layers=1, decoder_num_hidden_layers=1, n_conv_postnet=1)


@pytest.fixture(scope="session")
def ljspeech_dump(tmp_path_factory):
    """The bundled LJSpeech-layout corpus preprocessed once per session (no durations/)."""
    from tensorflow_tts.bin import preprocess

    dump = tmp_path_factory.mktemp("ljspeech_dump")
    status = preprocess.main([
        "--rootdir", str(REPO / "test" / "files" / "corpus" / "ljspeech"),
        "--outdir", str(dump),
        "--config", str(REPO / "preprocess" / "ljspeech_preprocess.yaml"),
        "--dataset", "ljspeech",
        "--n_cpus", "1",
        "--verbose", "0",
    ])
    assert status in (0, None)
    assert not (dump / "train" / "durations").exists()
    return dump


@pytest.fixture(scope="module")
def aligner_run(ljspeech_dump, tmp_path_factory):
    """A few FastSpeech2 steps with the built-in aligner under 2 logical-CPU replicas."""
    root = tmp_path_factory.mktemp("fastspeech2_aligner_run")
    config = write_config(root / "tiny.yaml", TINY_CONFIG, SMALL_FASTSPEECH2, **SHORT_RUN)
    env = {key: value for key, value in os.environ.items() if key not in ("TF_CONFIG",)}
    env.update(TF_TTS_CPU_REPLICAS="2", TF_CPP_MIN_LOG_LEVEL="2")
    process = subprocess.run(
        [sys.executable, str(TRAIN_SCRIPT), "--dump-dir", str(ljspeech_dump), "--outdir", str(root / "exp"),
         "--config", str(config), "--use-norm", "1"],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert process.returncode == 0, process.stderr[-3000:]
    return {"outdir": root / "exp", "config": config, "log": process.stderr}


def test_fastspeech2_trains_with_the_builtin_aligner_on_two_replicas(aligner_run):
    outdir = aligner_run["outdir"]
    assert "built-in aligner" in aligner_run["log"]
    assert "on 2 replica(s)" in aligner_run["log"] and "padded batches of 8" in aligner_run["log"]
    checkpoints = outdir / "checkpoints"
    assert (checkpoints / "ckpt-3.index").exists()
    assert (checkpoints / "model-3.h5").exists() and (checkpoints / "aligner-3.h5").exists()
    events = read_events(str(outdir / "train"))
    for tag in ("total_loss", "mel_loss_after", "duration_loss", "forward_sum_loss", "binarization_loss"):
        assert np.all(np.isfinite(events[tag]["values"])), tag
    assert np.isfinite(read_events(str(outdir / "eval"))["total_loss"]["values"]).all()
    assert glob.glob(str(outdir / "predictions" / "3steps" / "alignment_0.png"))


def test_extracted_durations_sum_to_mel_lengths(aligner_run, ljspeech_dump, tmp_path):
    dump = Path(shutil.copytree(ljspeech_dump, tmp_path / "dump"))
    status = extract_durations_main([
        "--dump-dir", str(dump), "--checkpoint", str(aligner_run["outdir"] / "checkpoints"),
        "--config", str(aligner_run["config"]), "--batch-size", "16",
    ])
    assert status == 0
    for split in ("train", "valid"):
        utt_ids = np.load(dump / f"{split}_utt_ids.npy")
        for utt_id in utt_ids:
            durations = np.load(dump / split / "durations" / f"{utt_id}-durations.npy")
            ids = np.load(dump / split / "ids" / f"{utt_id}-ids.npy")
            mel = np.load(dump / split / "norm-feats" / f"{utt_id}-norm-feats.npy", mmap_mode="r")
            assert durations.dtype == np.int32 and durations.shape == ids.shape
            assert (durations >= 0).all() and durations.sum() == mel.shape[0]


@pytest.fixture(scope="module")
def dump_with_bad_durations(aligner_run, ljspeech_dump, tmp_path_factory):
    """The corpus with extracted durations, one of them 3 frames short, and one empty utterance."""
    dump = Path(shutil.copytree(ljspeech_dump, tmp_path_factory.mktemp("dump_durations") / "dump"))
    assert extract_durations_main([
        "--dump-dir", str(dump), "--checkpoint", str(aligner_run["outdir"] / "checkpoints" / "aligner-3.h5"),
        "--config", str(aligner_run["config"]), "--verbose", "0",
    ]) == 0
    train = dump / "train"
    first = str(np.load(dump / "train_utt_ids.npy")[0])
    durations = np.load(train / "durations" / f"{first}-durations.npy")
    durations[-1] = max(durations[-1] - 3, 0)
    np.save(train / "durations" / f"{first}-durations.npy", durations)
    # An utterance whose text produced no token at all.
    np.save(train / "ids" / "empty-ids.npy", np.zeros([0], np.int32))
    np.save(train / "durations" / "empty-durations.npy", np.zeros([0], np.int32))
    for folder, suffix, value in (("norm-feats", "norm-feats", np.zeros([40, 80], np.float32)),
                                  ("raw-feats", "raw-feats", np.zeros([40, 80], np.float32)),
                                  ("raw-f0", "raw-f0", np.zeros([40], np.float32)),
                                  ("raw-energies", "raw-energy", np.zeros([40], np.float32)),
                                  ("speaker-ids", "speaker-ids", np.int32(0))):
        np.save(train / folder / f"empty-{suffix}.npy", value)
    np.save(dump / "train_utt_ids.npy", np.append(np.load(dump / "train_utt_ids.npy"), "empty"))
    return dump, first


def test_fastspeech2_uses_dump_durations_and_survives_bad_items(dump_with_bad_durations, tmp_path, caplog):
    dump, fixed_utt = dump_with_bad_durations
    config = write_config(tmp_path / "tiny.yaml", TINY_CONFIG, SMALL_FASTSPEECH2,
                          **{**SHORT_RUN, "train_max_steps": 2, "save_interval_steps": 2, "eval_interval_steps": 100})
    with caplog.at_level("WARNING"):
        status = fastspeech2.train_main(["--dump-dir", str(dump), "--outdir", str(tmp_path / "exp"), "--config", str(config)])
    assert status == 0
    assert "empty token sequence" in caplog.text and fixed_utt in caplog.text
    assert yaml.safe_load((tmp_path / "exp" / "config.yml").read_text())["use_internal_aligner"] is False
    assert (tmp_path / "exp" / "checkpoints" / "model-2.h5").exists()
    assert not (tmp_path / "exp" / "checkpoints" / "aligner-2.h5").exists()


def test_fastspeech_trains_from_dump_durations(dump_with_bad_durations, tmp_path):
    dump, _ = dump_with_bad_durations
    small = dict(encoder_hidden_size=64, encoder_num_hidden_layers=1, encoder_attention_head_size=32,
                 encoder_intermediate_size=64, decoder_hidden_size=64, decoder_num_hidden_layers=1,
                 decoder_attention_head_size=32, decoder_intermediate_size=64, duration_predictor_filters=32,
                 n_conv_postnet=1, postnet_conv_filters=32)
    config = write_config(tmp_path / "fs.yaml", REPO / "examples" / "fastspeech" / "conf" / "fastspeech.v1.yaml", small,
                          **{**SHORT_RUN, "train_max_steps": 2, "save_interval_steps": 2, "eval_interval_steps": 100})
    status = fastspeech.train_main(["--dump-dir", str(dump), "--outdir", str(tmp_path / "exp"), "--config", str(config)])
    assert status == 0
    events = read_events(str(tmp_path / "exp" / "train"))
    assert np.isfinite(events["total_loss"]["values"]).all()
    assert (tmp_path / "exp" / "checkpoints" / "model-2.h5").exists()


def test_fastspeech_without_durations_says_how_to_get_them(ljspeech_dump, tmp_path, caplog):
    config = REPO / "examples" / "fastspeech" / "conf" / "fastspeech.v1.yaml"
    status = fastspeech.train_main(["--dump-dir", str(ljspeech_dump), "--outdir", str(tmp_path), "--config", str(config)])
    assert status == 2 and "extract_durations.py" in caplog.text


def test_decode_writes_mels_and_plots(aligner_run, ljspeech_dump, tmp_path):
    status = fastspeech2.decode_main([
        "--rootdir", str(ljspeech_dump / "valid"), "--outdir", str(tmp_path),
        "--checkpoint", str(aligner_run["outdir"] / "checkpoints" / "model-3.h5"),
        "--config", str(aligner_run["config"]), "--num-samples", "2",
    ])
    assert status == 0
    mels = sorted(tmp_path.glob("*-norm-feats.npy"))
    assert len(mels) == 2 and len(list(tmp_path.glob("*.png"))) == 2
    assert np.load(mels[0]).shape[1] == 80


def test_decode_rejects_a_non_positive_speed_ratio(tmp_path, capsys):
    with pytest.raises(SystemExit) as error:
        fastspeech2.parse_decode_args(["--rootdir", "x", "--outdir", str(tmp_path), "--checkpoint", "x",
                                        "--config", "x", "--speed-ratio", "0"])
    assert error.value.code == 2 and "--speed-ratio 0.0: must be > 0" in capsys.readouterr().err


# ------------------------------------------------------------------ 1.8 recipe keys that no config class holds

# The key layout of TensorFlowTTS 1.8's LibriTTS FastSpeech2 recipe (sizes shrunk), with
# the two 1.8-only keys: use_griffin (read by 1.8) and delay_f0_energy_steps (never read).
ORIGINAL_STYLE_RECIPE = """
hop_size: 300
format: "npy"
model_type: fastspeech2
fastspeech2_params:
    dataset: "libritts"
    n_speakers: 20
    encoder_hidden_size: 64
    encoder_num_hidden_layers: 1
    encoder_num_attention_heads: 2
    encoder_attention_head_size: 32
    encoder_intermediate_size: 128
    encoder_intermediate_kernel_size: 3
    encoder_hidden_act: "mish"
    decoder_hidden_size: 64
    decoder_num_hidden_layers: 1
    decoder_num_attention_heads: 2
    decoder_attention_head_size: 32
    decoder_intermediate_size: 128
    decoder_intermediate_kernel_size: 3
    decoder_hidden_act: "mish"
    variant_prediction_num_conv_layers: 2
    variant_predictor_filter: 64
    variant_predictor_kernel_size: 3
    variant_predictor_dropout_rate: 0.5
    num_mels: 80
    hidden_dropout_prob: 0.2
    attention_probs_dropout_prob: 0.1
    max_position_embeddings: 2048
    initializer_range: 0.02
    output_attentions: False
    output_hidden_states: False
batch_size: 32
remove_short_samples: true
allow_cache: true
mel_length_threshold: 48
is_shuffle: true
optimizer_params:
    initial_learning_rate: 0.0001
    end_learning_rate: 0.00001
    decay_steps: 120000
    warmup_proportion: 0.02
    weight_decay: 0.001
gradient_accumulation_steps: 1
var_train_expr: null
train_max_steps: 150000
save_interval_steps: 5000
eval_interval_steps: 5000
log_interval_steps: 200
delay_f0_energy_steps: 3
use_griffin: true
num_save_intermediate_results: 1
"""


def test_an_original_recipe_with_1_8_only_keys_loads(tmp_path, caplog):
    from tensorflow_tts.recipes.acoustic import load_recipe

    path = tmp_path / "fastspeech2libritts.yaml"
    path.write_text(ORIGINAL_STYLE_RECIPE)
    with caplog.at_level("WARNING", logger="tensorflow_tts.recipe"):
        recipe = load_recipe(path, "fastspeech2")
    assert recipe.use_griffin is True
    assert recipe.model_config.n_speakers == 20 and recipe.data_config.hop_size == 300
    warnings = [record.getMessage() for record in caplog.records if record.levelname == "WARNING"]
    assert len(warnings) == 1 and "delay_f0_energy_steps is ignored" in warnings[0] and str(path) in warnings[0]


def test_use_griffin_must_be_a_boolean(tmp_path):
    from tensorflow_tts.configs.base_config import ConfigError
    from tensorflow_tts.recipes.acoustic import load_recipe

    path = tmp_path / "recipe.yaml"
    path.write_text(ORIGINAL_STYLE_RECIPE.replace("use_griffin: true", "use_griffin: 'yes'"))
    with pytest.raises(ConfigError, match="use_griffin: expected true or false"):
        load_recipe(path, "fastspeech2")


@pytest.mark.parametrize(
    "path", sorted((REPO / "examples").glob("fastspeech*/conf/*.yaml")), ids=lambda path: path.name
)
def test_every_fastspeech_example_recipe_loads(path, tmp_path):
    from tensorflow_tts.processor import LJSpeechProcessor
    from tensorflow_tts.recipes.acoustic import load_recipe

    processor = LJSpeechProcessor()
    processor.save_mapper(tmp_path / processor.mapper_file_name())  # as preprocessing: sizes `n_speakers: null`
    recipe = load_recipe(path, None, dump_dir=tmp_path)
    assert recipe.use_griffin is (path.name == "fastspeech2libritts.yaml")


def test_use_griffin_writes_griffin_lim_audio_at_evaluation(ljspeech_dump, tmp_path):
    config = write_config(tmp_path / "tiny.yaml", TINY_CONFIG, SMALL_FASTSPEECH2, use_griffin=True,
                          **{**SHORT_RUN, "train_max_steps": 1, "save_interval_steps": 1, "eval_interval_steps": 1})
    outdir = tmp_path / "exp"
    # No --dataset_config: the preprocessing settings recorded in the dump are used.
    assert (ljspeech_dump / "preprocess_config.yml").is_file()
    status = fastspeech2.train_main([
        "--dump-dir", str(ljspeech_dump), "--outdir", str(outdir), "--config", str(config),
    ])
    assert status == 0
    events = read_events(str(outdir / "eval"))
    for name in ("before_postnet", "after_postnet", "target"):
        entry = events[f"griffin_lim/{name}/0"]
        assert entry["plugin"] == "audio" and entry["steps"] == [1], name
    wav = tf.audio.decode_wav(tf.io.read_file(str(outdir / "predictions" / "1steps" / "griffin_lim_target_0.wav")))
    assert int(wav.sample_rate) == 22050 and wav.audio.shape[0] % 256 == 0
    assert float(tf.reduce_max(tf.abs(wav.audio))) > 0.0  # Griffin-Lim of a real mel is not silence


def test_use_griffin_without_preprocess_settings_warns_and_goes_on(tmp_path, caplog):
    from tensorflow_tts.recipes.acoustic import eval_griffin_lim, load_recipe

    recipe = load_recipe(TINY_CONFIG, "fastspeech2")
    griffin_lim = eval_griffin_lim(recipe, None, tmp_path, tmp_path / "stats.npy", use_norm=True, num_mels=80)
    assert griffin_lim is None and "--dataset_config" in caplog.text


def test_use_griffin_with_preprocess_settings_of_another_hop_is_an_error(ljspeech_dump, tmp_path):
    from tensorflow_tts.configs import ConfigError
    from tensorflow_tts.recipes.acoustic import eval_griffin_lim, load_recipe

    other = tmp_path / "other.yaml"
    other.write_text((ljspeech_dump / "preprocess_config.yml").read_text().replace("hop_size: 256", "hop_size: 300"))
    recipe = load_recipe(TINY_CONFIG, "fastspeech2")
    with pytest.raises(ConfigError, match="hop_size is 300"):
        eval_griffin_lim(recipe, other, ljspeech_dump, ljspeech_dump / "stats.npy", use_norm=True, num_mels=80)


# ------------------------------------------------------------------ inference behaviour of the trained-model class


def tiny_model(n_speakers=1):
    config = FastSpeech2Config(
        n_speakers=n_speakers, encoder_hidden_size=32, encoder_num_hidden_layers=1, encoder_attention_head_size=16,
        encoder_intermediate_size=32, decoder_hidden_size=32, decoder_num_hidden_layers=1,
        decoder_attention_head_size=16, decoder_intermediate_size=32, variant_predictor_filter=16,
        n_conv_postnet=1, postnet_conv_filters=16, num_mels=8, max_position_embeddings=512,
    )
    tf.keras.utils.set_random_seed(0)
    model, _ = build_fastspeech2(config)
    # Durations of about 3.5 frames per token, varying a little with the input.
    model.duration_predictor.projection.bias.assign([1.5])
    return model


def infer(model, speaker=0, speed=1.0):
    input_ids = tf.constant([[5, 9, 12, 40, 33, 7, 8, 2]], tf.int32)
    one = tf.constant([1.0])
    return model.inference(input_ids, tf.constant([speaker], tf.int32), tf.constant([speed]), one, one)


@pytest.mark.parametrize("speed_ratio", [2.0, 0.5])
def test_speed_ratio_scales_the_output_length(speed_ratio):
    model = tiny_model()
    base_durations = infer(model)[2].numpy()[0]
    mel, durations = infer(model, speed=speed_ratio)[1].numpy(), infer(model, speed=speed_ratio)[2].numpy()[0]
    num_tokens = len(base_durations)
    assert mel.shape[1] == durations.sum()
    # 2.0 speaks twice as fast: half the frames, within rounding of one frame per token.
    assert abs(durations.sum() - base_durations.sum() / speed_ratio) <= num_tokens


def test_different_speakers_give_different_outputs():
    model = tiny_model(n_speakers=3)
    first, second = infer(model, speaker=0)[1].numpy(), infer(model, speaker=1)[1].numpy()
    assert not np.allclose(first[:, : min(first.shape[1], second.shape[1])], second[:, : min(first.shape[1], second.shape[1])])


def test_trainer_is_importable_with_the_usual_constructor():
    trainer = FastSpeech2Trainer(config={"outdir": "unused"}, strategy=tf.distribute.get_strategy(), steps=0, epochs=0,
                                 is_mixed_precision=False)
    assert trainer.aligner is None and trainer.aligner_config.binarization_start_steps >= 0
