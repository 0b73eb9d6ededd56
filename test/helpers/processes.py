"""Start run_tiny_training.py in subprocesses (fresh TensorFlow runtimes) with bounded time."""

import json
import os
import socket
import subprocess
import sys

HELPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run_tiny_training.py")


def free_port():
    with socket.socket() as sock:
        sock.bind(("localhost", 0))
        return sock.getsockname()[1]


def start_training(args, extra_env=None):
    env = {key: value for key, value in os.environ.items() if key not in ("TF_CONFIG", "TF_TTS_CPU_REPLICAS")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    env.update(extra_env or {})
    return subprocess.Popen(
        [sys.executable, HELPER, *[str(arg) for arg in args]],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process, timeout):
    """Wait for a training subprocess; return its JSON summary or fail with its stderr."""
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        raise AssertionError(f"training subprocess timed out after {timeout}s:\n{stderr[-3000:]}")
    assert process.returncode == 0, f"training subprocess failed ({process.returncode}):\n{stderr[-3000:]}"
    return json.loads(stdout.strip().splitlines()[-1])


def tf_config(ports, index):
    return json.dumps({"cluster": {"worker": [f"localhost:{port}" for port in ports]}, "task": {"type": "worker", "index": index}})
