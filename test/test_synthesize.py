"""Text to wav: the Synthesizer API and tensorflow-tts-synthesize with every kind of model path,
long text, batch mode, and a clear message (no traceback) for each kind of bad input."""

import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf

import tensorflow_tts  # noqa: F401  (before tensorflow: tf.keras is Keras 2)

from tensorflow_tts.bin.synthesize import main  # noqa: E402
from tensorflow_tts.inference.batching import bucket  # noqa: E402
from tensorflow_tts.inference.export import export_saved_model  # noqa: E402
from tensorflow_tts.inference.synthesizer import SynthesisCancelled, SynthesisError, Synthesizer  # noqa: E402
from test_export import (  # noqa: E402
    LJSPEECH_MAPPER,
    save_model_folder,
    shared_models,
    shared_tflite,
    tiny_vocoder,
)

SAMPLING_RATE = 8000
HOP_SIZE = 12  # of the tiny vocoders: upsample [2, 3] (x 2 subbands for MB-MelGAN)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """The same tiny FastSpeech2 and MB-MelGAN as a model folder, a SavedModel and a .tflite."""
    root = tmp_path_factory.mktemp("synthesize")
    acoustic, vocoder = shared_models()["fastspeech2"], shared_models()["multiband_melgan_generator"]
    paths = {
        "folder": (
            save_model_folder(acoustic, root / "fs2", sampling_rate=SAMPLING_RATE, hop_size=HOP_SIZE),
            save_model_folder(vocoder, root / "mb", sampling_rate=SAMPLING_RATE),
        ),
        "saved_model": (root / "fs2_saved", root / "mb_saved"),
        "tflite": (root / "fs2.tflite", root / "mb.tflite"),
    }
    export_saved_model(acoustic, paths["saved_model"][0], sampling_rate=SAMPLING_RATE, hop_size=HOP_SIZE)
    export_saved_model(vocoder, paths["saved_model"][1], sampling_rate=SAMPLING_RATE)
    paths["tflite"][0].write_bytes(shared_tflite("fastspeech2"))
    paths["tflite"][1].write_bytes(shared_tflite("multiband_melgan_generator"))
    paths["root"] = root
    return paths


@pytest.fixture(scope="module")
def synthesizer(models):
    acoustic, vocoder = models["folder"]
    return Synthesizer(acoustic=acoustic, vocoder=vocoder, processor=LJSPEECH_MAPPER)


@pytest.mark.parametrize("kind", ["folder", "saved_model", "tflite"])
def test_cli_writes_a_wav_for_each_kind_of_model_path(models, kind, tmp_path):
    acoustic, vocoder = models[kind]
    out = tmp_path / "hello.wav"
    argv = ["--text", "Hello world.", "--acoustic", str(acoustic), "--vocoder", str(vocoder),
            "--processor", LJSPEECH_MAPPER, "--out", str(out)]
    if kind == "tflite":  # the shared conversions record no sampling rate
        argv += ["--sampling-rate", str(SAMPLING_RATE)]
    assert main(argv) == 0
    audio, rate = sf.read(out, dtype="float32")
    assert rate == SAMPLING_RATE and audio.ndim == 1 and audio.size > 0 and audio.size % HOP_SIZE == 0


def test_every_kind_of_model_path_makes_the_same_audio(models, synthesizer):
    expected = synthesizer.synthesize("Printing, in the only sense.")
    for kind in ("saved_model", "tflite"):
        acoustic, vocoder = models[kind]
        audio = Synthesizer(acoustic, vocoder, processor=LJSPEECH_MAPPER).synthesize("Printing, in the only sense.")
        assert audio.dtype == np.float32 and audio.shape == expected.shape
        assert np.abs(audio - expected).max() < 1e-4, kind


def test_tflite_files_synthesize_without_importing_tensorflow(models, tmp_path):
    """What a phone or a small server runs: LiteRT and numpy read a .tflite pair; TensorFlow stays unloaded."""
    acoustic, vocoder = models["tflite"]
    out = tmp_path / "hello.wav"
    argv = ["--text", "Hello world.", "--acoustic", str(acoustic), "--vocoder", str(vocoder),
            "--processor", LJSPEECH_MAPPER, "--sampling-rate", str(SAMPLING_RATE), "--out", str(out)]
    code = ("import sys\nfrom tensorflow_tts.bin.synthesize import main\n"
            f"code = main({argv!r})\nprint(code, 'tensorflow' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.split() == ["0", "False"], result.stderr[-2000:]
    assert sf.read(out, dtype="float32")[0].size > 0


def test_api_accepts_keras_models_directly():
    models = shared_models()
    synthesizer = Synthesizer(models["fastspeech2"], models["multiband_melgan_generator"], processor=LJSPEECH_MAPPER)
    audio = synthesizer.synthesize("Hi.", speed=0.5)
    assert audio.dtype == np.float32 and audio.ndim == 1
    assert audio.size > synthesizer.synthesize("Hi.").size  # half as fast: more frames


def test_text2wav_tflite_needs_no_vocoder(models):
    path = models["root"] / "text2wav.tflite"
    path.write_bytes(shared_tflite("text2wav"))
    audio = Synthesizer(path, processor=LJSPEECH_MAPPER).synthesize("Hello world.")
    assert audio.size > 0 and audio.size % HOP_SIZE == 0


def test_long_text_is_read_sentence_by_sentence(synthesizer):
    sentences = ["The first sentence.", "A second one!", "And a third?"]
    pieces = [synthesizer.synthesize(sentence) for sentence in sentences]
    audio = synthesizer.synthesize("  ".join(sentences))
    pause = int(round(synthesizer.pause_seconds * synthesizer.sampling_rate))
    assert audio.size == sum(piece.size for piece in pieces) + 2 * pause
    np.testing.assert_allclose(audio[: pieces[0].size], pieces[0], atol=1e-6)


def test_a_sentence_longer_than_the_position_table_is_synthesized_whole(models, synthesizer, caplog):
    """256 positions at ~3 frames per token: 100 tokens make ~300 frames, computed beyond the table."""
    acoustic, vocoder = models["tflite"]
    text = " ".join(["word"] * 20)
    with caplog.at_level("INFO", logger="tensorflow_tts"):
        audio = Synthesizer(acoustic, vocoder, processor=LJSPEECH_MAPPER).synthesize(text)
    assert "two halves" not in caplog.text
    assert audio.size > 256 * HOP_SIZE and np.all(np.isfinite(audio))
    np.testing.assert_allclose(audio, synthesizer.synthesize(text), atol=1e-4)  # the same as the Keras model's


def test_batch_mode_writes_one_wav_per_line(models, tmp_path):
    acoustic, vocoder = models["tflite"]
    lines = tmp_path / "lines.txt"
    lines.write_text("First line.\n\nSecond line here.\nThird.\n", encoding="utf-8")
    argv = ["--text-file", str(lines), "--acoustic", str(acoustic), "--vocoder", str(vocoder),
            "--processor", LJSPEECH_MAPPER, "--out", str(tmp_path / "wavs")]
    assert main(argv) == 0
    assert sorted(path.name for path in (tmp_path / "wavs").iterdir()) == ["0001.wav", "0003.wav", "0004.wav"]


# ------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "text, kwargs, message",
    [
        ("", {}, "empty text"),
        ("   \n ", {}, "empty text"),
        ("###@@@", {}, "no symbol of the text is known"),
        ("Hello.", {"speed": 0.0}, "speed must be a positive number"),
        ("Hello.", {"f0": -1.0}, "f0 must be a positive number"),
        ("Hello.", {"energy": float("nan")}, "energy must be a positive number"),
        ("Hello.", {"speaker_id": 3}, "unknown speaker id 3"),
        ("Hello.", {"speaker_id": "nobody"}, "unknown speaker 'nobody'"),
    ],
)
def test_bad_input_is_a_clear_error(synthesizer, text, kwargs, message):
    with pytest.raises(SynthesisError, match=message):
        synthesizer.synthesize(text, **kwargs)


def test_text_over_the_limit_is_refused(models):
    acoustic, vocoder = models["folder"]
    synthesizer = Synthesizer(acoustic, vocoder, processor=LJSPEECH_MAPPER, max_chars=1000)
    with pytest.raises(SynthesisError, match="1001 characters, more than the 1000"):
        synthesizer.synthesize("a" * 1001)


def test_missing_model_file_is_a_clear_error(models, tmp_path):
    with pytest.raises(SynthesisError, match="no such file or folder"):
        Synthesizer(tmp_path / "missing.tflite", models["tflite"][1], processor=LJSPEECH_MAPPER)
    broken = tmp_path / "broken.tflite"
    broken.write_bytes(b"not a flatbuffer")
    with pytest.raises(SynthesisError):
        Synthesizer(models["tflite"][0], broken, processor=LJSPEECH_MAPPER)


def test_vocoder_for_other_mel_bins_is_refused_before_synthesis(models, tmp_path):
    folder = save_model_folder(tiny_vocoder("melgan_generator", num_mels=10), tmp_path / "melgan10")
    with pytest.raises(SynthesisError, match="makes 8 mel bins, but the vocoder .* expects 10"):
        Synthesizer(models["tflite"][0], folder, processor=LJSPEECH_MAPPER)


def test_vocoder_for_another_hop_size_is_refused_before_synthesis(models, tmp_path):
    folder = save_model_folder(tiny_vocoder("melgan_generator", upsample_scales=[2, 2]), tmp_path / "melgan4",
                               sampling_rate=SAMPLING_RATE)
    with pytest.raises(SynthesisError, match="hop size 12, the vocoder with 4"):
        Synthesizer(models["folder"][0], folder, processor=LJSPEECH_MAPPER)


def test_vocoder_passed_as_acoustic_model_is_refused(models):
    with pytest.raises(SynthesisError, match="is a vocoder; pass it as the vocoder"):
        Synthesizer(models["tflite"][1], models["tflite"][1], processor=LJSPEECH_MAPPER)


def test_processor_with_more_symbols_than_the_model_is_refused(models, tmp_path):
    import tensorflow_tts.processor.registry as registry

    acoustic, vocoder = models["tflite"]
    with pytest.raises(SynthesisError, match="has 219 symbols but the acoustic model knows only 149"):
        Synthesizer(acoustic, vocoder, processor=registry.default_mapper_path("baker"))


def test_cli_bad_input_exits_non_zero_without_traceback(models, tmp_path):
    acoustic, vocoder = models["tflite"]
    result = subprocess.run(
        [sys.executable, "-m", "tensorflow_tts.bin.synthesize", "--text", "Hello.", "--speed", "-1",
         "--acoustic", str(acoustic), "--vocoder", str(vocoder), "--processor", LJSPEECH_MAPPER,
         "--out", str(tmp_path / "x.wav")],
        capture_output=True, text=True,
    )
    assert result.returncode != 0
    assert "speed must be a positive number" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "x.wav").exists()


def test_cli_batch_mode_reports_the_bad_line(models, tmp_path, caplog):
    acoustic, vocoder = models["tflite"]
    lines = tmp_path / "lines.txt"
    lines.write_text("Good line.\n###\n", encoding="utf-8")
    argv = ["--text-file", str(lines), "--acoustic", str(acoustic), "--vocoder", str(vocoder),
            "--processor", LJSPEECH_MAPPER, "--out", str(tmp_path / "out.wav")]
    assert main(argv) == 1
    assert (tmp_path / "out_0001.wav").is_file() and not (tmp_path / "out_0002.wav").exists()
    assert "lines.txt line 2: no symbol of the text is known" in caplog.text


class RecordingRunner:
    """A model runner that records the `input_ids` shapes it is called with."""

    def __init__(self, runner):
        self.runner, self.shapes = runner, []

    def __getattr__(self, name):
        return getattr(self.runner, name)

    def __call__(self, **inputs):
        self.shapes.append(inputs["input_ids"].shape)
        return self.runner(**inputs)


def unpadded_audio(synthesizer, runner, text):
    """The audio of `text` from the exact token ids: one acoustic call, one vocoder call."""
    ids = np.asarray(synthesizer.processor.encode(text)[0], np.int32)[np.newaxis]
    values = {"input_ids": ids, "speaker_ids": np.zeros([1], np.int32), "speed_ratios": np.ones([1], np.float32),
              "f0_ratios": np.ones([1], np.float32), "energy_ratios": np.ones([1], np.float32)}
    mels = runner(**{name: values[name] for name in runner.input_names})["mel_after"]
    return np.asarray(synthesizer.vocoder(mels=mels)["audio"]).reshape(-1), ids.shape[1]


@pytest.mark.parametrize("kind", ["folder", "tflite"])
def test_token_ids_are_padded_to_few_lengths_and_give_the_audio_of_the_exact_ids(models, kind):
    """oneDNN keeps memory per input shape: texts of 24 token lengths reach the model in bucket
    lengths only, alone and in batches, with the audio of their unpadded ids."""
    synthesizer = Synthesizer(*models[kind], processor=LJSPEECH_MAPPER)
    runner = synthesizer.acoustic = RecordingRunner(synthesizer.acoustic)
    sentence = "Printing, in the only sense with which we are at present concerned, differs from most arts"
    texts = [sentence[: 3 + 3 * count].strip() + "." for count in range(24)]
    exact_lengths = set()
    for text in texts:
        expected, length = unpadded_audio(synthesizer, runner.runner, text)
        exact_lengths.add(length)
        np.testing.assert_allclose(synthesizer.synthesize(text), expected, atol=1e-5)
    if synthesizer.acoustic.batchable:
        for text, audio in zip(texts, synthesizer.synthesize_batch(texts[:9])):
            np.testing.assert_allclose(audio, unpadded_audio(synthesizer, runner.runner, text)[0], atol=1e-5)
    seen = {shape[1] for shape in runner.shapes}
    assert len(exact_lengths) >= 20 and len(seen) < len(exact_lengths)
    assert all(bucket(length) == length for length in seen), sorted(seen)  # only bucket lengths


class CountingRunner(RecordingRunner):
    def __call__(self, **inputs):
        self.shapes.append(next(iter(inputs.values())).shape)
        return self.runner(**inputs)


@pytest.mark.parametrize("kind", ["folder", "tflite"])
def test_a_cancelled_batch_makes_no_further_model_call(models, kind):
    """Keras voices batch (one acoustic call, then the vocoder); TFLite voices run sentence by sentence."""
    synthesizer = Synthesizer(*models[kind], processor=LJSPEECH_MAPPER)
    acoustic = synthesizer.acoustic = CountingRunner(synthesizer.acoustic)
    vocoder = synthesizer.vocoder = CountingRunner(synthesizer.vocoder)
    texts = ["First sentence here.", "A second one. And a third."]
    with pytest.raises(SynthesisCancelled):
        synthesizer.synthesize_batch(texts, cancelled=lambda: True)
    assert acoustic.shapes == [] and vocoder.shapes == []
    asked = []

    def after_the_first_model_call():
        asked.append(len(acoustic.shapes) + len(vocoder.shapes))
        return asked[-1] > 0

    with pytest.raises(SynthesisCancelled):
        synthesizer.synthesize_batch(texts, cancelled=after_the_first_model_call)
    assert len(acoustic.shapes) == 1 and vocoder.shapes == []
    assert len(synthesizer.synthesize_batch(texts, cancelled=lambda: False)) == 2
