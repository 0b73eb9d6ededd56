"""A training process killed with SIGKILL resumes from its last complete checkpoint."""

import tensorflow_tts  # noqa: F401

import time

import tensorflow as tf

from helpers.processes import start_training
from helpers.tiny import build_seq2seq_trainer, make_dataset, trainer_config


def test_sigkill_mid_run_then_resume_continues_from_the_last_complete_checkpoint(tmp_path):
    outdir = tmp_path / "run"
    checkpoints = outdir / "checkpoints"
    process = start_training(
        ["--outdir", outdir, "--steps", 100000, "--save-interval", 1, "--step-delay", 0.05]
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            state = tf.train.get_checkpoint_state(str(checkpoints)) if (checkpoints / "checkpoint").exists() else None
            if state is not None and len(state.all_model_checkpoint_paths) >= 3:
                break
            assert process.poll() is None, process.communicate()[1][-3000:]
            time.sleep(0.05)
        else:
            raise AssertionError("no checkpoint written within 120 s")
    finally:
        process.kill()  # SIGKILL: no chance to finish the save in progress
        process.communicate()
    assert process.returncode == -9

    latest = tf.train.latest_checkpoint(str(checkpoints))
    latest_step = int(latest.rsplit("-", 1)[1])
    trainer = build_seq2seq_trainer(trainer_config(outdir, train_max_steps=latest_step + 2))
    trainer.fit(make_dataset(4), resume=str(checkpoints))
    assert trainer.steps == latest_step + 2
    assert int(trainer.optimizer.iterations) == latest_step + 2
