"""return_strategy: device-based choice, the CPU-split switch and TF_CONFIG."""

import tensorflow_tts  # noqa: F401

import json

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


# ---------------------------------------------------------------- the choice, with devices faked


class RequestedStrategy:
    """Stands in for a tf.distribute strategy class: records what return_strategy asked for."""

    def __init__(self, name, **kwargs):
        self.name = name
        self.kwargs = kwargs


def fake_devices_and_strategies(monkeypatch, num_gpus, tf_config=None):
    """`num_gpus` visible GPUs (physical and logical lists), and strategy classes that record
    their arguments instead of reaching for devices this CPU-only box does not have."""
    real_physical = tf.config.list_physical_devices
    physical = [tf.config.PhysicalDevice(f"/physical_device:GPU:{index}", "GPU") for index in range(num_gpus)]
    logical = [tf.config.LogicalDevice(f"/device:GPU:{index}", "GPU") for index in range(num_gpus)]
    monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind=None: physical if kind == "GPU" else real_physical(kind))
    monkeypatch.setattr(tf.config, "list_logical_devices", lambda kind=None: logical if kind == "GPU" else [])
    for name in ("OneDeviceStrategy", "MirroredStrategy", "MultiWorkerMirroredStrategy"):
        monkeypatch.setattr(tf.distribute, name, lambda name=name, **kwargs: RequestedStrategy(name, **kwargs))
    monkeypatch.delenv("TF_TTS_CPU_REPLICAS", raising=False)
    if tf_config is None:
        monkeypatch.delenv("TF_CONFIG", raising=False)
    else:
        monkeypatch.setenv("TF_CONFIG", json.dumps(tf_config))


def cluster(workers, chief=False, task=("worker", 0)):
    spec = {"worker": [f"host{index}:2222" for index in range(workers)]}
    if chief:
        spec["chief"] = ["host-chief:2222"]
    return {"cluster": spec, "task": {"type": task[0], "index": task[1]}}


@pytest.mark.parametrize("num_gpus, tf_config, name, kwargs", [
    (0, None, "OneDeviceStrategy", {"device": "/cpu:0"}),
    (1, None, "OneDeviceStrategy", {"device": "/gpu:0"}),
    (2, None, "MirroredStrategy", {"devices": ["/device:GPU:0", "/device:GPU:1"]}),
    (4, None, "MirroredStrategy", {"devices": [f"/device:GPU:{index}" for index in range(4)]}),
    # A cluster of one is no cluster: the local devices decide.
    (1, cluster(workers=1), "OneDeviceStrategy", {"device": "/gpu:0"}),
    (0, cluster(workers=2), "MultiWorkerMirroredStrategy", {}),
    (2, cluster(workers=2, task=("worker", 1)), "MultiWorkerMirroredStrategy", {}),
    (1, cluster(workers=1, chief=True, task=("chief", 0)), "MultiWorkerMirroredStrategy", {}),
])
def test_return_strategy_picks_the_strategy_for_the_devices_and_tf_config(monkeypatch, num_gpus, tf_config, name, kwargs):
    fake_devices_and_strategies(monkeypatch, num_gpus, tf_config)
    strategy = return_strategy()
    assert (strategy.name, strategy.kwargs) == (name, kwargs)


def test_cpu_replicas_are_ignored_when_gpus_are_visible(monkeypatch, caplog):
    fake_devices_and_strategies(monkeypatch, num_gpus=2)
    strategy = return_strategy(cpu_replicas=2)
    assert (strategy.name, strategy.kwargs) == ("MirroredStrategy", {"devices": ["/device:GPU:0", "/device:GPU:1"]})
    assert "ignored: 2 GPU(s) are visible" in caplog.text
