"""Optimizers: WarmUp schedule, AdamWeightDecay, the YAML factory, GradientAccumulator."""

import tensorflow_tts  # noqa: F401

import numpy as np
import pytest
import tensorflow as tf

from tensorflow_tts.configs import ConfigError
from tensorflow_tts.optimizers import AdamWeightDecay, GradientAccumulator, WarmUp, create_optimizer


def test_warmup_rises_linearly_then_follows_the_decay_from_where_warmup_ended():
    decay = tf.keras.optimizers.schedules.PolynomialDecay(1.0, decay_steps=10, end_learning_rate=0.0)
    schedule = WarmUp(initial_learning_rate=1.0, decay_schedule_fn=decay, warmup_steps=4)
    rates = [float(schedule(step)) for step in (0, 2, 4, 9, 14, 100)]
    np.testing.assert_allclose(rates, [0.0, 0.5, 1.0, 0.5, 0.0, 0.0], atol=1e-6)


def test_adam_weight_decay_decays_kernels_but_not_excluded_biases():
    kernel = tf.Variable(np.ones((2, 2), np.float32), name="dense/kernel")
    bias = tf.Variable(np.ones((2,), np.float32), name="dense/bias")
    optimizer = AdamWeightDecay(
        learning_rate=0.1, weight_decay_rate=0.5, exclude_from_weight_decay=["bias"], jit_compile=False
    )
    # Zero gradients: Adam moves nothing, so any change is the decoupled decay lr * rate * var.
    optimizer.apply_gradients([(tf.zeros_like(kernel), kernel), (tf.zeros_like(bias), bias)])
    np.testing.assert_allclose(kernel.numpy(), 1.0 - 0.1 * 0.5, rtol=1e-6)
    np.testing.assert_allclose(bias.numpy(), 1.0)


def test_create_optimizer_builds_adamw_with_warmup_from_yaml_params():
    optimizer = create_optimizer(
        {"initial_learning_rate": 0.001, "end_learning_rate": 0.00001, "decay_steps": 100,
         "warmup_proportion": 0.1, "weight_decay": 0.001},
        train_max_steps=200,
    )
    assert isinstance(optimizer, AdamWeightDecay)
    schedule = optimizer._learning_rate
    assert isinstance(schedule, WarmUp) and schedule.warmup_steps == 20
    assert float(schedule(20)) == pytest.approx(0.001)


def test_create_optimizer_without_weight_decay_is_plain_adam_with_the_named_schedule():
    optimizer = create_optimizer(
        {"beta_1": 0.5, "beta_2": 0.9, "lr_fn": "PiecewiseConstantDecay",
         "lr_params": {"boundaries": [10], "values": [0.01, 0.001]}}
    )
    assert type(optimizer) is tf.keras.optimizers.Adam
    assert optimizer.beta_1 == 0.5
    assert float(optimizer._learning_rate(11)) == pytest.approx(0.001)


@pytest.mark.parametrize(
    "params, message",
    [({"initial_lr": 0.1}, "unknown key"), ({"lr_fn": "NoSuchDecay"}, "NoSuchDecay"), ({"warmup_proportion": 2.0}, "warmup_proportion")],
)
def test_create_optimizer_rejects_bad_params_with_the_key_named(params, message):
    with pytest.raises(ConfigError, match=message):
        create_optimizer(params)


def test_gradient_accumulator_sums_until_reset():
    variable = tf.Variable(np.zeros(3, np.float32))
    accumulator = GradientAccumulator([variable], scalar_names=("count",))
    accumulator.add([tf.constant([1.0, 2.0, 3.0])], count=2)
    accumulator.add([tf.constant([1.0, 1.0, 1.0])], count=3)
    gradients, scalars = accumulator.values()
    np.testing.assert_allclose(gradients[0].numpy(), [2.0, 3.0, 4.0])
    assert float(scalars["count"]) == 5.0
    accumulator.reset()
    gradients, scalars = accumulator.values()
    np.testing.assert_allclose(gradients[0].numpy(), 0.0)
    assert float(scalars["count"]) == 0.0
