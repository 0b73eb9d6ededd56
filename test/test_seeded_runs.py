"""Seeded runs: `seed` + `deterministic: true` make two runs of the training script end with the same weights."""

import os
import subprocess
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest
import yaml

from tensorflow_tts.datasets.synthetic import write_synthetic_dump
from tensorflow_tts.utils.seeding import seed_everything

REPO = Path(__file__).resolve().parents[1]
TINY_MODEL = dict(
    vocab_size=40, encoder_hidden_size=16, encoder_num_hidden_layers=1, encoder_num_attention_heads=2,
    encoder_attention_head_size=8, encoder_intermediate_size=24, decoder_hidden_size=16,
    decoder_num_hidden_layers=1, decoder_num_attention_heads=2, decoder_attention_head_size=8,
    decoder_intermediate_size=24, variant_predictor_filter=16, n_conv_postnet=1, postnet_conv_filters=16,
    num_mels=80, max_position_embeddings=256,
)


def h5_weights(path):
    weights = {}
    with h5py.File(path, "r") as stream:
        stream.visititems(lambda name, item: weights.update({name: item[()]}) if isinstance(item, h5py.Dataset) else None)
    return weights


# Two runs in one fresh process (its own op determinism, one TensorFlow start-up): one seeded
# by the YAML's seed key, one by --seed over a YAML without it.
RUN_TWO = """
import sys
from tensorflow_tts.recipes.fastspeech2 import train_main
train_dir, root = sys.argv[1:]
for name, extra in (("seed_key", []), ("seed_flag", ["--seed", "3"])):
    config = f"{root}/{name}.yaml"
    assert train_main(["--train-dir", train_dir, "--outdir", f"{root}/{name}", "--config", config, *extra]) == 0
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """2-step FastSpeech2 runs on 2 CPU replicas, with dropout, shuffling and gradient
    checkpointing on (so also: checkpointing works in the real step under MirroredStrategy).
    Returns {run name: {weight name: array}}."""
    root = tmp_path_factory.mktemp("seeded")
    write_synthetic_dump(root / "dump", num_utterances=16, frames_range=(20, 40), tokens_range=(5, 10), num_speakers=1)
    np.save(root / "dump" / "stats_f0.npy", np.array([180.0, 50.0], np.float32))
    np.save(root / "dump" / "stats_energy.npy", np.array([25.0, 14.0], np.float32))
    values = {
        "model_type": "fastspeech2", "fastspeech2_params": TINY_MODEL, "batch_size": 4, "mel_length_threshold": 0,
        "optimizer_params": {"initial_learning_rate": 0.01, "end_learning_rate": 0.001, "decay_steps": 2, "warmup_proportion": 0.0},
        "train_max_steps": 2, "save_interval_steps": 2, "eval_interval_steps": 2, "log_interval_steps": 1,
        "deterministic": True, "gradient_checkpointing": True,
    }
    (root / "seed_key.yaml").write_text(yaml.safe_dump({**values, "seed": 3}))
    (root / "seed_flag.yaml").write_text(yaml.safe_dump(values))
    env = {key: value for key, value in os.environ.items() if key != "TF_CONFIG"}
    env.update(TF_TTS_CPU_REPLICAS="2", TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=str(REPO))
    process = subprocess.run(
        [sys.executable, "-c", RUN_TWO, str(root / "dump" / "train"), str(root)],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert process.returncode == 0, process.stderr[-3000:]
    assert "on 2 replica(s)" in process.stderr
    assert "model recomputes the activations of 2 layer(s)" in process.stderr
    assert yaml.safe_load((root / "seed_flag" / "config.yml").read_text())["seed"] == 3
    return {name: h5_weights(root / name / "checkpoints" / "model-2.h5") for name in ("seed_key", "seed_flag")}


def test_two_runs_with_the_same_seed_end_with_identical_weights(runs):
    by_key, by_flag = runs["seed_key"], runs["seed_flag"]
    assert by_key.keys() == by_flag.keys() and len(by_key) > 10
    for name in by_key:
        np.testing.assert_array_equal(by_key[name], by_flag[name], err_msg=name)


def test_determinism_without_a_seed_is_refused():
    with pytest.raises(ValueError, match="needs a seed"):
        seed_everything(None, deterministic=True)
