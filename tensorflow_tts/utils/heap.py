"""How many heaps (glibc malloc arenas) the process allocates from, set before TensorFlow starts its threads.

glibc gives each thread that meets a busy heap a new one, up to 8 per core. tf.data's
threads then free each example's tensors into other heaps than the ones they came from, and
the heaps fragment: a sharded 13,100-utterance FastSpeech2 pipeline grew from 1.07 to
1.36 GB over 5 epochs with the default, and stayed at 1.04 GB with 2 heaps, at the same
batches per second (benchmarks/scale.py, 2 cores). The limit only takes effect for heaps
not yet made, so it is set when `tensorflow_tts` is imported, before TensorFlow.
"""

import ctypes
import ctypes.util
import os

ARENAS = 2
_M_ARENA_MAX = -8  # glibc's mallopt parameter


def limit_malloc_arenas(arenas=ARENAS):
    """Cap glibc's malloc arenas at `arenas`, unless MALLOC_ARENA_MAX is already set (then glibc
    applied that one at start). Sets MALLOC_ARENA_MAX for child processes too. Returns the
    limit in force, or None where the C library is not glibc."""
    chosen = os.environ.get("MALLOC_ARENA_MAX")
    if chosen is not None:
        return int(chosen) if chosen.isdigit() else None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.gnu_get_libc_version  # only glibc has it, and only glibc takes this mallopt
    except (OSError, AttributeError):
        return None
    if not libc.mallopt(_M_ARENA_MAX, arenas):
        return None
    os.environ["MALLOC_ARENA_MAX"] = str(arenas)
    return arenas
