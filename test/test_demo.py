"""The README's main command, end to end with a few training steps per model."""

import json
import subprocess
import sys
from pathlib import Path

import soundfile as sf

REPO = Path(__file__).resolve().parents[1]


def test_demo_goes_from_corpus_to_wav_saved_voice_and_exports(tmp_path):
    outdir = tmp_path / "demo"
    result = subprocess.run(
        [sys.executable, str(REPO / "examples" / "demo" / "run_demo.py"), "--outdir", str(outdir),
         "--fastspeech2-steps", "3", "--vocoder-steps", "3", "--skip-tflite"],
        capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]

    audio, sampling_rate = sf.read(outdir / "synthesis" / "demo.wav")
    assert sampling_rate == 22050 and len(audio) > 0
    summary = json.loads((outdir / "summary.json").read_text())
    assert summary["mel_frames"] * 256 == len(audio)
    assert summary["fastspeech2_final_losses"]["mel_loss_after"] > 0
    assert summary["mb_melgan_final_losses"]["gen_loss"] > 0
    assert summary["real_time_factor_keras"] > 0
    for folder in ("fastspeech2", "mb_melgan"):
        assert (outdir / folder / "config.yml").is_file() and (outdir / folder / "model.h5").is_file()
        assert (outdir / "export" / "saved_model" / folder / "saved_model.pb").is_file()
    assert (outdir / "processor.json").is_file() and (outdir / "synthesis" / "demo_mel.png").is_file()
    assert "Everything is in" in result.stdout
