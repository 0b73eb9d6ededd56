"""Start run_tiny_training.py or a training script in subprocesses (fresh TensorFlow runtimes) with bounded time."""

import json
import os
import socket
import subprocess
import sys

HELPERS = os.path.dirname(os.path.abspath(__file__))
HELPER = os.path.join(HELPERS, "run_tiny_training.py")
SCRIPT_SAVING_WEIGHTS = os.path.join(HELPERS, "run_script_saving_weights.py")


def free_port():
    with socket.socket() as sock:
        sock.bind(("localhost", 0))
        return sock.getsockname()[1]


def start_training(args, extra_env=None):
    """run_tiny_training.py with `args`; its last stdout line is a JSON summary (see `finish`)."""
    return start_python([HELPER, *args], extra_env)


def start_script(weights_out, script, args, extra_env=None):
    """A training script run as a user runs it, its models' weights saved to `weights_out` (.npz)."""
    return start_python([SCRIPT_SAVING_WEIGHTS, weights_out, script, *args], extra_env)


def start_python(argv, extra_env=None):
    """`python argv...` in a fresh process: no inherited TF_CONFIG or CPU split, quiet TensorFlow."""
    env = {key: value for key, value in os.environ.items() if key not in ("TF_CONFIG", "TF_TTS_CPU_REPLICAS")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    env.update(extra_env or {})
    return subprocess.Popen(
        [sys.executable, *[str(arg) for arg in argv]],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process, timeout):
    """Wait for a training subprocess; return its JSON summary or fail with its stderr."""
    return json.loads(wait(process, timeout)[0].strip().splitlines()[-1])


def wait(process, timeout):
    """(stdout, stderr) of a subprocess that must exit with 0 within `timeout` seconds."""
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        raise AssertionError(f"training subprocess timed out after {timeout}s:\n{stderr[-3000:]}")
    assert process.returncode == 0, f"training subprocess failed ({process.returncode}):\n{stderr[-3000:]}"
    return stdout, stderr


def tf_config(ports, index):
    return json.dumps({"cluster": {"worker": [f"localhost:{port}" for port in ports]}, "task": {"type": "worker", "index": index}})
