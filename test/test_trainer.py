"""BaseTrainer loop on one CPU replica: loss scaling, accumulation, resume, NaN handling, summaries."""

import tensorflow_tts  # noqa: F401

import os
import time

import numpy as np
import pytest
import tensorflow as tf

from helpers.events import read_events
from helpers.tiny import (
    build_gan_trainer,
    build_seq2seq_trainer,
    make_dataset,
    make_gan_dataset,
    trainer_config,
)
from tensorflow_tts.configs import ConfigError
from tensorflow_tts.configs.trainer import TrainerConfig
from tensorflow_tts.trainers import NonFiniteTrainingError
from tensorflow_tts.trainers.base_trainer import _learning_rate


def weights(trainer):
    return trainer.model.get_weights()


def assert_same_weights(first, second, atol=1e-6):
    assert len(first) == len(second)
    for a, b in zip(first, second):
        np.testing.assert_allclose(a, b, atol=atol, rtol=1e-5)


def checkpoint_arrays(path):
    """The floating-point arrays stored in a checkpoint."""
    reader = tf.train.load_checkpoint(path)
    arrays = {name: np.asarray(reader.get_tensor(name)) for name in reader.get_variable_to_shape_map()}
    return {name: array for name, array in arrays.items() if array.dtype.kind == "f"}


def test_four_accumulated_batches_of_b_equal_one_batch_of_4b(tmp_path):
    accumulated = build_seq2seq_trainer(trainer_config(tmp_path / "acc", train_max_steps=2, gradient_accumulation_steps=4))
    accumulated.fit(make_dataset(2))
    single = build_seq2seq_trainer(trainer_config(tmp_path / "one", train_max_steps=2))
    single.fit(make_dataset(8))
    assert_same_weights(weights(accumulated), weights(single))
    assert _learning_rate(accumulated.optimizer) == pytest.approx(_learning_rate(single.optimizer))


def test_accumulation_also_matches_with_uneven_batches_and_clipping(tmp_path):
    # 12 examples in batches of 5, 5, 2: the update is the mean over all 12, not a mean of means.
    accumulated = build_seq2seq_trainer(
        trainer_config(tmp_path / "acc", train_max_steps=1, gradient_accumulation_steps=3, grad_norm=0.05)
    )
    accumulated.fit(make_dataset(5, num_examples=12))
    single = build_seq2seq_trainer(trainer_config(tmp_path / "one", train_max_steps=1, grad_norm=0.05))
    single.fit(make_dataset(12, num_examples=12))
    assert_same_weights(weights(accumulated), weights(single))


def test_resume_after_n_steps_then_m_more_equals_n_plus_m_straight(tmp_path):
    straight = build_seq2seq_trainer(trainer_config(tmp_path / "straight", train_max_steps=4))
    straight.fit(make_dataset(8))  # 2 batches per epoch

    first = build_seq2seq_trainer(trainer_config(tmp_path / "resumed", train_max_steps=2))
    first.fit(make_dataset(8))
    second = build_seq2seq_trainer(trainer_config(tmp_path / "resumed", train_max_steps=4))
    second.fit(make_dataset(8), resume=str(tmp_path / "resumed" / "checkpoints"))

    assert (second.steps, second.epochs) == (4, straight.epochs)
    assert_same_weights(weights(second), weights(straight))
    assert int(second.optimizer.iterations) == int(straight.optimizer.iterations) == 4
    assert _learning_rate(second.optimizer) == pytest.approx(_learning_rate(straight.optimizer))


def test_pretrained_loads_weights_but_not_steps_or_optimizer(tmp_path):
    source = build_seq2seq_trainer(trainer_config(tmp_path / "source", train_max_steps=2))
    source.fit(make_dataset(8))
    target = build_seq2seq_trainer(trainer_config(tmp_path / "target", train_max_steps=2))
    target.load_pretrained(str(tmp_path / "source" / "checkpoints" / "model-2.h5"))
    assert_same_weights(weights(target), weights(source))
    assert target.steps == 0 and int(target.optimizer.iterations) == 0


def test_var_train_expr_trains_only_matching_variables(tmp_path):
    trainer = build_seq2seq_trainer(trainer_config(tmp_path, train_max_steps=2, var_train_expr="conv"))
    before = {variable.name: variable.numpy() for variable in trainer.model.variables}
    assert {variable.name for variable in trainer._trainable_variables} == {
        name for name in before if "conv" in name
    }
    trainer.fit(make_dataset(8))
    for variable in trainer.model.variables:
        changed = not np.allclose(variable.numpy(), before[variable.name])
        assert changed == ("conv" in variable.name), variable.name


def test_a_nan_batch_is_skipped_and_training_goes_on(tmp_path):
    trainer = build_seq2seq_trainer(trainer_config(tmp_path, train_max_steps=4, save_interval_steps=1))
    trainer.fit(make_dataset(8, nan_examples=[9]))  # the second batch of every epoch
    assert trainer.steps == 4
    assert trainer.nonfinite_steps == 2
    assert int(trainer.optimizer.iterations) == 4  # skipped steps still advance the schedule
    for step in range(1, 5):
        for name, array in checkpoint_arrays(str(tmp_path / "checkpoints" / f"ckpt-{step}")).items():
            assert np.all(np.isfinite(array)), (step, name)
    scalars = read_events(str(tmp_path / "train"))
    assert scalars["nonfinite_steps"]["values"][-1] == 2
    assert all(np.isfinite(value) for value in scalars["mel_loss"]["values"])


def test_persistent_nans_stop_the_run_with_the_documented_error(tmp_path):
    trainer = build_seq2seq_trainer(
        trainer_config(tmp_path, train_max_steps=10, save_interval_steps=1, max_consecutive_nonfinite_steps=3)
    )
    before = weights(trainer)
    with pytest.raises(NonFiniteTrainingError, match="3 consecutive steps had a non-finite loss"):
        trainer.fit(make_dataset(8, nan_examples=range(16)))
    assert trainer.steps == 3
    assert_same_weights(weights(trainer), before, atol=0)
    for path in tf.train.get_checkpoint_state(str(tmp_path / "checkpoints")).all_model_checkpoint_paths:
        for array in checkpoint_arrays(path).values():
            assert np.all(np.isfinite(array))


def test_a_nonfinite_checkpoint_is_never_written(tmp_path):
    trainer = build_seq2seq_trainer(trainer_config(tmp_path, train_max_steps=1))
    trainer.fit(make_dataset(8))
    trainer.model.layers[0].kernel.assign(tf.fill(trainer.model.layers[0].kernel.shape, np.nan))
    trainer.steps = 2
    with pytest.raises(NonFiniteTrainingError, match="refusing to save"):
        trainer.save_checkpoint()
    assert tf.train.latest_checkpoint(str(tmp_path / "checkpoints")).endswith("ckpt-1")


def test_resume_skips_an_unreadable_latest_checkpoint(tmp_path):
    trainer = build_seq2seq_trainer(trainer_config(tmp_path, train_max_steps=3, save_interval_steps=1))
    trainer.fit(make_dataset(8))
    directory = tmp_path / "checkpoints"
    with open(directory / "ckpt-3.data-00000-of-00001", "wb") as stream:
        stream.write(b"truncated by a crash")
    resumed = build_seq2seq_trainer(trainer_config(tmp_path, train_max_steps=3))
    restored = resumed.load_checkpoint(str(directory))
    assert restored.endswith("ckpt-2") and resumed.steps == 2


def test_a_checkpoint_without_the_random_seed_still_resumes(tmp_path, caplog):
    trainer = build_seq2seq_trainer(trainer_config(tmp_path, train_max_steps=2))
    trainer.fit(make_dataset(8))
    # As written before checkpoints carried the run's random seed.
    contents = {name: value for name, value in trainer._checkpoint_contents.items() if name != "random_seed"}
    older = tf.train.Checkpoint(**contents).save(str(tmp_path / "older" / "ckpt"))
    resumed = build_seq2seq_trainer(trainer_config(tmp_path / "resumed", train_max_steps=3))
    assert resumed.load_checkpoint(older) == older and resumed.steps == 2
    assert "has no random seed" in caplog.text
    assert_same_weights(weights(resumed), weights(trainer), atol=0.0)


def test_tensorboard_gets_scalars_eval_losses_images_and_a_profile(tmp_path):
    trainer = build_seq2seq_trainer(
        trainer_config(tmp_path, train_max_steps=2, eval_interval_steps=2, profile_steps=[2, 2])
    )
    trainer.fit(make_dataset(8), make_dataset(4, num_examples=8, seed=7))
    train = read_events(str(tmp_path / "train"))
    for tag in ("mel_loss", "l1_loss", "total_loss", "learning_rate", "grad_norm", "steps_per_second",
                "examples_per_second", "padding_ratio", "input_wait_fraction"):
        assert tag in train and train[tag]["plugin"] == "scalars", tag
    assert train["total_loss"]["steps"] == [1, 2]
    assert 0.0 < float(train["padding_ratio"]["values"][0]) < 1.0
    assert 0.0 <= float(train["input_wait_fraction"]["values"][0]) < 1.0
    evaluation = read_events(str(tmp_path / "eval"))
    assert {"mel_loss", "total_loss"} <= set(evaluation)
    assert evaluation["mel/0"]["plugin"] == "images"
    assert os.path.exists(tmp_path / "predictions" / "2steps" / "mel_0.png")
    assert any(name.endswith(".xplane.pb") for _, _, files in os.walk(tmp_path / "plugins" / "profile") for name in files)


def test_gan_discriminator_is_only_updated_from_its_start_step(tmp_path):
    trainer = build_gan_trainer(
        trainer_config(tmp_path, train_max_steps=2, eval_interval_steps=3, discriminator_train_start_steps=2)
    )
    generator_before = trainer._generator.get_weights()
    discriminator_before = trainer._discriminator.get_weights()
    trainer.fit(make_gan_dataset(4), make_gan_dataset(4, seed=1))
    assert_same_weights(trainer._discriminator.get_weights(), discriminator_before, atol=0)
    assert not np.allclose(trainer._generator.get_weights()[0], generator_before[0])

    trainer.config.train_max_steps = 3
    trainer.fit(make_gan_dataset(4), make_gan_dataset(4, seed=1))
    assert not np.allclose(trainer._discriminator.get_weights()[0], discriminator_before[0])
    train = read_events(str(tmp_path / "train"))
    assert "adversarial_loss" in train and train["adversarial_loss"]["steps"] == [3]
    assert train["real_loss"]["steps"] == [3]
    assert {"generator_learning_rate", "discriminator_learning_rate"} <= set(train)
    evaluation = read_events(str(tmp_path / "eval"))
    assert evaluation["predicted/0"]["plugin"] == "audio"
    assert evaluation["target/0"]["plugin"] == "audio"


@pytest.fixture
def restore_float32_policy():
    yield
    tf.keras.mixed_precision.set_global_policy("float32")


@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_mixed_precision_trains_with_float32_losses(tmp_path, policy, restore_float32_policy):
    trainer = build_seq2seq_trainer(
        trainer_config(tmp_path, train_max_steps=2, mixed_precision_policy=policy), is_mixed_precision=True
    )
    assert trainer.model.layers[0].compute_dtype == policy.split("_")[1]
    uses_loss_scale = isinstance(trainer.optimizer, tf.keras.mixed_precision.LossScaleOptimizer)
    assert uses_loss_scale == (policy == "mixed_float16")
    trainer.fit(make_dataset(8))
    train = read_events(str(tmp_path / "train"))
    assert train["mel_loss"]["values"][-1].dtype == np.float32
    assert all(np.isfinite(value) for value in train["mel_loss"]["values"])
    assert ("loss_scale" in train) == uses_loss_scale
    assert all(variable.dtype == tf.float32 for variable in trainer.model.variables)


def test_config_keys_are_validated():
    with pytest.raises(ConfigError, match="train_max_step"):
        TrainerConfig.from_dict({"train_max_step": 10})
    trainer_part, rest = TrainerConfig.split({"train_max_steps": 7, "batch_size": 16, "hop_size": 256})
    assert trainer_part.train_max_steps == 7 and rest == {"batch_size": 16, "hop_size": 256}


def variable_length_dataset(batch_size):
    """Batches padded to their own longest utterance: every batch has a different frame count."""
    arrays = make_dataset(16).unbatch()

    def trim(example):
        length = example["mel_lengths"]
        return {"features": example["features"][:length], "mel_gts": example["mel_gts"][:length], "mel_lengths": length}

    return arrays.map(trim).padded_batch(batch_size)


@pytest.mark.parametrize("jit_compile", [False, True])
def test_variable_length_batches_trace_the_step_once(tmp_path, jit_compile):
    trainer = build_seq2seq_trainer(trainer_config(tmp_path, train_max_steps=4, jit_compile=jit_compile))
    trainer.fit(variable_length_dataset(4))
    (step_function,) = trainer._step_functions.values()
    assert step_function.experimental_get_tracing_count() == 1
    assert all(np.all(np.isfinite(weight)) for weight in weights(trainer))


def test_a_slow_input_pipeline_shows_as_input_wait(tmp_path):
    def slow(batch):
        def sleep(features):
            time.sleep(0.2)
            return features

        features = tf.numpy_function(sleep, [batch["features"]], tf.float32, stateful=True)
        return {**batch, "features": tf.ensure_shape(features, batch["features"].shape)}

    # Two logging windows: the first also holds the step's tracing, which another busy process
    # (a second test worker) can stretch past the waits; the second holds steps and waits only.
    trainer = build_seq2seq_trainer(trainer_config(tmp_path, train_max_steps=8, log_interval_steps=4))
    # No prefetch: each batch costs 0.2 s to make while the tiny step takes milliseconds.
    options = tf.data.Options()
    options.autotune.enabled = False
    trainer.fit(make_dataset(4).map(slow).with_options(options))
    _, wait = read_events(str(tmp_path / "train"))["input_wait_fraction"]["values"]
    assert float(wait) > 0.5
