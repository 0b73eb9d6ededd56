"""tensorflow_tts: train and serve neural text-to-speech with TensorFlow 2 and Keras 2."""

import os

# tf.keras must resolve to Keras 2 (tf-keras) for us and for user code; this has to
# happen before anything imports tensorflow's keras, so it comes first.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

__version__ = "2.0.0.dev0"

# Old module paths (tensorflow_tts.utils.cleaners, ...) resolve to where the modules live now.
from tensorflow_tts import moved as _moved  # noqa: E402

_moved.install()

# Before TensorFlow's threads exist too: few malloc heaps, so input pipelines do not fragment
# memory epoch after epoch (see utils/heap.py; MALLOC_ARENA_MAX overrides it).
from tensorflow_tts.utils.heap import limit_malloc_arenas  # noqa: E402

limit_malloc_arenas()
