"""Small helpers that import no other package folder: strategy selection, plotting, logging set-up, checkpoint loading.

`return_strategy` (1.8's `from tensorflow_tts.utils import return_strategy`) is imported
lazily, so importing this package does not import TensorFlow.
"""


def __getattr__(name):
    if name == "return_strategy":
        from tensorflow_tts.utils.strategy import return_strategy

        return return_strategy
    raise AttributeError(f"module 'tensorflow_tts.utils' has no attribute {name!r}")
