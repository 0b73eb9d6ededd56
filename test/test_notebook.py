"""notebooks/fastspeech2_inference.ipynb runs top to bottom against a demo folder and writes its wav.

The demo folder is built here from tiny random-weight models (no training): the test is about
the notebook not rotting as the API changes, not about how the audio sounds.
"""

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

import tensorflow_tts  # noqa: F401  (before tensorflow: tf.keras is Keras 2)

from tensorflow_tts.inference import AutoProcessor, save_pretrained  # noqa: E402
from test_export import LJSPEECH_MAPPER, tiny_acoustic, tiny_vocoder  # noqa: E402

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "fastspeech2_inference.ipynb"
NUM_MELS = 80  # the demo's features (preprocess/ljspeech_preprocess.yaml)
# The tiny model predicts ~3 frames a symbol; the notebook's slowest setting needs more than
# the 256 positions the other tests use (real configs have 2048).
MAX_POSITIONS = 1024
SAMPLING_RATE = 22050  # what the notebook falls back to: save_pretrained records no sampling rate
CELL_TIMEOUT = 180  # seconds; the first cell imports TensorFlow on a busy machine


@pytest.fixture
def demo_dir(tmp_path):
    """What `make demo` leaves behind: two save_pretrained folders, processor.json and dump/stats.npy."""
    demo = tmp_path / "demo_output"
    save_pretrained(tiny_acoustic("fastspeech2", num_mels=NUM_MELS, max_position_embeddings=MAX_POSITIONS), demo / "fastspeech2")
    save_pretrained(tiny_vocoder("multiband_melgan_generator", num_mels=NUM_MELS), demo / "mb_melgan")
    save_pretrained(AutoProcessor.from_pretrained(LJSPEECH_MAPPER), demo)
    (demo / "dump").mkdir()
    rng = np.random.default_rng(0)
    mean, std = rng.normal(-5.0, 1.0, NUM_MELS), rng.uniform(0.5, 2.0, NUM_MELS)
    np.save(demo / "dump" / "stats.npy", np.stack([mean, std]).astype(np.float32))
    return demo


@pytest.fixture
def this_interpreter(tmp_path, monkeypatch):
    """A "python3" kernel spec that runs this test's interpreter, found first through JUPYTER_PATH."""
    spec_dir = tmp_path / "jupyter" / "kernels" / "python3"
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (test)",
        "language": "python",
    }))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    return sys.executable


def test_committed_notebook_has_no_outputs():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code_cells and all(not cell.outputs and cell.execution_count is None for cell in code_cells)


def test_notebook_runs_against_a_demo_folder_and_writes_a_wav(demo_dir, this_interpreter, tmp_path):
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell("import sys; print(sys.executable)"))
    client = nbclient.NotebookClient(
        notebook, kernel_name="python3", timeout=CELL_TIMEOUT,
        resources={"metadata": {"path": str(tmp_path)}},  # the kernel's working folder
    )
    env = dict(os.environ, TTS_DEMO_DIR=str(demo_dir), TF_CPP_MIN_LOG_LEVEL="2")
    client.execute(env=env)  # raises CellExecutionError naming the failing cell

    assert notebook.cells[-1].outputs[0]["text"].strip() == this_interpreter
    errors = [output for cell in notebook.cells if cell.cell_type == "code"
              for output in cell.outputs if output.output_type == "error"]
    assert not errors
    shown = {kind for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
             for kind in output.get("data", {})}
    assert {"image/png", "text/html"} <= shown  # the mel plot and the audio players

    audio, rate = sf.read(demo_dir / "fastspeech2_inference.wav", dtype="float32")
    assert rate == SAMPLING_RATE
    assert audio.ndim == 1 and audio.size > 0 and np.isfinite(audio).all()
