"""Compiled CPU kernels: built once on this machine, used where they apply.

A few computations run as one compiled TensorFlow op instead of TensorFlow's own ops: MelGAN's
residual stack in inference (``residual_stack.cc``: one pass where TensorFlow's ~10 ops each
pass over the whole signal) and, in training, the kernel gradient of convs with few channels
(``kernel_gradient.cc``, with their bias gradient, through `layers.conv1d`, in float32 and
bfloat16), the vocoders' LeakyReLU + reflect pad with its gradient (``activated_pad.cc``,
through `layers.residual_stack.pad_activated`, float32: one pass each way where TensorFlow makes
two), and the flip of a conv kernel for its input gradient and for a transposed conv's polyphase
form (``flipped_kernel.cc``, through `layers.conv1d.flipped_kernel`: one pass where TensorFlow
makes a reverse and a transpose). The sources ship with the package and are compiled with the
system's C++ compiler (``$CXX``, else ``g++``) against the installed TensorFlow on first use,
into a cache folder keyed by the sources, the TensorFlow build, the compiler and the CPU
(``$TF_TTS_KERNEL_CACHE``, else ``$XDG_CACHE_HOME/tensorflow_tts/kernels``, else
``~/.cache/tensorflow_tts/kernels``); later processes load the cached library, or, where the
compiler failed, read why from the same folder instead of compiling again.

Everything works without them: with no compiler, a failed build, a GPU, a precision the kernel
lacks (the residual stack's and the activated pad's are float32 only), under XLA
(``jit_compile``), or with ``TF_TTS_FUSED_KERNELS=0``, TensorFlow's ops run in their place (the
same arithmetic; only the order of the sums differs, and a bfloat16 kernel gradient is rounded
once where TensorFlow rounds each tap's product); the residual stack's kernel is not used in
training. Graphs written for other runtimes never hold them: exports trace under `portable()`,
as does anything ``tf.saved_model.save`` traces.
"""

import contextlib
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import tensorflow as tf

logger = logging.getLogger(__name__)

SOURCES = sorted(Path(__file__).parent.glob("*.cc"))  # compiled together into one library
HEADERS = sorted(Path(__file__).parent.glob("*.h"))
ENV_SWITCH = "TF_TTS_FUSED_KERNELS"
BUILD_TIMEOUT_S = 600

_state = threading.local()
_library = {}  # "ops": the loaded module, or None once loading failed in this process
_lock = threading.Lock()


@contextlib.contextmanager
def portable():
    """Trace without fused kernels: for graphs saved or converted for another runtime (a
    SavedModel loaded without this package, a TFLite file), which would not know their op."""
    depth = getattr(_state, "portable", 0)
    _state.portable = depth + 1
    try:
        yield
    finally:
        _state.portable = depth


def _in_portable_trace():
    """Whether the graph being traced is for another runtime: `portable()`, a SavedModel, or XLA
    (``jit_compile``), which compiles only TensorFlow's own ops."""
    if getattr(_state, "portable", 0):
        return True
    # No public API tells a trace for saving or for XLA.
    from tensorflow.python.framework import ops as framework_ops
    from tensorflow.python.ops import control_flow_util
    from tensorflow.python.saved_model import save_context

    if save_context.in_save_context():
        return True
    return control_flow_util.GraphOrParentsInXlaContext(framework_ops.get_default_graph())


def cache_dir():
    if os.environ.get("TF_TTS_KERNEL_CACHE"):
        return Path(os.environ["TF_TTS_KERNEL_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "tensorflow_tts" / "kernels"


def _compiler():
    return os.environ.get("CXX") or "g++"


def _cpu_flags():
    """What -march=native compiles for: the CPU's feature flags (a cache shared by machines
    with different CPUs must not hand one the other's library)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                return line
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _build_command(output):
    # -U__AVX512FP16__: on CPUs with AVX512-FP16 (Intel Sapphire Rapids and later) -march=native
    # turns on the half-precision code of the Eigen headers TensorFlow ships, which does not
    # compile; the kernels use no half-precision arithmetic.
    return [
        _compiler(), "-O3", "-march=native", "-U__AVX512FP16__", "-ffp-contract=fast", "-std=c++17", "-shared",
        "-fPIC", "-w", *map(str, SOURCES), "-o", str(output), *tf.sysconfig.get_compile_flags(),
        *tf.sysconfig.get_link_flags(),
    ]


def library_path():
    """Where the library for these sources, TensorFlow, compiler and CPU is (or will be) cached."""
    compiler = shutil.which(_compiler()) or _compiler()
    key = hashlib.sha256()
    sources = [path.read_bytes() for path in SOURCES + HEADERS]
    for part in (*sources, tf.version.VERSION, tf.version.GIT_VERSION, " ".join(_build_command("out.so")), compiler,
                 _cpu_flags()):
        key.update(part if isinstance(part, bytes) else part.encode())
    return cache_dir() / key.hexdigest()[:20] / "tts_kernels.so"


def failure_record(path):
    """Where a failed build of the library at ``path`` leaves the compiler's last lines."""
    return path.with_name("build_failed.txt")


def build():
    """Compile the kernels into `library_path` unless already there; returns the path.

    Raises ``RuntimeError`` (with the compiler's last lines) when the compiler is missing or fails.
    A compiler that fails leaves its lines in `failure_record`, and later processes raise from it
    without compiling again (each try costs seconds at start-up); the record's key changes with
    the source, TensorFlow, the compiler and the CPU, and deleting it asks for a new try.
    """
    path = library_path()
    if path.exists():
        return path
    record = failure_record(path)
    if record.exists():
        raise RuntimeError(f"an earlier build failed; not trying again until {record} is deleted: "
                           f"{record.read_text().strip()}")
    if shutil.which(_compiler()) is None:
        raise RuntimeError(f"no C++ compiler {_compiler()!r} on PATH (set CXX to one)")
    path.parent.mkdir(parents=True, exist_ok=True)
    # Compile beside the target and rename: processes building at once never load half a file.
    handle, partial = tempfile.mkstemp(suffix=".so", dir=path.parent)
    os.close(handle)
    try:
        logger.info("building fused CPU kernels once, into %s", path)
        result = subprocess.run(_build_command(partial), capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
        if result.returncode != 0:
            tail = "\n".join((result.stderr or result.stdout).strip().splitlines()[-5:])
            message = f"{_compiler()} exited with {result.returncode}: {tail}"
            record.write_text(message + "\n")
            raise RuntimeError(message)
        os.replace(partial, path)
    except subprocess.TimeoutExpired as error:
        raise RuntimeError(f"{_compiler()} took longer than {BUILD_TIMEOUT_S} s") from error
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    return path


def ops():
    """The compiled ops module (built on first use), or None where it cannot be had: the reason
    is logged once, and the callers run TensorFlow ops instead."""
    if "ops" not in _library:
        with _lock:
            if "ops" not in _library:
                try:
                    _library["ops"] = tf.load_op_library(str(build()))
                except (RuntimeError, OSError, tf.errors.OpError) as error:
                    logger.warning(
                        "fused CPU kernels unavailable (%s); TensorFlow's ops run in their place "
                        "(same results, slower). Set %s=0 to skip this attempt.", error, ENV_SWITCH)
                    _library["ops"] = None
    return _library["ops"]


def usable(x, dtypes=(tf.float32,)):
    """Whether a compiled kernel may be traced for input ``x``: one of the kernel's ``dtypes`` on a
    machine with no GPU, outside portable and XLA traces, not switched off, and the library loads."""
    if os.environ.get(ENV_SWITCH, "1") == "0" or x.dtype not in dtypes or _in_portable_trace():
        return False
    if tf.config.list_logical_devices("GPU"):
        return False
    return ops() is not None
