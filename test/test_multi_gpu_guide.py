"""The multi-GPU guide for TensorFlowTTS 1.8, followed as written: preprocess, train on two
devices with mixed precision, resume, decode; and the guide's YAML keys one by one.

The end-to-end run executes the guide's commands on the checkout's scripts, in a folder that
holds the bundled corpus as ./LJSpeech-1.1 and the guide's relative paths. Two logical CPUs
(TF_TTS_CPU_REPLICAS=2) stand in for CUDA_VISIBLE_DEVICES=0,1. What differs from the guide:
`--test_size 20` (the 80-utterance corpus would give 4 valid utterances, and the guide decodes
20), and the v1 YAML is a copy with the guide's keys, a tiny model and a handful of steps.
"""

import tensorflow_tts  # noqa: F401

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
from tensorflow_tts.configs import ConfigError, PreprocessConfig
from tensorflow_tts.configs.trainer import TrainerConfig
from tensorflow_tts.optimizers import AdamWeightDecay, create_optimizer, pop_optimizer_params
from tensorflow_tts.recipes import acoustic, vocoder
from tensorflow_tts.utils.checkpoints import latest_checkpoint, restore_weights

REPO = Path(__file__).resolve().parents[1]
PREPROCESS_SCRIPT = REPO / "tensorflow_tts" / "bin" / "preprocess.py"
TRAIN_SCRIPT = REPO / "examples" / "fastspeech2" / "train_fastspeech2.py"
DECODE_SCRIPT = REPO / "examples" / "fastspeech2" / "decode_fastspeech2.py"

OUTDIR = "./examples/fastspeech2/exp/train.fastspeech2.v1/"
CONFIG = "./examples/fastspeech2/conf/fastspeech2.v1.yaml"
STATS = ["--f0-stat", "./dump/ljspeech/stats_f0.npy", "--energy-stat", "./dump/ljspeech/stats_energy.npy"]
TRAIN_COMMAND = [
    "--train-dir", "./dump/ljspeech/train/", "--dev-dir", "./dump/ljspeech/valid/",
    "--outdir", OUTDIR, "--config", CONFIG, "--use-norm", "1", *STATS, "--mixed_precision", "1",
]
LEARNING_RATE = 0.001
# The guide's YAML block, with steps shrunk.
GUIDE_KEYS = {
    "batch_size": 8,
    "max_steps": 2,
    "save_interval_steps": 2,
    "gradient_accumulation_steps": 2,
    "optimizer": {
        "type": "AdamWeightDecay",
        "args": {"lr": LEARNING_RATE, "weight_decay": 0.0001, "beta_1": 0.9, "beta_2": 0.98},
    },
    "num_workers": 2,
}
TINY_MODEL = dict(
    encoder_hidden_size=32, encoder_num_hidden_layers=1, encoder_attention_head_size=16, encoder_intermediate_size=64,
    decoder_hidden_size=32, decoder_num_hidden_layers=1, decoder_attention_head_size=16, decoder_intermediate_size=64,
    variant_predictor_filter=32, n_conv_postnet=1, postnet_conv_filters=32,
)


def guide_config(path, **changes):
    """fastspeech2.v1.yaml with the guide's keys in place of 1.8's, a tiny model, few steps."""
    values = yaml.safe_load((REPO / "examples" / "fastspeech2" / "conf" / "fastspeech2.v1.yaml").read_text())
    del values["train_max_steps"], values["optimizer_params"]  # the guide's max_steps / optimizer replace them
    values["fastspeech2_params"].update(TINY_MODEL)
    values["aligner_params"].update(embedding_size=32, attention_channels=32)
    # One log line per step, no evaluation pass: the run stays short.
    values.update(GUIDE_KEYS, log_interval_steps=1, eval_interval_steps=1000, **changes)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(values, sort_keys=False))
    return path


def run(script, *args, cwd):
    """`python <script> args` from the checkout, as a user runs it: no PYTHONPATH, two devices."""
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "TF_CONFIG")}
    env.update(CUDA_VISIBLE_DEVICES="0,1", TF_TTS_CPU_REPLICAS="2", TF_CPP_MIN_LOG_LEVEL="2")
    process = subprocess.run(
        [sys.executable, str(script), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert process.returncode == 0, process.stderr[-3000:]
    return process.stderr


@pytest.fixture(scope="module")
def guide(tmp_path_factory):
    """The guide's commands, in order, in a folder laid out as the guide expects."""
    root = tmp_path_factory.mktemp("guide")
    (root / "LJSpeech-1.1").symlink_to(REPO / "test" / "files" / "corpus" / "ljspeech")
    (root / "preprocess").mkdir()
    preprocess_config = yaml.safe_load((REPO / "preprocess" / "ljspeech_preprocess.yaml").read_text())
    preprocess_config["num_workers"] = 1
    (root / "preprocess" / "ljspeech_preprocess.yaml").write_text(yaml.safe_dump(preprocess_config))
    guide_config(root / CONFIG)
    logs = {}
    logs["preprocess"] = run(
        PREPROCESS_SCRIPT, "--rootdir", "./LJSpeech-1.1", "--outdir", "./dump/ljspeech",
        "--config", "preprocess/ljspeech_preprocess.yaml", "--test_size", "20", cwd=root,
    )
    logs["train"] = run(TRAIN_SCRIPT, *TRAIN_COMMAND, "--resume", "", cwd=root)
    shutil.copytree(root / OUTDIR / "train", root / "first_run_events")
    # Resume with a longer run, pointing at the checkpoint folder by the guide's name.
    guide_config(root / "longer.yaml", max_steps=3, save_interval_steps=3)
    longer = [*TRAIN_COMMAND[:7], "./longer.yaml", *TRAIN_COMMAND[8:]]
    logs["resume"] = run(TRAIN_SCRIPT, *longer, "--resume", OUTDIR + "checkpoint/", cwd=root)
    logs["decode"] = run(
        DECODE_SCRIPT, "--rootdir", "./dump/ljspeech/valid/", "--outdir", OUTDIR + "decode/",
        "--checkpoint", OUTDIR + "checkpoint/", "--config", CONFIG, "--use-norm", "1", *STATS, "--num-samples", "20",
        cwd=root,
    )
    return root, logs


def test_preprocess_runs_as_a_file_with_ljspeech_by_default(guide):
    root, logs = guide
    dump = root / "dump" / "ljspeech"
    for name in ("stats_f0.npy", "stats_energy.npy"):
        stats = np.load(dump / name)
        assert stats.shape == (2,) and np.all(np.isfinite(stats)) and stats[1] > 0
    assert len(np.load(dump / "valid_utt_ids.npy")) == 20
    assert "with 1 process(es)" in logs["preprocess"]  # the preprocess YAML's num_workers


def test_training_uses_two_devices_bfloat16_and_the_guide_keys(guide):
    root, logs = guide
    assert "training on 2 replica(s)" in logs["train"]
    assert "mixed precision: mixed_bfloat16" in logs["train"]
    # batch_size 8 per device x 2 devices, in the length buckets of the v1 recipe
    assert "batch sizes [16, 16" in logs["train"]
    events = read_events(str(root / "first_run_events"))
    assert events["total_loss"]["steps"] == [1, 2]  # max_steps: 2
    assert events["learning_rate"]["values"] == pytest.approx([LEARNING_RATE] * 2)  # the lr written
    assert np.all(np.isfinite(events["total_loss"]["values"]))
    checkpoints = root / OUTDIR / "checkpoints"
    assert (checkpoints / "ckpt-2.index").is_file() and (checkpoints / "model-2.h5").is_file()


def test_resume_continues_from_the_checkpoint_to_the_longer_max_steps(guide):
    root, logs = guide
    assert "resumed from" in logs["resume"] and "ckpt-2 at step 2" in logs["resume"]
    events = read_events(str(root / OUTDIR / "train"))
    assert sorted(events["total_loss"]["steps"]) == [1, 2, 3]
    assert tf.train.latest_checkpoint(str(root / OUTDIR / "checkpoints")).endswith("ckpt-3")


def test_decode_reads_the_guide_checkpoint_path_and_writes_20_mels(guide):
    root, logs = guide
    assert "checkpoints/ckpt-3" in logs["decode"]  # the log names the checkpoint used
    mels = sorted((root / OUTDIR / "decode").glob("*-norm-feats.npy"))
    assert len(mels) == 20
    for path in mels:
        mel = np.load(path)
        assert mel.ndim == 2 and mel.shape[1] == 80 and np.all(np.isfinite(mel))
        assert (path.parent / path.name.replace("-norm-feats.npy", ".png")).is_file()


def test_num_workers_sizes_the_input_pipeline(guide):
    root, _ = guide
    recipe = acoustic.load_recipe(root / CONFIG, "fastspeech2")
    batches, _ = acoustic.build_dataset(
        root / "dump" / "ljspeech" / "valid", recipe.data_config, use_norm=True, with_durations=False,
        n_speakers=1, vocab_size=recipe.model_config.vocab_size, num_replicas=1, training=False,
    )
    assert batches.options().threading.private_threadpool_size == GUIDE_KEYS["num_workers"]


# ---------------------------------------------------------------------------- the keys one by one


def test_max_steps_is_train_max_steps_and_a_disagreement_is_named():
    assert TrainerConfig.split({"max_steps": 7, "batch_size": 8})[0].train_max_steps == 7
    assert TrainerConfig.from_dict({"max_steps": 7, "train_max_steps": 7}).train_max_steps == 7
    with pytest.raises(ConfigError, match=r"max_steps \(7\) and train_max_steps \(9\)"):
        TrainerConfig.from_dict({"max_steps": 7, "train_max_steps": 9})


def test_optimizer_type_and_args_build_adamweightdecay_at_the_written_rate():
    values = {"optimizer": GUIDE_KEYS["optimizer"], "batch_size": 8}
    params = pop_optimizer_params(values)["optimizer_params"]
    assert values == {"batch_size": 8}
    optimizer = create_optimizer(params, train_max_steps=100)
    assert isinstance(optimizer, AdamWeightDecay)
    assert optimizer.weight_decay_rate == pytest.approx(0.0001) and optimizer.beta_2 == pytest.approx(0.98)
    for step in (0, 50, 100):
        assert float(optimizer._learning_rate(step)) == pytest.approx(LEARNING_RATE)


@pytest.mark.parametrize("values, message", [
    ({"optimizer": {"type": "SGD", "args": {"lr": 0.1}}}, "type 'SGD' is unknown; use one of AdamWeightDecay, Adam"),
    ({"optimizer": {"type": "Adam", "args": {"lr": 0.1, "momentum": 0.9}}}, "unknown key.*'momentum'"),
    ({"optimizer": {"type": "Adam", "args": {"weight_decay": 0.1}}}, "Adam has no weight decay"),
    ({"optimizer": {"args": {"lr": 0.1, "initial_learning_rate": 0.2}}}, "lr .* initial_learning_rate both given"),
    ({"optimizer": {"args": {"lr": 0.1}}, "optimizer_params": {"weight_decay": 0.1}}, "optimizer and optimizer_params"),
])
def test_optimizer_mistakes_are_named(values, message):
    with pytest.raises(ConfigError, match=message):
        pop_optimizer_params(values, source="my.yaml")


def test_optimizer_section_sets_both_optimizers_of_a_vocoder(tmp_path):
    values = yaml.safe_load((REPO / "examples" / "hifigan" / "conf" / "hifigan.v1.yaml").read_text())
    del values["generator_optimizer_params"], values["discriminator_optimizer_params"], values["train_max_steps"]
    values.update(optimizer=GUIDE_KEYS["optimizer"], max_steps=5, num_workers=3)
    path = tmp_path / "hifigan.yaml"
    path.write_text(yaml.safe_dump(values))
    _, _, trainer_config, vocoder_config = vocoder.load_recipe(path)
    assert trainer_config.train_max_steps == 5 and vocoder_config.num_workers == 3
    args = GUIDE_KEYS["optimizer"]["args"]
    assert vocoder_config.generator_optimizer_params == vocoder_config.discriminator_optimizer_params == args


def test_preprocess_num_workers_is_checked():
    with pytest.raises(ConfigError, match="num_workers"):
        PreprocessConfig.from_dict({"num_workers": 0})


def test_a_checkpoint_is_found_by_every_name_users_give_it(tmp_path):
    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    model.build([None, 3])
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model), tmp_path / "run" / "checkpoints", 2)
    saved = manager.save(checkpoint_number=4)
    model.save_weights(str(tmp_path / "run" / "checkpoints" / "model-4.h5"))
    run_dir = tmp_path / "run"
    names = [
        run_dir / "checkpoints",  # the folder the trainer writes
        str(run_dir / "checkpoint") + "/",  # the guide's name for it
        run_dir / "checkpoints" / "checkpoint",  # its index file
        run_dir,  # the run's outdir
        saved,  # a ckpt-N prefix
    ]
    for name in names:
        assert latest_checkpoint(name) == saved, name
    expected = model.get_weights()
    for name in (*names, run_dir / "checkpoints" / "model-4.h5"):
        fresh = tf.keras.Sequential([tf.keras.layers.Dense(2)])
        fresh.build([None, 3])
        restore_weights({"model": fresh}, name)
        for got, want in zip(fresh.get_weights(), expected, strict=True):
            np.testing.assert_array_equal(got, want)
