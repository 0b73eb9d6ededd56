"""TFLite export with builtin ops only (no Flex delegate), and a runner for the converted models.

Every model is converted from its batch-1 serving function with dynamic time axes: the
runner resizes the inputs to each call's lengths (`resize_tensor_input`), nothing is
re-exported per length. `model_info` travels inside the flatbuffer as a metadata entry.
"""

import json
import logging
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)

QUANTIZATIONS = ("float32", "float16", "int8")
METADATA_NAME = "tensorflow_tts"


class TFLiteExportError(Exception):
    """A conversion that would need ops outside TFLite's builtin set, or a bad request."""


# --------------------------------------------------------------------------- conversion
def make_converter(function, trackable=None, quantize="float32"):
    """A TFLiteConverter for a tf.function with an input signature, restricted to builtin ops.

    quantize: "float32" (none), "float16" (weights stored as float16) or "int8" (dynamic
    range: int8 weights, float activations; `_convert` then gives narrow pointwise convs their
    float32 filters back, `float_narrow_pointwise_convs`). The op set is TFLITE_BUILTINS and nothing
    else: a graph that needs a TensorFlow (Flex) op fails to convert rather than needing
    the Flex delegate at run time.

    trackable: what the converter saves beside the function, to find its variables. Pass the
    variables alone (as `convert_model` and `convert_text2wav` do, `_variables_of`): a Keras
    model also has Keras' traces of every layer's call saved, several times the work.
    """
    import tensorflow as tf

    from tensorflow_tts.layers import kernels
    from tensorflow_tts.utils.precision import weights_stored_as

    if quantize not in QUANTIZATIONS:
        raise TFLiteExportError(f"unknown quantization {quantize!r}; use one of {', '.join(QUANTIZATIONS)}")
    with kernels.portable(), weights_stored_as(quantize):  # a TFLite runtime has builtin ops only
        concrete = function.get_concrete_function()
    converter = tf.lite.TFLiteConverter.from_concrete_functions([concrete], trackable)
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
    converter.allow_custom_ops = False
    if quantize == "float16":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.target_spec.supported_types = [tf.float16]
    elif quantize == "int8":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
    return converter


def _convert(function, trackable, quantize, info):
    converter = make_converter(function, trackable, quantize)
    try:
        flatbuffer = converter.convert()
    except Exception as error:  # the converter raises its own ConverterError, with the op list
        raise TFLiteExportError(
            f"{info.get('model_type')}: conversion with builtin TFLite ops failed; a layer uses an op "
            f"that needs Flex and must be rewritten in the model ({error})"
        ) from None
    flex = [name for name in operator_names(flatbuffer) if name.startswith("Flex")]
    if flex:  # cannot happen with TFLITE_BUILTINS only; guards against converter changes
        raise TFLiteExportError(f"{info.get('model_type')}: the converted model uses Flex ops {flex}")
    if quantize == "int8":
        flatbuffer = float_narrow_pointwise_convs(flatbuffer)
    model, _ = _read_model(flatbuffer)
    if model.SignatureDefsLength() == 0:  # the converter logs the error and goes on without one
        raise TFLiteExportError(
            f"{info.get('model_type')}: the converted model has no signature, so no runner can name its "
            "inputs: saving the model's functions failed (the converter's error is in the log above)"
        )
    return add_metadata(flatbuffer, dict(info, quantize=quantize))


def convert_model(model, quantize="float32", sampling_rate=None, hop_size=None):
    """A Keras model (FastSpeech2, FastSpeech, Tacotron2 or a vocoder) -> TFLite flatbuffer bytes.

    Batch size 1; the signature "serving_default" has the inputs and outputs of
    `export.serving_function` (e.g. input_ids -> mel_after, or mels -> audio).
    """
    from tensorflow_tts.inference.export import model_info, serving_function

    info = model_info(model, sampling_rate=sampling_rate, hop_size=hop_size)
    return _convert(serving_function(model, batch_size=1), _variables_of(model), quantize, info)


def _variables_of(*models):
    """The models' variables in a plain tf.Module: all the converter needs to save the function.

    Given a Keras model, it also saves Keras' own traces of every layer's call, in training
    and inference: the MB-MelGAN v1 and FastSpeech2 conversions then took 8-9x and 4-5x the
    time, for a file of the same size.
    """
    import tensorflow as tf

    holder = tf.Module()
    holder.model_variables = [variable for model in models for variable in model.variables]
    return holder


def convert_text2wav(acoustic, vocoder, quantize="float32", sampling_rate=None):
    """An acoustic model and a vocoder -> one TFLite model: token ids (+ ratios) -> {"audio": (1, N, 1)}."""
    from tensorflow_tts.inference.export import (
        combined_info,
        model_info,
        text2wav_function,
    )

    function = text2wav_function(acoustic, vocoder, batch_size=1)
    info = combined_info(model_info(acoustic, sampling_rate=sampling_rate), model_info(vocoder, sampling_rate=sampling_rate))
    return _convert(function, _variables_of(acoustic, vocoder), quantize, info)


# A dynamic-range int8 pointwise (1x1) conv over at most this many input channels is given back its
# float32 filter (`float_narrow_pointwise_convs`). 0 keeps every int8 filter. Measured with
# `benchmarks/int8_pointwise.py` (benchmarks/HISTORY.md, twelfth and seventeenth stops): on an Intel
# Xeon with AMX, float32 filters up to 96 channels made every vocoder file faster (MB-MelGAN 0.82,
# 0.83 with its 48-channel ones alone, 0.88 with its 192-channel ones too, slower with convs that
# have taps in float32; Parallel WaveGAN, 64 channels, 0.93); on an AMD Zen 4 the
# 96-channel ones made the MB-MelGAN v1 recipe's file 1.09-1.12x slower than all-int8 (three of
# four runs) and the 64-channel ones Parallel WaveGAN's 1.08-1.11x; at 48 no file was slower.
FLOAT_POINTWISE_MAX_CHANNELS = 48


def float_narrow_pointwise_convs(flatbuffer):
    """The int8 file with float32 filters in its narrow pointwise convs (see FLOAT_POINTWISE_MAX_CHANNELS).

    With int8 weights and float activations ("dynamic range"), LiteRT's XNNPACK quantizes each
    conv's input row by row on every call: a min/max, a conversion and a packing per row. For a
    1x1 conv over few channels (MB-MelGAN's last residual stack, 48 channels at the sub-band
    rate: 5,512 rows per second of 22.05 kHz audio) that can cost more than the float32 product
    it saves; convs with taps (FastSpeech2's, the vocoder's 3-tap and 7-tap ones) were slower in
    float32 (measurements: beside FLOAT_POINTWISE_MAX_CHANNELS). The float32 filter holds the
    int8 values times their per-channel scales: the same weights, only the activations stay float.
    Other convs and ops are untouched.
    """
    from tensorflow.lite.tools import flatbuffer_utils

    schema = _schema()
    model = flatbuffer_utils.convert_bytearray_to_object(bytearray(flatbuffer))
    users = {}  # buffer index -> how many tensors read it (the converter may share equal constants)
    for subgraph in model.subgraphs:
        for tensor in subgraph.tensors:
            users[tensor.buffer] = users.get(tensor.buffer, 0) + 1
    restored = 0
    for subgraph in model.subgraphs:
        for op in subgraph.operators:
            code = model.operatorCodes[op.opcodeIndex]
            if _builtin_code(code.builtinCode, code.deprecatedBuiltinCode) != schema.BuiltinOperator.CONV_2D:
                continue
            inputs, weights = subgraph.tensors[op.inputs[0]], subgraph.tensors[op.inputs[1]]
            out_channels, height, width, in_channels = (int(size) for size in weights.shape)
            if (
                weights.type != schema.TensorType.INT8
                or inputs.type != schema.TensorType.FLOAT32
                or height * width != 1
                or in_channels > FLOAT_POINTWISE_MAX_CHANNELS
            ):
                continue
            quantization = weights.quantization
            if quantization is None or quantization.scale is None or quantization.quantizedDimension != 0:
                continue  # not the converter's per-output-channel layout: leave it as it is
            scales = np.asarray(quantization.scale, np.float32).reshape(-1, 1)
            zero_points = np.asarray(quantization.zeroPoint if quantization.zeroPoint is not None else [0]).reshape(-1, 1)
            if scales.shape[0] not in (1, out_channels) or zero_points.shape[0] not in (1, out_channels):
                continue
            int8_values = np.frombuffer(bytes(model.buffers[weights.buffer].data), np.int8).reshape(out_channels, -1)
            buffer = schema.BufferT()  # a buffer of its own: another tensor may read the int8 one
            buffer.data = np.frombuffer(((int8_values - zero_points) * scales).astype("<f4").tobytes(), np.uint8)
            users[weights.buffer] -= 1
            if not users[weights.buffer]:
                model.buffers[weights.buffer].data = None
            model.buffers.append(buffer)
            weights.buffer = len(model.buffers) - 1
            weights.type, weights.quantization = schema.TensorType.FLOAT32, None
            restored += 1
    if not restored:
        return flatbuffer
    logger.debug("int8 file: %d narrow pointwise convs keep float32 filters", restored)
    return bytes(flatbuffer_utils.convert_object_to_bytearray(model))


# --------------------------------------------------------------------------- flatbuffer contents
def _schema():
    try:
        from ai_edge_litert import schema_py_generated as schema
    except ImportError:  # TensorFlow's copy of the same generated code
        from tensorflow.lite.python import schema_py_generated as schema
    return schema


def operator_names(flatbuffer):
    """The distinct operators of a TFLite model: builtin names ("CONV_2D") or custom codes ("FlexRFFT")."""
    model, code_name = _read_model(flatbuffer)
    return sorted({code_name(model.OperatorCodes(index)) for index in range(model.OperatorCodesLength())})


def _builtin_code(builtin_code, deprecated_builtin_code):
    """An OperatorCode's operator: files keep codes under 127 in the deprecated int8 field, and
    newer converters write both fields, so the larger of the two is the operator."""
    return max(builtin_code, deprecated_builtin_code)


def _read_model(flatbuffer):
    """The flatbuffer's Model, and a function from one of its OperatorCodes to the op's name."""
    schema = _schema()
    model = schema.Model.GetRootAsModel(bytearray(flatbuffer), 0)
    builtin_names = {value: name for name, value in vars(schema.BuiltinOperator).items() if not name.startswith("_")}

    def code_name(code):
        builtin = _builtin_code(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        if builtin == schema.BuiltinOperator.CUSTOM:
            return code.CustomCode().decode()
        return builtin_names.get(builtin, str(builtin))

    return model, code_name


# Inputs of an op that set its shape, bounds or padding rather than carry data.
_PARAMETER_INPUTS = {"RESHAPE": (1,), "STRIDED_SLICE": (1, 2, 3), "SLICE": (1, 2), "PAD": (1,), "PADV2": (1,),
                     "MIRROR_PAD": (1,), "TILE": (1,), "TRANSPOSE": (1,)}


def reference_kernel_ops(flatbuffer):
    """{op name: count} of the ops written in a way XNNPACK (LiteRT's CPU delegate) does not take.

    Such an op stays with TFLite's own kernels, often single-threaded reference ones:
    - a reshape, slice or pad whose shape, bounds or padding are computed at run time
      (XNNPACK takes them only as constants of the file; a strided slice whose end followed
      the input's length took 15.7 % of the MB-MelGAN int8 file's CPU samples);
    - a strided slice that adds or drops an axis (``x[:, tf.newaxis]``, ``y[:, 0]``; write
      ``tf.expand_dims`` and ``tf.squeeze``): written so in the residual blocks, they made
      that file 6x slower.
    A vocoder needs none of them.
    """
    schema = _schema()
    model, code_name = _read_model(flatbuffer)
    counts = {}
    for subgraph in (model.Subgraphs(index) for index in range(model.SubgraphsLength())):
        for op in (subgraph.Operators(index) for index in range(subgraph.OperatorsLength())):
            name = code_name(model.OperatorCodes(op.OpcodeIndex()))
            computed = any(
                model.Buffers(subgraph.Tensors(op.Inputs(position)).Buffer()).DataLength() == 0
                for position in _PARAMETER_INPUTS.get(name, ())
                if position < op.InputsLength()
            )
            if name == "STRIDED_SLICE" and op.BuiltinOptions() is not None:
                options = schema.StridedSliceOptions()
                options.Init(op.BuiltinOptions().Bytes, op.BuiltinOptions().Pos)
                computed = computed or bool(options.NewAxisMask() or options.ShrinkAxisMask())
            if computed:
                counts[name] = counts.get(name, 0) + 1
    return counts


def add_metadata(flatbuffer, info):
    """The model with `info` (a JSON-able dict) stored as its "tensorflow_tts" metadata entry."""
    from tensorflow.lite.tools import flatbuffer_utils

    schema = _schema()
    model = flatbuffer_utils.convert_bytearray_to_object(bytearray(flatbuffer))
    buffer = schema.BufferT()
    buffer.data = np.frombuffer(json.dumps(info).encode("utf-8"), np.uint8)
    model.buffers.append(buffer)
    metadata = schema.MetadataT()
    metadata.name = METADATA_NAME
    metadata.buffer = len(model.buffers) - 1
    model.metadata = list(model.metadata or []) + [metadata]
    return bytes(flatbuffer_utils.convert_object_to_bytearray(model))


def read_metadata(flatbuffer):
    """The dict `add_metadata` stored, or None."""
    schema = _schema()
    model = schema.Model.GetRootAsModel(bytearray(flatbuffer), 0)
    for index in range(model.MetadataLength()):
        entry = model.Metadata(index)
        if entry.Name() is not None and entry.Name().decode() == METADATA_NAME:
            data = model.Buffers(entry.Buffer()).DataAsNumpy()
            return json.loads(bytes(data).decode("utf-8"))
    return None


# --------------------------------------------------------------------------- running
def _interpreter_class():
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        import tensorflow as tf

        Interpreter = tf.lite.Interpreter
    return Interpreter


class TFLiteModel:
    """Runs a converted model by input name, resizing inputs to each call's shapes.

    The interpreter keeps its default delegate (XNNPACK on CPU). `info` is the recorded
    `model_info` (None for a file made elsewhere).

        model = TFLiteModel("fastspeech2.tflite")
        outputs = model(input_ids=ids[None], speaker_ids=[0], speed_ratios=[1.0], ...)
        outputs["mel_after"]  # (1, F, num_mels)
    """

    def __init__(self, model, num_threads=None, signature_key="serving_default"):
        if isinstance(model, (str, Path)):
            self.path = Path(model)
            if not self.path.is_file():
                raise FileNotFoundError(f"{self.path}: no such TFLite file")
            flatbuffer = self.path.read_bytes()
        else:
            self.path, flatbuffer = None, bytes(model)
        if flatbuffer[4:8] != b"TFL3":  # the file identifier of every TFLite flatbuffer
            raise ValueError(f"{self.path or 'model'}: not a TFLite model (no TFL3 identifier)")
        self.info = read_metadata(flatbuffer)
        self.interpreter = _interpreter_class()(model_content=flatbuffer, num_threads=num_threads)
        signatures = self.interpreter.get_signature_list()
        if signature_key not in signatures:
            raise ValueError(f"{self.path or 'model'}: no signature {signature_key!r}; it has {sorted(signatures)}")
        runner = self.interpreter.get_signature_runner(signature_key)
        self._inputs = {name: details for name, details in runner.get_input_details().items()}
        self._outputs = {name: details["index"] for name, details in runner.get_output_details().items()}
        del runner  # it holds the interpreter's internals, which allocate_tensors refuses while shared
        # Allocated on the first call, at its shapes: the declared shapes (1 for every dynamic
        # axis) can be too short for a model (a reflection pad needs more than one frame).
        self._shapes = {name: None for name in self._inputs}

    @property
    def input_names(self):
        return sorted(self._inputs)

    @property
    def output_names(self):
        return sorted(self._outputs)

    def input_shape(self, name):
        """The declared shape of an input, -1 where the axis is dynamic."""
        return [int(size) for size in self._inputs[name]["shape_signature"]]

    def __call__(self, **inputs):
        """Named numpy inputs -> dict of named numpy outputs (copies)."""
        missing = sorted(set(self._inputs) - set(inputs))
        unknown = sorted(set(inputs) - set(self._inputs))
        if missing or unknown:
            raise ValueError(f"TFLite model inputs are {self.input_names}; missing {missing}, unknown {unknown}")
        arrays = {name: np.asarray(value, dtype=self._inputs[name]["dtype"]) for name, value in inputs.items()}
        resized = False
        for name, array in arrays.items():
            if self._shapes[name] != array.shape:
                self.interpreter.resize_tensor_input(self._inputs[name]["index"], list(array.shape), strict=True)
                self._shapes[name] = array.shape
                resized = True
        if resized:
            self.interpreter.allocate_tensors()
        for name, array in arrays.items():
            self.interpreter.set_tensor(self._inputs[name]["index"], array)
        self.interpreter.invoke()
        return {name: np.array(self.interpreter.get_tensor(index)) for name, index in self._outputs.items()}
