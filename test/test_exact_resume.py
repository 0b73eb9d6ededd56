"""Exact resume: a training process killed with SIGKILL mid-epoch, with shuffling, random crops
and dropout on, and resumed with --resume ends with the weights of the uninterrupted run.

For the seq2seq trainer (dropout in the model, reshuffled every epoch) and the GAN trainer
(both optimizers, the discriminator on before the kill; reshuffled and randomly cropped every
epoch), on one CPU replica and on two. 20 examples in global batches of 4 make 5 batches an
epoch, so the checkpoints at steps 6 and 8 (where the kill lands) lie inside the second epoch,
whose shuffle and crops differ from the first one's: the resume has to replay the input.
"""

import tensorflow_tts  # noqa: F401

import time

import numpy as np
import pytest
import tensorflow as tf

from helpers.processes import finish, start_training

STEPS = 11
GLOBAL_BATCH = 4
NUM_EXAMPLES = 20  # 5 batches an epoch
KILL_AFTER_CHECKPOINT = 6  # batch 1 of epoch 1
RUNS = {  # name -> (trainer arguments, CPU replicas)
    "seq2seq": (["--dropout", 0.3], 1),
    "seq2seq_2_replicas": (["--dropout", 0.3], 2),
    "gan": (["--gan", "--discriminator-start", 3], 1),
    "gan_2_replicas": (["--gan", "--discriminator-start", 3], 2),
}


def arguments(name, outdir):
    trainer_args, replicas = RUNS[name]
    return [
        "--outdir", outdir, "--steps", STEPS, "--save-interval", 2, "--num-examples", NUM_EXAMPLES,
        "--batch-size", GLOBAL_BATCH // replicas, "--shuffle", "--seed", 7, *trainer_args,
    ]


def environment(name):
    replicas = RUNS[name][1]
    return {"TF_TTS_CPU_REPLICAS": str(replicas)} if replicas > 1 else {}


def checkpoint_steps(directory):
    if not (directory / "checkpoint").exists():
        return []
    state = tf.train.get_checkpoint_state(str(directory))
    return [int(path.rsplit("-", 1)[1]) for path in state.all_model_checkpoint_paths] if state else []


def kill_after_checkpoint(processes, step, timeout=240):
    """SIGKILL each {name: (process, checkpoint directory)} once it has written ckpt-<step>."""
    waiting = dict(processes)
    deadline = time.monotonic() + timeout
    while waiting and time.monotonic() < deadline:
        for name, (process, directory) in list(waiting.items()):
            if max(checkpoint_steps(directory), default=0) >= step:
                process.kill()
                process.communicate()
                del waiting[name]
            else:
                assert process.poll() is None, f"{name}: {process.communicate()[1][-3000:]}"
        time.sleep(0.02)
    for process, _ in waiting.values():
        process.kill()
        process.communicate()
    assert not waiting, f"no ckpt-{step} within {timeout} s: {sorted(waiting)}"
    return [process.returncode for process, _ in processes.values()]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{name: (uninterrupted weights, resumed weights, position of the resumed checkpoint)}.

    All uninterrupted and to-be-killed processes start at once (they overlap their start-up);
    the killed ones sleep 0.3 s after each step, so the kill lands before their next checkpoint.
    """
    root = tmp_path_factory.mktemp("exact_resume")
    straight, killed = {}, {}
    for name in RUNS:
        straight[name] = start_training(
            [*arguments(name, root / name / "straight"), "--weights-out", root / name / "straight.npz"], environment(name)
        )
        killed[name] = (
            start_training([*arguments(name, root / name / "resumed"), "--step-delay", 0.3], environment(name)),
            root / name / "resumed" / "checkpoints",
        )
    return_codes = kill_after_checkpoint(killed, KILL_AFTER_CHECKPOINT)
    assert return_codes == [-9] * len(RUNS)
    positions = {}
    for name in RUNS:
        reader = tf.train.load_checkpoint(tf.train.latest_checkpoint(str(root / name / "resumed" / "checkpoints")))
        positions[name] = {key: int(reader.get_tensor(f"{key}/.ATTRIBUTES/VARIABLE_VALUE")) for key in ("steps", "epochs", "epoch_batches")}
    resumed = {
        name: start_training(
            [*arguments(name, root / name / "resumed"), "--resume", root / name / "resumed" / "checkpoints",
             "--weights-out", root / name / "resumed.npz"],
            environment(name),
        )
        for name in RUNS
    }
    summaries = {}
    for name in RUNS:
        summaries[name] = (finish(straight[name], timeout=240), finish(resumed[name], timeout=240))
    return {
        name: (
            list(np.load(root / name / "straight.npz").values()),
            list(np.load(root / name / "resumed.npz").values()),
            positions[name],
            summaries[name],
        )
        for name in RUNS
    }


@pytest.mark.parametrize("name", sorted(RUNS))
def test_killed_mid_epoch_and_resumed_ends_with_the_uninterrupted_weights(runs, name):
    straight, resumed, position, (straight_summary, resumed_summary) = runs[name]
    # The kill landed inside the second epoch, after its first batch: a mid-epoch resume.
    assert position["steps"] in (6, 8) and position["epochs"] == 1 and 0 < position["epoch_batches"] < 5, position
    assert straight_summary["num_replicas"] == resumed_summary["num_replicas"] == RUNS[name][1]
    assert resumed_summary["steps"] == straight_summary["steps"] == STEPS
    assert resumed_summary["epochs"] == straight_summary["epochs"] == 2
    assert len(straight) == len(resumed) > 0
    for before, after in zip(straight, resumed):
        np.testing.assert_allclose(after, before, rtol=1e-6, atol=1e-7)
