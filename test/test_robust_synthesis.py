"""Synthesis and decoding at any length and with degenerate models: a result or a one-line message
naming the utterance and what was done, never a TensorFlow traceback.

Through the public entry points: the Synthesizer, TFAutoModel, tensorflow-tts-synthesize,
tensorflow-tts-export and the decode scripts (one subprocess of each command checks that no
traceback is printed; the other cases call the same mains in-process).
"""

import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import yaml

import tensorflow_tts  # noqa: F401  (before tensorflow: tf.keras is Keras 2)
import tensorflow as tf  # noqa: E402

from tensorflow_tts.configs.aligner import AlignerConfig  # noqa: E402
from tensorflow_tts.dump import layout  # noqa: E402
from tensorflow_tts.bin.synthesize import main as synthesize_main  # noqa: E402
from tensorflow_tts.inference import TFAutoModel  # noqa: E402
from tensorflow_tts.inference.synthesizer import SynthesisError, Synthesizer  # noqa: E402
from tensorflow_tts.layers.aligner import Aligner  # noqa: E402
from tensorflow_tts.models.weight_files import WeightFileError  # noqa: E402
from tensorflow_tts.processor.registry import load_processor  # noqa: E402
from tensorflow_tts.recipes import fastspeech2  # noqa: E402
from tensorflow_tts.recipes.vocoder import decode_mels  # noqa: E402
from test_export import LJSPEECH_MAPPER, NUM_MELS, save_model_folder, tiny_acoustic, tiny_vocoder  # noqa: E402
from test_registry import TINY_PARAMS  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SAMPLING_RATE = 8000
HOP_SIZE = 256  # of the vocoder below: upsample [4, 4, 4, 4]
TINY_CONFIG = REPO / "examples" / "fastspeech2" / "conf" / "fastspeech2.tiny.yaml"


def run_script(*args):
    """A console script or example in a fresh process -> CompletedProcess (stdout, stderr as text)."""
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, cwd=REPO)


def pin_durations(model, frames_per_token):
    """Make a FastSpeech2 predict exactly `frames_per_token` frames for every token (see the compat README)."""
    projection = model.duration_predictor.projection
    projection.kernel.assign(tf.zeros_like(projection.kernel))
    projection.bias.assign([math.log(frames_per_token + 1.0)])
    return model


@pytest.fixture(scope="module")
def vocoder():
    return tiny_vocoder("melgan_generator", upsample_scales=[4, 4, 4, 4])


@pytest.fixture(scope="module")
def vocoder_folder(vocoder, tmp_path_factory):
    return save_model_folder(vocoder, tmp_path_factory.mktemp("melgan"), sampling_rate=SAMPLING_RATE)


def acoustic_folder(model, folder):
    return save_model_folder(model, folder, sampling_rate=SAMPLING_RATE, hop_size=HOP_SIZE)


def synthesize_argv(acoustic, vocoder, out, *, text=None, text_file=None):
    source = ["--text", text] if text is not None else ["--text-file", text_file]
    return [*source, "--acoustic", acoustic, "--vocoder", vocoder, "--processor", LJSPEECH_MAPPER, "--out", out]


def decode_one_utterance(model, folder):
    """decode_fastspeech2.py's recipe on a one-utterance split ("utt-1") -> exit status; mels in folder/out."""
    config = save_model_folder(model, folder / "fs2")  # a training YAML's keys only: what decoding reads
    model.save_weights(str(folder / "model-1.h5"))
    layout.save_feature(layout.IDS, folder / "valid", "utt-1", [5, 6, 7])
    return fastspeech2.decode_main(["--rootdir", str(folder / "valid"), "--outdir", str(folder / "out"),
                                    "--checkpoint", str(folder / "model-1.h5"), "--config", str(config / "config.yml")])


# ------------------------------------------------------------------------------ any length
def test_sixty_seconds_from_durations_pinned_long_come_out_whole(vocoder):
    """A table of 64 positions and ~1900 frames: all of them come out (the CLI's long line is below)."""
    text = "Hello world."
    tokens = len(load_processor(LJSPEECH_MAPPER).text_to_sequence(text))
    frames = tokens * math.ceil(60 * SAMPLING_RATE / HOP_SIZE / tokens)
    model = pin_durations(tiny_acoustic("fastspeech2", max_position_embeddings=64), frames // tokens)

    audio = Synthesizer(model, vocoder, processor=LJSPEECH_MAPPER, sampling_rate=SAMPLING_RATE).synthesize(text)
    assert audio.size == frames * HOP_SIZE and audio.size / SAMPLING_RATE >= 60.0
    assert np.all(np.isfinite(audio))


def test_training_refuses_utterances_longer_than_the_position_table(tiny_dump, tmp_path, caplog):
    config = tmp_path / "fastspeech2.yaml"
    values = yaml.safe_load(TINY_CONFIG.read_text())
    values["fastspeech2_params"].update(max_position_embeddings=32, n_speakers=2)
    config.write_text(yaml.safe_dump(values))
    status = fastspeech2.train_main(["--dump-dir", str(tiny_dump), "--outdir", str(tmp_path / "exp"),
                                     "--config", str(config)])
    assert status == 2
    assert "mel frames, more than max_position_embeddings (32); raise max_position_embeddings" in caplog.text


# ------------------------------------------------------------------------------ the wrong weight file
@pytest.fixture(scope="module")
def weight_files(vocoder, tmp_path_factory):
    """What training leaves side by side: fastspeech2-N.h5, aligner-N.h5, generator-N.h5, and the configs."""
    root = tmp_path_factory.mktemp("weights")
    model = tiny_acoustic("fastspeech2")
    aligner = Aligner(AlignerConfig(), model.config.vocab_size, NUM_MELS).build_once()
    for name, keras_model in (("fastspeech2", model), ("aligner", aligner), ("generator", vocoder)):
        keras_model.save_weights(str(root / f"{name}-5.h5"), save_format="h5")
    save_model_folder(model, root / "fs2")  # a training YAML's keys only: the decode scripts read it too
    return root


@pytest.mark.parametrize("file, config, holds, expected", [
    ("aligner-5.h5", "fs2", "a FastSpeech2 aligner (11 tensors, model name 'aligner')", "a FastSpeech2 was expected"),
    ("generator-5.h5", "fs2", "a MelGAN generator", "a FastSpeech2 was expected"),
    ("fastspeech2-5.h5", "vocoder", "a FastSpeech2 (", "a MelGAN generator was expected"),
])
def test_another_models_weights_are_named_in_one_line(weight_files, vocoder_folder, file, config, holds, expected):
    config = weight_files / "fs2" if config == "fs2" else vocoder_folder
    with pytest.raises(WeightFileError) as error:
        TFAutoModel.from_pretrained(weight_files / file, config=config)
    message = str(error.value)
    assert holds in message and expected in message and "\n" not in message and len(message) < 400


def test_decode_script_names_the_aligner_file_in_one_line(weight_files, tmp_path):
    split = tmp_path / "valid"
    layout.save_feature(layout.IDS, split, "utt-1", [5, 6, 7])
    result = run_script(REPO / "examples" / "fastspeech2" / "decode_fastspeech2.py", "--rootdir", split,
                        "--outdir", tmp_path / "out", "--checkpoint", weight_files / "aligner-5.h5",
                        "--config", weight_files / "fs2" / "config.yml")
    assert result.returncode == 2
    assert "holds a FastSpeech2 aligner" in result.stderr and "Traceback" not in result.stderr
    assert "kernel:0" not in result.stderr  # not the ~130 variable names: those go to the debug log


def test_synthesize_and_export_clis_name_a_vocoder_file_given_as_acoustic_model(weight_files, vocoder_folder,
                                                                                 tmp_path, caplog):
    folder = tmp_path / "fs2"
    folder.mkdir()
    (folder / "config.yml").write_bytes((weight_files / "fs2" / "config.yml").read_bytes())
    (folder / "model.h5").write_bytes((weight_files / "generator-5.h5").read_bytes())
    assert synthesize_main(list(map(str, synthesize_argv(folder, vocoder_folder, tmp_path / "x.wav", text="Hi")))) == 1
    exported = run_script("-m", "tensorflow_tts.bin.export", "--config", folder / "config.yml",
                          "--checkpoint", weight_files / "generator-5.h5", "--format", "saved_model",
                          "--outdir", tmp_path / "exported")
    assert exported.returncode != 0 and "Traceback" not in exported.stderr
    for text in (caplog.text, exported.stderr):
        assert "holds a MelGAN generator" in text and "a FastSpeech2 was expected" in text


# ------------------------------------------------------------------------------ degenerate outputs
def test_every_duration_zero_gives_empty_audio_with_a_warning(vocoder, vocoder_folder, tmp_path, caplog):
    model = pin_durations(tiny_acoustic("fastspeech2"), 0)
    synthesizer = Synthesizer(model, vocoder, processor=LJSPEECH_MAPPER)
    audio = synthesizer.synthesize("Hello world.")
    assert audio.dtype == np.float32 and audio.size == 0
    assert "skipped 'Hello world.': the acoustic model predicted 0 frames" in caplog.text

    caplog.clear()
    argv = synthesize_argv(acoustic_folder(model, tmp_path / "fs2"), vocoder_folder, tmp_path / "empty.wav",
                           text="Hello world.")
    assert synthesize_main(list(map(str, argv))) == 0
    assert "predicted 0 frames" in caplog.text and sf.read(tmp_path / "empty.wav")[0].size == 0


def test_every_duration_zero_writes_an_empty_mel_and_wav_when_decoding(vocoder_folder, tmp_path, caplog):
    model = pin_durations(tiny_acoustic("fastspeech2"), 0)
    status = decode_one_utterance(model, tmp_path)
    assert status == 0
    assert np.load(tmp_path / "out" / "utt-1-norm-feats.npy").shape == (0, NUM_MELS)
    assert "utt-1: every predicted duration is 0; wrote an empty mel" in caplog.text

    written = decode_mels(tmp_path / "out", tmp_path / "wavs", vocoder_folder / "config.yml", vocoder_folder / "model.h5")
    assert [Path(path).name for path in written] == ["utt-1.wav"] and sf.read(written[0])[0].size == 0
    assert "utt-1: the mel has no frame; wrote an empty wav" in caplog.text


def test_non_finite_weights_are_refused_and_non_finite_mels_skipped(vocoder, tmp_path, caplog):
    model = tiny_acoustic("fastspeech2")
    model.mel_dense.bias.assign(tf.fill(model.mel_dense.bias.shape, np.nan))
    with pytest.raises(SynthesisError, match=r"1 of its \d+ weights hold NaN or inf .*use an earlier checkpoint"):
        Synthesizer(model, vocoder, processor=LJSPEECH_MAPPER)

    status = decode_one_utterance(model, tmp_path)
    assert status == 0 and not (tmp_path / "out" / "utt-1-norm-feats.npy").exists()
    assert "utt-1: the predicted mel has" in caplog.text and "NaN or inf values (non-finite weights?); skipped" in caplog.text


def test_non_finite_output_of_an_exported_model_is_a_clear_error(vocoder, tmp_path):
    from tensorflow_tts.inference.export import export_saved_model

    model = tiny_acoustic("fastspeech2")
    model.mel_dense.bias.assign(tf.fill(model.mel_dense.bias.shape, np.inf))
    export_saved_model(model, tmp_path / "fs2")  # an export holds no weights to check beforehand
    synthesizer = Synthesizer(tmp_path / "fs2", vocoder, processor=LJSPEECH_MAPPER)
    with pytest.raises(SynthesisError, match=r"the acoustic model made NaN or inf for 'Hello\.'"):
        synthesizer.synthesize("Hello.")


def test_tacotron2_without_a_stop_is_cut_at_maximum_iterations_with_a_warning(caplog):
    from tensorflow_tts.configs import Tacotron2Config
    from tensorflow_tts.models import TFTacotron2

    config = Tacotron2Config(**dict(TINY_PARAMS["tacotron2"], n_mels=NUM_MELS, vocab_size=149))
    model = TFTacotron2(config)
    model.build_once()
    model.setup_maximum_iterations(6)
    model.decoder_cell.stop_projection.bias.assign([-10.0])  # never stops
    audio = Synthesizer(model, tiny_vocoder("melgan_generator", upsample_scales=[2, 3]),
                        processor=LJSPEECH_MAPPER).synthesize("Hello.")
    frames = 6 * config.reduction_factor
    assert audio.size == frames * 6
    assert f"'Hello.': Tacotron2 predicted no stop within {frames} frames (maximum_iterations 6)" in caplog.text


def test_cli_batch_with_an_empty_after_cleaning_line_and_a_10000_character_line(vocoder_folder, tmp_path):
    """Pieces of up to 300 symbols at 1 frame each also pass the 256 positions of the table."""
    folder = acoustic_folder(pin_durations(tiny_acoustic("fastspeech2"), 1), tmp_path / "fs2")
    long_line = ("so many words without an end " * 400)[:10_000]
    lines = tmp_path / "lines.txt"
    lines.write_text(f"###~~~\n{long_line}\n", encoding="utf-8")
    result = run_script("-m", "tensorflow_tts.bin.synthesize", *synthesize_argv(folder, vocoder_folder, tmp_path / "wavs",
                                                                                text_file=lines))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "lines.txt line 1: no symbol of the text is known" in result.stderr
    assert re.search(r"10000 characters, read sentence by sentence in \d+ pieces", result.stderr)
    assert not (tmp_path / "wavs" / "0001.wav").exists()
    audio, _ = sf.read(tmp_path / "wavs" / "0002.wav")
    assert audio.size >= 9_000 * HOP_SIZE  # 1 frame per symbol: nothing was dropped
