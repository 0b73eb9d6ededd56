"""Pick the tf.distribute strategy a training run uses, from the devices and TF_CONFIG.

`return_strategy()` is what every training script calls:

* ``TF_CONFIG`` naming two or more workers -> ``MultiWorkerMirroredStrategy``;
* two or more visible GPUs -> ``MirroredStrategy`` over all of them;
* one GPU -> ``OneDeviceStrategy("/gpu:0")``; no GPU -> ``OneDeviceStrategy("/cpu:0")``.

The CPU switch: ``return_strategy(cpu_replicas=N)`` or the environment variable
``TF_TTS_CPU_REPLICAS=N`` (N >= 2, no GPU) splits the host CPU into N logical devices and
mirrors over them, so a multi-replica run can be tested on a laptop or in CI. Logical devices
can only be configured before TensorFlow initialises its runtime, so call it (or set the
variable) before creating any tensor.
"""

import json
import logging
import os

import tensorflow as tf

CPU_REPLICAS_ENV = "TF_TTS_CPU_REPLICAS"

logger = logging.getLogger(__name__)


def _num_workers_in_tf_config():
    raw = os.environ.get("TF_CONFIG", "").strip()
    if not raw:
        return 0
    try:
        tf_config = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ValueError(f"TF_CONFIG is not valid JSON ({error}); unset it or fix it") from error
    cluster = tf_config.get("cluster", {})
    return len(cluster.get("worker", [])) + len(cluster.get("chief", []))


def _cpu_replicas_from_env():
    raw = os.environ.get(CPU_REPLICAS_ENV, "").strip()
    if not raw:
        return 0
    try:
        return int(raw)
    except ValueError as error:
        raise ValueError(f"{CPU_REPLICAS_ENV}={raw!r}: expected an integer number of CPU replicas") from error


def split_cpu(num_devices):
    """Split the first physical CPU into `num_devices` logical devices; returns their names.

    Must run before TensorFlow initialises its runtime (before the first tensor is created);
    calling it again with the same number afterwards is harmless.
    """
    cpu = tf.config.list_physical_devices("CPU")[0]
    current = tf.config.get_logical_device_configuration(cpu)
    if current is None or len(current) != num_devices:
        try:
            tf.config.set_logical_device_configuration(
                cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(num_devices)]
            )
        except RuntimeError as error:
            raise RuntimeError(
                f"cannot split the CPU into {num_devices} logical devices: TensorFlow is already "
                f"initialised. Set {CPU_REPLICAS_ENV}={num_devices} in the environment, or call "
                "return_strategy(cpu_replicas=...) before any tensor is created."
            ) from error
    return [device.name for device in tf.config.list_logical_devices("CPU")]


def return_strategy(cpu_replicas=None):
    """Return the tf.distribute strategy for this process.

    Args:
        cpu_replicas: split the CPU into this many logical devices and mirror over them
            (testing multi-replica training without GPUs). Defaults to the
            ``TF_TTS_CPU_REPLICAS`` environment variable; 0 or 1 means no split. Ignored,
            with a warning, when GPUs are visible.
    """
    if cpu_replicas is None:
        cpu_replicas = _cpu_replicas_from_env()

    if _num_workers_in_tf_config() > 1:
        # Collectives over gRPC between the workers listed in TF_CONFIG; each worker
        # mirrors over its own local GPUs (or its CPU).
        return tf.distribute.MultiWorkerMirroredStrategy()

    gpus = tf.config.list_physical_devices("GPU")
    if cpu_replicas and cpu_replicas > 1:
        if gpus:
            logger.warning("%s=%d ignored: %d GPU(s) are visible", CPU_REPLICAS_ENV, cpu_replicas, len(gpus))
        else:
            devices = split_cpu(cpu_replicas)
            # NCCL is GPU-only; reduce through one CPU device.
            return tf.distribute.MirroredStrategy(
                devices=devices, cross_device_ops=tf.distribute.ReductionToOneDevice()
            )
    if len(gpus) >= 2:
        # Every logical GPU: a GPU split into virtual devices mirrors over each part.
        return tf.distribute.MirroredStrategy(devices=[device.name for device in tf.config.list_logical_devices("GPU")])
    if len(gpus) == 1:
        return tf.distribute.OneDeviceStrategy(device="/gpu:0")
    return tf.distribute.OneDeviceStrategy(device="/cpu:0")


def is_chief(strategy=None):
    """Whether this process should write logs, summaries and the real checkpoints.

    True everywhere except on the non-chief workers of a multi-worker run.
    """
    resolver = getattr(strategy, "cluster_resolver", None) if strategy is not None else None
    if resolver is None or not resolver.task_type:
        return True
    if resolver.task_type == "chief":
        return True
    cluster = resolver.cluster_spec().as_dict()
    return resolver.task_type == "worker" and resolver.task_id in (None, 0) and "chief" not in cluster
