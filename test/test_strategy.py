"""return_strategy: device-based choice, the CPU-split switch and TF_CONFIG."""

import tensorflow_tts  # noqa: F401

import pytest
import tensorflow as tf

from tensorflow_tts.utils import return_strategy
from tensorflow_tts.utils.strategy import is_chief


def test_one_device_strategy_on_a_cpu_only_host(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    monkeypatch.delenv("TF_TTS_CPU_REPLICAS", raising=False)
    strategy = return_strategy()
    assert isinstance(strategy, tf.distribute.OneDeviceStrategy)
    assert strategy.num_replicas_in_sync == 1
    assert is_chief(strategy)


def test_cpu_replicas_env_must_be_an_integer(monkeypatch):
    monkeypatch.setenv("TF_TTS_CPU_REPLICAS", "two")
    with pytest.raises(ValueError, match="TF_TTS_CPU_REPLICAS"):
        return_strategy()


def test_splitting_the_cpu_after_tensorflow_started_explains_how_to_do_it(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    tf.constant(1.0)  # initialises the runtime
    if len(tf.config.list_logical_devices("CPU")) == 3:
        pytest.skip("this process already has 3 logical CPUs")
    with pytest.raises(RuntimeError, match="TF_TTS_CPU_REPLICAS=3"):
        return_strategy(cpu_replicas=3)


def test_malformed_tf_config_is_reported(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", "{not json")
    with pytest.raises(ValueError, match="TF_CONFIG"):
        return_strategy()
