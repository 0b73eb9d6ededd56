"""tensorflow-tts-serve in a child process, returned once it answers /healthz (for load tests and end-to-end tests)."""

import os
import subprocess
import sys
import time
import urllib.error
import urllib.request


class ServerStartError(RuntimeError):
    """The server exited or stayed silent; the message holds the end of its log."""


def _healthy(url):
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=1) as reply:
            return reply.status == 200
    except (urllib.error.URLError, OSError):
        return False


def start_server(args, port, timeout_s=180.0):
    """Start `tensorflow-tts-serve ARGS --port PORT` on 127.0.0.1; returns (process, url).

    Its stderr goes to a pipe read only on failure: pass --verbose 0 for a long run.
    Raises ServerStartError when it exits or does not answer within `timeout_s`.
    """
    process = subprocess.Popen(
        [sys.executable, "-m", "tensorflow_tts.bin.serve", *[str(arg) for arg in args], "--host", "127.0.0.1",
         "--port", str(port)],
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServerStartError(f"the server exited with {process.returncode}:\n{process.stderr.read()[-3000:]}")
        if _healthy(url):
            return process, url
        time.sleep(0.3)
    process.kill()
    raise ServerStartError(f"the server did not answer {url}/healthz within {timeout_s:g} s")
