"""Mixed precision: float32 outputs from models computing in float16/bfloat16, whether this CPU
computes bfloat16 natively, and how the weights of a graph being traced for a file are stored."""

import contextlib
import functools
import threading

import tensorflow as tf

_trace = threading.local()


def to_float32(structure):
    """Cast every floating tensor of a nested structure to float32; others (ids, durations) as they are.

    Float32 tensors are returned untouched (no op is added), so under the float32 policy the
    graph is the same as without this call.
    """

    def cast(value):
        if isinstance(value, (tf.Tensor, tf.Variable)) and value.dtype.is_floating and value.dtype != tf.float32:
            return tf.cast(value, tf.float32)
        return value

    return tf.nest.map_structure(cast, structure)


@functools.lru_cache(maxsize=None)
def cpu_has_native_bfloat16(cpuinfo="/proc/cpuinfo"):
    """True when the CPU multiplies bfloat16 in hardware (x86 AVX512_BF16 or AMX-BF16, Arm BF16).

    Elsewhere bfloat16 is emulated and a ``mixed_bfloat16`` training step is slower than float32
    (the MB-MelGAN generator step of benchmarks/HISTORY.md took 1.9x its float32 time with oneDNN
    held to AVX-512 without BF16, ``ONEDNN_MAX_CPU_ISA=AVX512_CORE``). Reads the kernel's CPU
    flags; False where they cannot be read (not Linux).
    """
    try:
        with open(cpuinfo) as handle:
            for line in handle:
                if line.startswith(("flags", "Features")):
                    flags = set(line.split(":", 1)[1].split())
                    return bool(flags & {"avx512_bf16", "amx_bf16", "bf16"})
    except OSError:
        pass
    return False


@contextlib.contextmanager
def weights_stored_as(quantize):
    """Trace for a file whose weights are stored as ``quantize`` ("float32", "float16" or "int8"):
    a model whose faster form depends on the bytes a weight takes asks `stored_weights` (the
    TFLite converter traces under it; Tacotron 2's `MemoryProjection` reads fewer bytes per
    decoder step than float weights, more than int8 ones)."""
    previous = getattr(_trace, "quantize", None)
    _trace.quantize = quantize
    try:
        yield
    finally:
        _trace.quantize = previous


def stored_weights():
    """How the weights of the graph being traced are stored: "float32" unless `weights_stored_as` says."""
    return getattr(_trace, "quantize", None) or "float32"
