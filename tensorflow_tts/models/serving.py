"""What a servable model says about itself: its serving inputs, its named outputs, how to build it once.

Export (SavedModel, TFLite), the synthesizer and the benchmarks ask a model through these
methods instead of switching on its model_type or calling its private methods.
"""

import tensorflow as tf

from tensorflow_tts.models.pretrained import save_model
from tensorflow_tts.utils.precision import to_float32


def function_over(specs, call):
    """A tf.function over the named TensorSpecs ``specs`` (arguments by position) that calls
    ``call(inputs)`` with them as a dict {name: tensor}.

    Traced without autograph: our models write their loops as tf.while_loop and branch
    only on Python values, and converting the call of every Keras layer took ~5 s of the
    first synthesis in a fresh process.
    """
    names = [spec.name for spec in specs]

    def serve(*args):
        return call(dict(zip(names, args)))

    return tf.function(serve, input_signature=specs, autograph=False)


class ServableModel:
    """Mixin of the models that can be exported and served (acoustic models and vocoders).

    * ``serving_signature(batch_size=None)``: the named ``tf.TensorSpec`` inputs (time axes None).
    * ``serve(inputs, batch_size=None)``: a dict of those inputs -> a dict of named outputs.
    * ``build_once(num_mels=80)``: create every weight (vocoders need the mel bins; acoustic
      models read them from their config); returns the model.
    * ``num_mels``: mel bins made (acoustic) or read (vocoder); ``mel_output``: for acoustic
      models, the name of the output holding the mels to vocode.

    It also keeps 1.8's ``model._build()`` and ``model.save_pretrained(dir)``.

    Under a mixed-precision policy (``mixed_bfloat16``, ``mixed_float16``) the models compute
    in the low precision and return float32 outputs, as Keras advises for a model's last
    layer: a loss or a training loop written for float32 works unchanged.
    """

    mel_output = None

    def __call__(self, *args, **kwargs):
        return to_float32(super().__call__(*args, **kwargs))

    def serving_signature(self, batch_size=None):
        raise NotImplementedError

    def serve(self, inputs, batch_size=None):
        raise NotImplementedError

    def build_once(self, num_mels=80):
        raise NotImplementedError

    def _build(self):
        """TensorFlowTTS 1.8's name for `build_once` (its default mel bins)."""
        self.build_once()

    def save_pretrained(self, saved_dir):
        """1.8's ``model.save_pretrained(dir)``: ``config.yml`` and ``model.h5`` (built first if
        needed), which `TFAutoModel.from_pretrained(dir)` reads back; returns the folder."""
        if not self.built:
            self.build_once()
        return save_model(self, saved_dir)

    def serving_function(self, batch_size=None):
        """``serve`` as a tf.function over ``serving_signature`` (see `function_over`)."""
        if not self.built:
            self.build_once()
        return function_over(self.serving_signature(batch_size), lambda inputs: self.serve(inputs, batch_size))
