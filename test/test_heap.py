"""`import tensorflow_tts` caps glibc's malloc arenas before TensorFlow starts its threads (utils/heap.py)."""

import os
import subprocess
import sys

import pytest

PRINT_LIMIT = "import tensorflow_tts, os; print(os.environ.get('MALLOC_ARENA_MAX'))"


def limit_seen_by_a_fresh_process(**env):
    environment = {key: value for key, value in os.environ.items() if key != "MALLOC_ARENA_MAX"}
    result = subprocess.run([sys.executable, "-c", PRINT_LIMIT], env=dict(environment, **env), capture_output=True,
                            text=True, check=True)
    return result.stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the arena limit is glibc's")
def test_import_limits_the_arenas_and_children_inherit_it():
    assert limit_seen_by_a_fresh_process() == "2"


def test_a_limit_the_user_set_is_kept():
    assert limit_seen_by_a_fresh_process(MALLOC_ARENA_MAX="6") == "6"
