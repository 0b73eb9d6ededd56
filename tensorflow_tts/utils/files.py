"""Finding files under a folder (TensorFlowTTS 1.8's `tensorflow_tts.utils.find_files`)."""

import fnmatch
import os


def find_files(root_dir, query="*.wav", include_root_dir=True):
    """Every file under ``root_dir`` (recursively, following links) whose name matches ``query``.

    Args:
        root_dir: the folder to search.
        query: a shell pattern for file names, e.g. "*.wav" or "*-feats.npy".
        include_root_dir: False gives paths relative to ``root_dir``.

    Returns:
        A sorted list of paths.
    """
    found = []
    for folder, _, names in os.walk(root_dir, followlinks=True):
        found += [os.path.join(folder, name) for name in fnmatch.filter(names, query)]
    if not include_root_dir:
        found = [os.path.relpath(path, root_dir) for path in found]
    return sorted(found)
