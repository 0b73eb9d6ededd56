"""Small helpers that import no other package folder: strategy selection, plotting.

TensorFlow-dependent helpers are imported lazily so the text front ends and audio code
that use `tensorflow_tts.utils` do not pay for importing TensorFlow.
"""


def __getattr__(name):
    if name == "return_strategy":
        from tensorflow_tts.utils.strategy import return_strategy

        return return_strategy
    raise AttributeError(f"module 'tensorflow_tts.utils' has no attribute {name!r}")
