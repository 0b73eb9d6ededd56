"""Multi-replica equivalence: 2 logical CPUs x B, 2 workers (TF_CONFIG) x B and 2 logical CPUs x
B/2 x 2 accumulated batches all equal 1 replica x 2B."""

import tensorflow_tts  # noqa: F401

import numpy as np
import pytest

from helpers.processes import finish, free_port, start_training, tf_config
from helpers.tiny import build_seq2seq_trainer, make_dataset, trainer_config
from tensorflow_tts.trainers.base_trainer import _learning_rate

STEPS = 3
PER_REPLICA_BATCH = 4


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Start the 2-replica runs and both workers at once (they overlap their start-up), then wait."""
    root = tmp_path_factory.mktemp("distributed")
    common = ["--steps", STEPS, "--batch-size", PER_REPLICA_BATCH]
    mirrored = start_training(
        ["--outdir", root / "mirrored", "--weights-out", root / "mirrored.npz", *common],
        {"TF_TTS_CPU_REPLICAS": "2"},
    )
    accumulated = start_training(
        ["--outdir", root / "accumulated", "--weights-out", root / "accumulated.npz", "--steps", STEPS,
         "--batch-size", PER_REPLICA_BATCH // 2, "--accumulation", 2],
        {"TF_TTS_CPU_REPLICAS": "2"},
    )
    ports = [free_port(), free_port()]
    workers = [
        start_training(
            ["--outdir", root / f"worker{index}", "--weights-out", root / f"worker{index}.npz", *common],
            {"TF_CONFIG": tf_config(ports, index)},
        )
        for index in range(2)
    ]
    summaries = {"mirrored": finish(mirrored, timeout=150), "accumulated": finish(accumulated, timeout=150)}
    for index, worker in enumerate(workers):
        summaries[f"worker{index}"] = finish(worker, timeout=150)
    weights = {name: list(np.load(root / f"{name}.npz").values()) for name in summaries}
    return root, summaries, weights


@pytest.fixture(scope="module")
def single_replica(tmp_path_factory):
    """The reference: one replica with the global batch of 2 x PER_REPLICA_BATCH."""
    outdir = tmp_path_factory.mktemp("single")
    trainer = build_seq2seq_trainer(trainer_config(outdir, train_max_steps=STEPS, save_interval_steps=1000))
    trainer.fit(make_dataset(2 * PER_REPLICA_BATCH))
    return trainer


def assert_same(first, second):
    for a, b in zip(first, second, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_two_cpu_replicas_of_b_equal_one_replica_of_2b(runs, single_replica):
    _, summaries, weights = runs
    assert summaries["mirrored"]["strategy"] == "MirroredStrategy"
    assert summaries["mirrored"]["num_replicas"] == 2
    assert summaries["mirrored"]["steps"] == STEPS
    assert_same(weights["mirrored"], single_replica.model.get_weights())
    assert summaries["mirrored"]["learning_rate"] == pytest.approx(_learning_rate(single_replica.optimizer))


def test_accumulation_on_two_replicas_equals_one_replica_with_the_accumulated_batch(runs, single_replica):
    # Each update: 2 accumulated global batches of 2 x B/2 = the reference's one batch of 2B.
    _, summaries, weights = runs
    assert summaries["accumulated"]["num_replicas"] == 2
    assert summaries["accumulated"]["steps"] == STEPS
    assert_same(weights["accumulated"], single_replica.model.get_weights())


def test_two_workers_end_with_identical_weights_equal_to_one_replica(runs, single_replica):
    root, summaries, weights = runs
    for index in range(2):
        assert summaries[f"worker{index}"]["strategy"] == "CollectiveAllReduceStrategy"  # MultiWorkerMirrored
        assert summaries[f"worker{index}"]["num_replicas"] == 2
    for a, b in zip(weights["worker0"], weights["worker1"], strict=True):
        np.testing.assert_array_equal(a, b)
    assert_same(weights["worker0"], single_replica.model.get_weights())
    # Only the chief keeps checkpoints and TensorBoard logs.
    assert (root / "worker0" / "checkpoints" / "checkpoint").exists()
    assert not (root / "worker1").exists()
