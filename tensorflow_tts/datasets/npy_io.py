"""Reading `.npy` files: headers in Python (shapes without loading), data inside tf.data.

Decoding in the graph (`tf.io.read_file` + `tf.io.decode_raw`) lets tf.data read many
files in parallel without the GIL, which `tf.numpy_function(np.load)` cannot.
"""

import numpy as np
import tensorflow as tf


class NpyFormatError(ValueError):
    """A `.npy` file whose dtype, layout or rank is not what the dump layout promises."""


def read_npy_header(path):
    """Return `(shape, dtype)` of a `.npy` file, reading only its header."""
    try:
        with open(path, "rb") as stream:
            version = np.lib.format.read_magic(stream)
            if version == (1, 0):
                shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(stream)
            else:
                shape, fortran_order, dtype = np.lib.format.read_array_header_2_0(stream)
    except (OSError, ValueError) as error:
        raise NpyFormatError(f"{path}: not a readable .npy file ({error})") from error
    if fortran_order and len(shape) > 1:
        raise NpyFormatError(f"{path}: stored in Fortran order; re-save it with np.save(np.ascontiguousarray(x))")
    return shape, dtype


def check_npy(path, dtype, rank, inner_shape=None):
    """Check a file matches the layout (dtype, rank, trailing dims); return its shape."""
    shape, file_dtype = read_npy_header(path)
    expected = np.dtype(dtype).newbyteorder("<")
    if file_dtype != expected:
        raise NpyFormatError(
            f"{path}: expected little-endian {np.dtype(dtype).name}, got {file_dtype.str}; "
            f"rerun preprocessing or convert with x.astype(np.{np.dtype(dtype).name})"
        )
    if len(shape) != rank:
        raise NpyFormatError(f"{path}: expected {rank} dimension(s), got shape {shape}")
    if inner_shape is not None and tuple(shape[1:]) != tuple(inner_shape):
        raise NpyFormatError(f"{path}: expected shape (frames, {', '.join(map(str, inner_shape))}), got {shape}")
    return shape


def decode_npy(content, dtype, inner_shape=()):
    """Decode the bytes of a little-endian, C-ordered `.npy` file inside the graph.

    Args:
        content: scalar tf.string, the whole file.
        dtype: tf.DType of the stored array (checked beforehand with `check_npy`).
        inner_shape: every dimension but the first; `()` for 0-D and 1-D arrays.

    Returns:
        Tensor of shape `(N, *inner_shape)` (or `(N,)`); a 0-D file gives `(1,)`.
    """
    # Header: 6-byte magic, major and minor version bytes, then the header length as a
    # little-endian uint16 (version 1) or uint32 (versions 2 and 3).
    major = tf.io.decode_raw(tf.strings.substr(content, 6, 1), tf.uint8)[0]
    header_v1 = tf.cast(tf.io.decode_raw(tf.strings.substr(content, 8, 2), tf.uint16)[0], tf.int32)
    header_v2 = tf.io.decode_raw(tf.strings.substr(content, 8, 4), tf.int32)[0]
    offset = tf.where(major == 1, 10 + header_v1, 12 + header_v2)
    data = tf.strings.substr(content, offset, tf.strings.length(content) - offset)
    values = tf.io.decode_raw(data, dtype, little_endian=True)
    return tf.reshape(values, [-1, *inner_shape])


def load_npy(path, dtype, inner_shape=()):
    """Read and decode one `.npy` file given its path as a scalar tf.string."""
    return decode_npy(tf.io.read_file(path), dtype, inner_shape)
