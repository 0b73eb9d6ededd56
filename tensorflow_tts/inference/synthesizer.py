"""Text to waveform with an acoustic model and a vocoder, each a Keras model folder, a SavedModel or a .tflite.

    synthesizer = Synthesizer(acoustic="fastspeech2/", vocoder="mb_melgan.tflite", processor="ljspeech_mapper.json")
    audio = synthesizer.synthesize("Hello world.")  # float32 (samples,), at synthesizer.sampling_rate
    audios = synthesizer.synthesize_batch(["Hello.", "Good day."])  # one padded batch, the same audio

Everything that can be checked is checked before synthesis (the vocoder's mel bins, hop size
and sampling rate against the acoustic model's, the processor's symbols against the model's
vocabulary, ratios and speaker ids), and bad input raises `SynthesisError` with a message
that names the problem and the fix.
"""

import logging
import math
from pathlib import Path

import numpy as np

from tensorflow_tts.inference.batching import bucket, pad_rows, vocode_batch
from tensorflow_tts.inference.pairing import pair_mismatch
from tensorflow_tts.inference.streaming import receptive_field_frames, stream_vocoder
from tensorflow_tts.processor.text.text_split import split_in_half, split_sentences

logger = logging.getLogger(__name__)

DEFAULT_SAMPLING_RATE = 22050
MAX_CHARS = 100_000  # more than this in one call is almost surely a mistake (a binary file, ...)
PIECE_CHARS = 300  # sentences are cut to at most this many characters before synthesis
PAUSE_SECONDS = 0.15  # silence between sentences
# Streaming context for an exported vocoder that does not record its receptive field
# (the v1 recipes of MelGAN, MB-MelGAN and HiFi-GAN need 8, 13 and 15 frames).
UNKNOWN_CONTEXT_FRAMES = 32
# Frame counts a Keras FastSpeech model decodes: rounded up to 4 sizes per octave (~5 % more
# frames on average), so a server's memory stops growing with every new text length.
FRAME_BUCKETS_PER_OCTAVE = 4


class SynthesisError(Exception):
    """Bad input to synthesis: a missing or mismatched model, unusable text, a bad ratio or speaker."""


class SynthesisCancelled(Exception):
    """The caller gave up (a server's time limit passed): synthesis stopped before its next model call."""


def _never():
    return False


# --------------------------------------------------------------------------- model runners
class _Runner:
    """A loaded model: named numpy inputs (batch 1) -> dict of named numpy outputs, plus its info.

    `batchable`: whether it also takes several rows at once (a TFLite model is converted for batch 1).
    `call_errors`: what a call raises on an input the model cannot run (frames beyond the position
    table: a failed gather in TensorFlow, a failed invoke in LiteRT).
    """

    kind = "model"
    batchable = True
    call_errors = (RuntimeError,)

    def __init__(self, source, info, input_names):
        self.source = source
        self.info = info
        self.input_names = list(input_names)

    def __call__(self, **inputs):
        raise NotImplementedError


class _KerasRunner(_Runner):
    kind = "Keras model"

    def __init__(self, model, info, source):
        import tensorflow as tf

        from tensorflow_tts.inference.export import input_signature, serving_function

        super().__init__(source, info, [spec.name for spec in input_signature(model)])
        self.call_errors = (tf.errors.InvalidArgumentError, RuntimeError)
        self.model = model
        self._function = serving_function(model)
        if hasattr(model, "frame_buckets_per_octave"):
            # FastSpeech decodes a bucketed frame count, as the ids and rows are bucketed (batching.py):
            # traced now with it, then the model is left as it was (an export of it decodes exactly).
            chosen, model.frame_buckets_per_octave = model.frame_buckets_per_octave, FRAME_BUCKETS_PER_OCTAVE
            try:
                self._function.get_concrete_function()
            finally:
                model.frame_buckets_per_octave = chosen

    def __call__(self, **inputs):
        outputs = self._function(*[inputs[name] for name in self.input_names])
        return {name: value.numpy() for name, value in outputs.items()}


class _SavedModelRunner(_Runner):
    kind = "SavedModel"

    def __init__(self, path):
        import tensorflow as tf

        from tensorflow_tts.inference.export import read_saved_model_info

        self._loaded = tf.saved_model.load(str(path))
        if "serving_default" not in self._loaded.signatures:
            raise SynthesisError(f"{path}: the SavedModel has no serving_default signature")
        self._function = self._loaded.signatures["serving_default"]
        specs = self._function.structured_input_signature[1]
        info = read_saved_model_info(path) or _infer_info(
            {name: list(spec.shape) for name, spec in specs.items()}, list(self._function.structured_outputs)
        )
        super().__init__(path, info, list(specs))
        self.call_errors = (tf.errors.InvalidArgumentError, RuntimeError)
        self._dtypes = {name: spec.dtype for name, spec in specs.items()}
        self.batchable = all(spec.shape.rank and spec.shape[0] is None for spec in specs.values())

    def __call__(self, **inputs):
        import tensorflow as tf

        outputs = self._function(**{name: tf.constant(inputs[name], self._dtypes[name]) for name in self.input_names})
        return {name: value.numpy() for name, value in outputs.items()}


class _TFLiteRunner(_Runner):
    kind = "TFLite model"
    batchable = False

    def __init__(self, path, num_threads=None):
        from tensorflow_tts.inference.tflite import TFLiteModel

        try:
            self._model = TFLiteModel(path, num_threads=num_threads)
        except ValueError as error:
            raise SynthesisError(f"{path}: cannot read this TFLite model ({error})") from None
        shapes = {name: self._model.input_shape(name) for name in self._model.input_names}
        info = self._model.info or _infer_info(shapes, self._model.output_names)
        super().__init__(path, info, self._model.input_names)

    def __call__(self, **inputs):
        return self._model(**{name: inputs[name] for name in self.input_names})


def _infer_info(input_shapes, output_names):
    """`model_info` guessed from a signature, for exported files that do not record one."""
    if "mels" in input_shapes:
        return {"model_type": "vocoder", "role": "vocoder", "num_mels": int(input_shapes["mels"][-1]),
                "hop_size": None, "sampling_rate": None}
    if "audio" in output_names:
        role, mel_output = "text2wav", None
    else:
        role = "acoustic"
        mel_output = "mel_after" if "mel_after" in output_names else "mel_outputs"
    model_type = "tacotron2" if "input_lengths" in input_shapes else (
        "fastspeech2" if "f0_ratios" in input_shapes else "fastspeech")
    return {"model_type": model_type, "role": role, "num_mels": None, "hop_size": None, "sampling_rate": None,
            "vocab_size": None, "n_speakers": None, "max_position_embeddings": 0, "mel_output": mel_output}


def load_runner(source, what, num_threads=None):
    """A Keras model object, a Keras model folder, a SavedModel folder or a .tflite file -> a runner.

    `what` ("acoustic model", "vocoder") names the argument in error messages.
    """
    if not isinstance(source, (str, Path)):  # an in-memory Keras model
        from tensorflow_tts.inference.export import ExportError, model_info

        _check_finite_weights(source, f"{what} {type(source).__name__}")
        try:
            return _KerasRunner(source, model_info(source), source=type(source).__name__)
        except ExportError as error:
            raise SynthesisError(f"{what}: {error}") from None
    path = Path(source)
    if not path.exists():
        raise SynthesisError(f"{what} {path}: no such file or folder")
    if path.is_file():
        if path.suffix != ".tflite":
            raise SynthesisError(
                f"{what} {path}: expected a .tflite file, a SavedModel folder or a folder with config.yml "
                "and model.h5 (for an .h5, pass its folder, with the training YAML saved there as config.yml)"
            )
        return _TFLiteRunner(path, num_threads=num_threads)  # LiteRT alone: TensorFlow stays unloaded
    from tensorflow_tts.inference.export import ExportError, is_saved_model, load_keras_model

    if is_saved_model(path):
        return _SavedModelRunner(path)
    try:
        model, info = load_keras_model(path)
    except ExportError as error:
        raise SynthesisError(f"{what}: {error}") from None
    _check_finite_weights(model, f"{what} {path}")
    return _KerasRunner(model, info, source=path)


def _check_finite_weights(model, label):
    """Refuse a Keras model whose weights hold NaN or inf (a diverged training run): it can only make noise."""
    broken = [weight.name for weight in model.weights
              if weight.dtype.is_floating and not np.all(np.isfinite(weight.numpy()))]
    if broken:
        raise SynthesisError(
            f"{label}: {len(broken)} of its {len(model.weights)} weights hold NaN or inf (first: {broken[0]}); "
            "training diverged: use an earlier checkpoint"
        )


def _check_finite(values, what, piece):
    """Refuse NaN or inf in a model's output for `piece`, which would be written as noise or silence."""
    if not np.all(np.isfinite(values)):
        raise SynthesisError(
            f"the {what} made NaN or inf for {piece!r}; its weights are probably not finite (a diverged training run)"
        )


def _auto_processor(source):
    """The processor for `source`: a processor object, a mapper JSON or a folder holding one."""
    from tensorflow_tts.processor.base_processor import DataProcessorError
    from tensorflow_tts.processor.registry import load_processor

    if source is None or not isinstance(source, (str, Path)):
        return source
    try:
        return load_processor(source)
    except DataProcessorError as error:
        raise SynthesisError(f"processor: {error}") from None


def _check_ratio(name, value):
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise SynthesisError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise SynthesisError(f"{name} must be a positive number (1.0 = unchanged), got {value}")
    return value


def _per_text(name, value, count):
    """A control given once for all texts, or as one value per text -> a list of `count` values."""
    if isinstance(value, (list, tuple, np.ndarray)):
        if len(value) != count:
            raise SynthesisError(f"{name}: {len(value)} values for {count} texts; give one value or one per text")
        return list(value)
    return [value] * count


# --------------------------------------------------------------------------- synthesizer
class Synthesizer:
    """Text -> float32 audio with any pairing of model formats.

    Args:
        acoustic: FastSpeech2/FastSpeech/Tacotron2 as a Keras model, a folder with config.yml
            and weights (save_pretrained or a training run), a SavedModel folder or a .tflite
            file; or a text2wav .tflite (token ids -> audio), then without a vocoder.
        vocoder: MB-MelGAN/MelGAN/HiFi-GAN in any of the same forms.
        processor: a mapper JSON (or its folder, or a processor object); default: the one in
            the acoustic model's folder.
        sampling_rate: of the output; default: what the models record, else 22050.
        num_threads: for TFLite interpreters.
        max_chars: longest text accepted by one call.
        piece_chars: sentences are cut to at most this many characters.
        pause_seconds: silence put between sentences.
    """

    def __init__(self, acoustic, vocoder=None, processor=None, sampling_rate=None, num_threads=None,
                 max_chars=MAX_CHARS, piece_chars=PIECE_CHARS, pause_seconds=PAUSE_SECONDS):
        self.acoustic = load_runner(acoustic, "acoustic model", num_threads)
        role = self.acoustic.info.get("role")
        if role == "vocoder":
            raise SynthesisError(f"acoustic model {self.acoustic.source} is a vocoder; pass it as the vocoder")
        if role == "text2wav":
            if vocoder is not None:
                raise SynthesisError(f"{self.acoustic.source} already contains a vocoder; do not pass another one")
            self.vocoder = None
        else:
            if vocoder is None:
                raise SynthesisError("a vocoder is needed: pass a vocoder model (or a text2wav .tflite as the acoustic model)")
            self.vocoder = load_runner(vocoder, "vocoder", num_threads)
            if self.vocoder.info.get("role") != "vocoder":
                raise SynthesisError(f"vocoder {self.vocoder.source} is an acoustic model; pass a vocoder")
            self._complete_vocoder_info()
            self._check_pair()
        if processor is None and isinstance(acoustic, (str, Path)) and Path(acoustic).is_dir():
            processor = self._processor_next_to(Path(acoustic))
        if processor is None:
            raise SynthesisError("a processor is needed: pass its mapper JSON (e.g. ljspeech_mapper.json)")
        self.processor = _auto_processor(processor)
        self._check_processor()
        self.sampling_rate = int(sampling_rate or self._recorded("sampling_rate") or DEFAULT_SAMPLING_RATE)
        if sampling_rate is None and not self._recorded("sampling_rate"):
            logger.info("the models record no sampling rate; writing audio at %d Hz", self.sampling_rate)
        self.max_chars, self.piece_chars, self.pause_seconds = max_chars, piece_chars, pause_seconds
        self._context_frames = None

    # ------------------------------------------------------------------ checks
    @staticmethod
    def _processor_next_to(folder):
        candidates = sorted(folder.glob("*_mapper.json")) + sorted(folder.glob("processor.json"))
        return candidates[0] if len(candidates) == 1 else None

    def _recorded(self, key):
        for runner in (self.vocoder, self.acoustic):
            if runner is not None and runner.info.get(key):
                return runner.info[key]
        return None

    def _complete_vocoder_info(self):
        """Find the hop size of a vocoder whose file does not record it, by vocoding 4 frames."""
        info = self.vocoder.info
        if info.get("hop_size") or not info.get("num_mels"):
            return
        audio = self.vocoder(mels=np.zeros([1, 4, info["num_mels"]], np.float32))["audio"]
        info["hop_size"] = int(np.asarray(audio).size) // 4

    def _check_pair(self):
        acoustic, vocoder = self.acoustic.info, self.vocoder.info
        if acoustic.get("num_mels") is None or vocoder.get("num_mels") is None:
            return
        mismatch = pair_mismatch(acoustic, vocoder)
        if mismatch:
            raise SynthesisError(f"{self.acoustic.source} and {self.vocoder.source} do not fit: {mismatch}")

    def _check_processor(self):
        vocab_size = self.acoustic.info.get("vocab_size")
        if vocab_size and self.processor.vocab_size > vocab_size:
            raise SynthesisError(
                f"the processor ({type(self.processor).__name__}) has {self.processor.vocab_size} symbols but the "
                f"acoustic model knows only {vocab_size}; use the mapper JSON the model was trained with"
            )

    def _speaker(self, speaker_id):
        if isinstance(speaker_id, str) and not speaker_id.lstrip("-").isdigit():
            speakers = getattr(self.processor, "speakers_map", {}) or {}
            if speaker_id not in speakers:
                raise SynthesisError(f"unknown speaker {speaker_id!r}; known: {', '.join(sorted(speakers)) or 'none'}")
            speaker_id = speakers[speaker_id]
        try:
            speaker_id = int(speaker_id)
        except (TypeError, ValueError):
            raise SynthesisError(f"speaker id must be an integer, got {speaker_id!r}") from None
        n_speakers = self.acoustic.info.get("n_speakers")
        if speaker_id < 0 or (n_speakers and speaker_id >= n_speakers):
            known = f"0..{n_speakers - 1}" if n_speakers else "0 or more"
            raise SynthesisError(f"unknown speaker id {speaker_id}: the acoustic model has speaker ids {known}")
        return speaker_id

    def _controls(self, speaker_id, speed, f0, energy):
        speaker_id = self._speaker(speaker_id)
        speed, f0, energy = (_check_ratio(name, value) for name, value in (("speed", speed), ("f0", f0), ("energy", energy)))
        model_type = self.acoustic.info.get("model_type", "")
        if "tacotron2" in model_type and (speed, f0, energy) != (1.0, 1.0, 1.0):
            logger.warning("Tacotron2 has no speed, f0 or energy control; the ratios are ignored")
        elif "fastspeech2" not in model_type and (f0, energy) != (1.0, 1.0):
            logger.warning("%s has no f0 or energy control; those ratios are ignored", model_type)
        return speaker_id, speed, f0, energy

    def _pieces(self, text):
        if not isinstance(text, str):
            raise SynthesisError(f"text must be a string, got {type(text).__name__}")
        if not text.strip():
            raise SynthesisError("empty text: nothing to synthesize")
        if len(text) > self.max_chars:
            raise SynthesisError(
                f"text is {len(text)} characters, more than the {self.max_chars} one call accepts; "
                "split it into several calls (or lines of --text-file)"
            )
        pieces = split_sentences(text, self.piece_chars)
        if len(pieces) > 1:
            logger.info("%r: %d characters, read sentence by sentence in %d pieces (of at most %d characters)",
                        text[:40] + "...", len(text), len(pieces), self.piece_chars)
        return pieces

    # ------------------------------------------------------------------ synthesis
    def _encode(self, piece):
        ids, dropped = self.processor.encode(piece)
        eos = getattr(self.processor, "eos_id", None)
        body = [index for index in ids if index != eos]
        if dropped:
            logger.warning("dropped characters with no symbol: %s", " ".join(map(repr, dropped)))
        return ids if body else None

    def _acoustic_inputs(self, ids, speaker_id, speed, f0, energy):
        return self._acoustic_batch_inputs([ids], [(speaker_id, speed, f0, energy)])

    def _acoustic_batch_inputs(self, rows, controls):
        """Token ids of each row and each row's (speaker_id, speed, f0, energy), as model inputs.

        Ids are padded with 0 (which the models mask) to a `bucket` length, at most the
        position table, and rows to a `bucket` count with empty rows: the model meets a few
        shapes, not one per text length (see batching.py); outputs past a row's own tokens
        are 0 frames, and added rows are ignored.
        """
        longest = max(len(row) for row in rows)
        max_positions = self.acoustic.info.get("max_position_embeddings") or 0
        length = min(bucket(longest), max_positions) if max_positions else bucket(longest)
        count = bucket(len(rows)) if self.acoustic.batchable else len(rows)
        input_ids, input_lengths = pad_rows(rows, np.int32, length, count)
        controls = list(controls) + [(0, 1.0, 1.0, 1.0)] * (count - len(rows))
        speaker_ids, speeds, f0s, energies = zip(*controls)
        values = {
            "input_ids": input_ids,
            "input_lengths": input_lengths,
            "speaker_ids": np.asarray(speaker_ids, np.int32),
            "speed_ratios": np.asarray(speeds, np.float32),
            "f0_ratios": np.asarray(f0s, np.float32),
            "energy_ratios": np.asarray(energies, np.float32),
        }
        return {name: values[name] for name in self.acoustic.input_names}

    def _run_piece(self, piece, controls):
        """One piece -> mels (F, num_mels), or audio (N,) for a text2wav model; None if no symbol is known.

        A piece whose frames overflow the model's position table is cut in half and retried.
        """
        ids = self._encode(piece)
        if ids is None:
            return None
        max_positions = self.acoustic.info.get("max_position_embeddings") or 0
        halves = split_in_half(piece) if len(piece) > 1 else []
        if max_positions and len(ids) > max_positions and len(halves) == 2:
            return self._run_halves(halves, controls)
        try:
            outputs = self.acoustic(**self._acoustic_inputs(ids, *controls))
        except self.acoustic.call_errors as error:
            # Predicted frames beyond the position table: a gather out of range (Keras,
            # SavedModel) or a failed invoke (TFLite).
            if len(halves) == 2:
                logger.info("%d characters make too many frames; synthesizing them in two halves", len(piece))
                return self._run_halves(halves, controls)
            raise SynthesisError(f"the acoustic model failed on {piece!r} ({str(error).splitlines()[0]})") from None
        if self.vocoder is None:
            audio = np.asarray(outputs["audio"], np.float32).reshape(-1)
            _check_finite(audio, "text2wav model", piece)
            return audio
        mels = np.asarray(outputs[self.acoustic.info["mel_output"]], np.float32)[0]
        _check_finite(mels, "acoustic model", piece)
        if "stop_logits" in outputs:
            self._warn_without_stop(piece, np.asarray(outputs["stop_logits"]).reshape(-1))
        return mels

    def _warn_without_stop(self, piece, stop_logits):
        """Tacotron2 decodes until a stop or its maximum_iterations: say so when it hit the limit."""
        model = getattr(self.acoustic, "model", None)
        threshold = getattr(getattr(model, "config", None), "stop_threshold", 0.5)
        if stop_logits.size and not 1.0 / (1.0 + np.exp(-stop_logits[-1])) > threshold:
            limit = f" (maximum_iterations {model.maximum_iterations})" if model is not None else ""
            logger.warning("%r: Tacotron2 predicted no stop within %d frames%s; the audio is cut there",
                           piece, stop_logits.size, limit)

    def _run_halves(self, halves, controls):
        parts = [part for part in (self._run_piece(half, controls) for half in halves) if part is not None]
        return np.concatenate(parts, axis=0) if parts else None

    def _vocode(self, mels, piece=None):
        """mels (F, num_mels) of `piece` -> audio (F * hop_size,), refused when not finite."""
        audio = np.asarray(self.vocoder(**self._vocoder_inputs(mels))["audio"], np.float32).reshape(-1)
        _check_finite(audio, "vocoder", piece)
        return audio

    def _vocoder_inputs(self, mels, noise=None):
        """The vocoder's inputs for mels ``(F, num_mels)`` or ``(1, F, num_mels)``. A noise-driven
        vocoder (Parallel WaveGAN) also gets ``noise`` ``(1, F * hop_size, 1)``: standard normal,
        drawn from numpy's global generator when not given (``np.random.seed`` makes it repeatable)."""
        mels = np.asarray(mels, np.float32).reshape([1, -1, np.shape(mels)[-1]])
        inputs = {"mels": mels}
        if "noise" in self.vocoder.input_names:
            samples = mels.shape[1] * self.vocoder.info["hop_size"]
            inputs["noise"] = np.random.standard_normal([1, samples, 1]).astype(np.float32) if noise is None else noise
        return inputs

    def _segments(self, text, speaker_id, speed, f0, energy, vocode_piece):
        """Audio of each piece (via vocode_piece(mels, piece) -> iterable of chunks), with pauses between.

        The text and controls are checked now; the pieces are synthesized as the result is iterated.
        """
        pieces = self._pieces(text)
        controls = self._controls(speaker_id, speed, f0, energy)
        return self._generate(text, pieces, controls, vocode_piece)

    def _generate(self, text, pieces, controls, vocode_piece, results=None):
        """results: each piece's `_run_piece` output when already made (batch synthesis)."""
        pause = np.zeros([int(round(self.pause_seconds * self.sampling_rate))], np.float32)
        produced = encoded = False
        if results is None:
            results = (self._run_piece(piece, controls) for piece in pieces)
        for piece, result in zip(pieces, results):
            if result is None:
                logger.warning("skipped %r: no symbol of it is known to %s", piece, type(self.processor).__name__)
                continue
            encoded = True
            if len(result) == 0:
                logger.warning("skipped %r: the acoustic model predicted 0 frames for it (every duration 0: "
                               "an undertrained duration predictor?)", piece)
                continue
            if produced and pause.size:
                yield pause
            produced = True
            if self.vocoder is None:
                yield result
            else:
                yield from vocode_piece(result, piece)
        if not encoded:
            raise SynthesisError(
                f"no symbol of the text is known to {type(self.processor).__name__}: {text[:60]!r}; "
                "check the processor (mapper JSON) and the language of the text"
            )

    def synthesize(self, text, speaker_id=0, speed=1.0, f0=1.0, energy=1.0):
        """Text -> float32 audio (samples,) at `self.sampling_rate`; long text is synthesized
        sentence by sentence and joined with `pause_seconds` of silence.

        speed: how much faster to speak (2.0 = twice as fast); f0, energy: multipliers of the
        predicted pitch and energy (FastSpeech2); speaker_id: an id or a name in the mapper.
        """
        segments = list(self._segments(text, speaker_id, speed, f0, energy, lambda mels, piece: [self._vocode(mels, piece)]))
        if not segments:
            logger.warning("no audio for %r: every sentence was skipped; returning empty audio", text[:60])
            return np.zeros([0], np.float32)
        return np.concatenate(segments).astype(np.float32)

    # ------------------------------------------------------------------ batches
    def synthesize_batch(self, texts, speaker_id=0, speed=1.0, f0=1.0, energy=1.0, cancelled=None):
        """Several texts -> a list of float32 audio, each `synthesize`'s audio up to float rounding.

        Every sentence of every text goes through the acoustic model as one padded batch and
        its mels through the vocoder in two more calls (`batching.vocode_batch`), where the
        formats allow: Keras models and SavedModels take batches; a TFLite model (converted
        for batch 1), a text2wav model and Tacotron2 (each row stops at its own step) run
        sentence by sentence. speaker_id, speed, f0, energy: one value for all texts, or a
        list with one value per text. cancelled: a callable asked before every model call;
        once it returns True, `SynthesisCancelled` is raised and no further call is made.
        """
        texts = list(texts)
        per_text = [_per_text(name, value, len(texts))
                    for name, value in (("speaker_id", speaker_id), ("speed", speed), ("f0", f0), ("energy", energy))]
        plans = [(text, self._pieces(text), self._controls(*values)) for text, *values in zip(texts, *per_text)]
        rows = [(piece, controls) for _, pieces, controls in plans for piece in pieces]
        results = iter(self._run_rows(rows, cancelled or _never))
        audio = []
        for text, pieces, controls in plans:
            own = [next(results) for _ in pieces]
            segments = list(self._generate(text, pieces, controls, lambda sound, piece: [sound], results=own))
            audio.append(np.concatenate(segments).astype(np.float32) if segments else np.zeros([0], np.float32))
        return audio

    def _run_rows(self, rows, cancelled):
        """(piece, controls) rows -> each row's audio (N,), None where no symbol of it is known.

        `cancelled()` is asked before each model call (see synthesize_batch)."""

        def unless_cancelled(step, *args):
            if cancelled():
                raise SynthesisCancelled(f"synthesis of {len(rows)} sentences cancelled before {step.__name__}")
            return step(*args)

        batched = (self.vocoder is not None and self.acoustic.batchable
                   and "tacotron2" not in self.acoustic.info.get("model_type", ""))
        if not batched:
            results = [unless_cancelled(self._run_piece, piece, controls) for piece, controls in rows]
            return results if self.vocoder is None else [
                mels if mels is None or len(mels) == 0 else unless_cancelled(self._vocode, mels) for mels in results]
        mels = unless_cancelled(self._mels_batch, rows)
        present = [index for index, row_mels in enumerate(mels) if row_mels is not None and len(row_mels)]
        if self.vocoder.batchable:
            made = unless_cancelled(vocode_batch, lambda batch: self.vocoder(mels=batch)["audio"],
                                    [mels[index] for index in present], self.vocoder.info["hop_size"],
                                    self.context_frames)
        else:
            made = [unless_cancelled(self._vocode, mels[index]) for index in present]
        audio = [None if row_mels is None else np.zeros([0], np.float32) for row_mels in mels]  # 0 frames: no audio
        for index, row_audio in zip(present, made):
            audio[index] = row_audio
        return audio

    def _mels_batch(self, rows):
        """(piece, controls) rows -> each row's mels (F_i, num_mels) from one padded acoustic call.

        F_i is the sum of the row's predicted durations. Rows longer than the position table,
        or a batch whose frames overflow it, go row by row through `_run_piece` (which halves them).
        """
        ids = [self._encode(piece) for piece, _ in rows]
        max_positions = self.acoustic.info.get("max_position_embeddings") or 0
        batch = [index for index, row_ids in enumerate(ids)
                 if row_ids is not None and not (max_positions and len(row_ids) > max_positions)]
        alone = [index for index, row_ids in enumerate(ids) if row_ids is not None and index not in batch]
        mels = [None] * len(rows)
        try:
            outputs = self.acoustic(**self._acoustic_batch_inputs([ids[index] for index in batch],
                                                                  [rows[index][1] for index in batch])) if batch else {}
        except self.acoustic.call_errors:
            alone, outputs = sorted(alone + batch), {}
        for row, index in enumerate(batch if outputs else []):
            frames = int(np.sum(outputs["durations"][row, : len(ids[index])]))
            mels[index] = np.asarray(outputs[self.acoustic.info["mel_output"]][row, :frames], np.float32)
        for index in alone:
            mels[index] = self._run_piece(*rows[index])
        return mels

    # ------------------------------------------------------------------ streaming
    @property
    def context_frames(self):
        """Mel frames of context each streamed chunk gets on both sides (the vocoder's receptive field)."""
        if self._context_frames is None:
            vocoder = getattr(self.vocoder, "model", None)
            if vocoder is not None:
                self._context_frames = receptive_field_frames(vocoder.config)
            else:  # exported: recorded at export; a generous bound for files made elsewhere
                self._context_frames = int(self.vocoder.info.get("receptive_field_frames") or UNKNOWN_CONTEXT_FRAMES)
        return self._context_frames

    def stream(self, text, speaker_id=0, speed=1.0, f0=1.0, energy=1.0, chunk_frames=32, context_frames=None):
        """Like `synthesize`, but yields audio chunks as the vocoder makes them.

        The acoustic model runs once per sentence, then the vocoder runs on chunks of
        `chunk_frames` frames with `context_frames` (default `self.context_frames`) frames of
        context on both sides; the concatenated chunks equal `synthesize`'s audio.
        """
        if self.vocoder is None:
            raise SynthesisError(f"{self.acoustic.source} is a text2wav model: it cannot stream; use separate models")
        context = self.context_frames if context_frames is None else int(context_frames)
        hop_size = self.vocoder.info["hop_size"]

        def vocode_piece(mels, piece):
            # The piece's noise is drawn once; each window gets its slice (see inference/streaming.py).
            noise = self._vocoder_inputs(mels).get("noise")

            def vocode(window, window_noise=None):
                audio = self.vocoder(**self._vocoder_inputs(window, window_noise))["audio"]
                _check_finite(audio, "vocoder", piece)
                return audio

            return stream_vocoder(vocode, mels, hop_size, context, chunk_frames, noise=noise)

        return self._segments(text, speaker_id, speed, f0, energy, vocode_piece)

    def time_to_first_audio(self, text, **kwargs):
        """Seconds from the call until `stream` yields its first audio (acoustic model included)."""
        from tensorflow_tts.inference.streaming import measure_stream

        return measure_stream(self.stream(text, **kwargs))[1]
