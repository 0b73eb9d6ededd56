"""Cold start: seconds from process start to the first wav written, through the CLI and the Python API.

Each way runs in a fresh Python process (`--repeats` times; medians printed):

* cli: `tensorflow-tts-synthesize --text ... --acoustic A --vocoder V --out x.wav`;
* api: a tiny script: `Synthesizer(A, V, processor).synthesize(text)`, then `soundfile.write`.

The clock starts just before the process is spawned and stops when the wav appears on disk
(the process exit, which TensorFlow's teardown delays, is reported too). The API script also
reports when its imports, model loading and synthesis end, to show where the time goes.
Default models: tiny FastSpeech2 and MB-MelGAN recipes with random weights, written with
`tensorflow_tts.inference.save_pretrained` to a temporary folder (pass `--acoustic` and
`--vocoder` to time your own: folders, SavedModels or .tflite files).

    python benchmarks/cold_start.py                  # about 1 minute on 2 cores
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TINY_ACOUSTIC = REPO / "examples" / "fastspeech2" / "conf" / "fastspeech2.tiny.yaml"
TINY_VOCODER = REPO / "examples" / "multiband_melgan" / "conf" / "multiband_melgan.tiny.yaml"
TEXT = "The quick brown fox jumps over the lazy dog."

API_SCRIPT = """
import json, sys, time
marks = {}
import tensorflow_tts
from tensorflow_tts.inference.synthesizer import Synthesizer
import soundfile
marks["imported"] = time.time()
synthesizer = Synthesizer(sys.argv[1], sys.argv[2], processor=sys.argv[3] or None)
marks["loaded"] = time.time()
audio = synthesizer.synthesize(sys.argv[4])
marks["synthesized"] = time.time()
soundfile.write(sys.argv[5], audio, synthesizer.sampling_rate, subtype="PCM_16")
marks["written"] = time.time()
print("MARKS " + json.dumps(marks), flush=True)
"""


def make_tiny_models(folder):
    """Random-weight tiny FastSpeech2 and MB-MelGAN saved with save_pretrained; returns their folders."""
    import tensorflow_tts  # noqa: F401

    from tensorflow_tts.configs.registry import model_config_from_yaml, read_yaml
    from tensorflow_tts.inference import save_pretrained
    from tensorflow_tts.models.fastspeech2 import TFFastSpeech2
    from tensorflow_tts.processor.registry import load_processor
    from tensorflow_tts.recipes.vocoder import build_generator, load_recipe

    values = read_yaml(TINY_ACOUSTIC)
    acoustic = TFFastSpeech2(model_config_from_yaml(values, source=str(TINY_ACOUSTIC)))
    acoustic.build_once()
    acoustic_dir = save_pretrained(acoustic, folder / "fastspeech2")
    mapper = Path(tensorflow_tts.__path__[0]) / "processor" / "pretrained" / "ljspeech_mapper.json"
    save_pretrained(load_processor(mapper), acoustic_dir)
    _, model_values, _, _ = load_recipe(TINY_VOCODER)
    vocoder = build_generator(model_values, str(TINY_VOCODER)).build_once(80)
    vocoder_dir = save_pretrained(vocoder, folder / "mb_melgan")
    return acoustic_dir, vocoder_dir


def synthesize_command():
    """The console script next to this Python, else `python -m` (the same code)."""
    script = Path(sys.executable).with_name("tensorflow-tts-synthesize")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "tensorflow_tts.bin.synthesize"]


def run_once(command, wav, timeout):
    """(seconds to the wav on disk, seconds to exit, child's stdout) for one fresh process."""
    if wav.exists():
        wav.unlink()
    start = time.time()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    written = None
    while process.poll() is None:
        if written is None and wav.exists() and wav.stat().st_size > 44:  # more than a wav header
            written = time.time() - start
        if time.time() - start > timeout:
            process.kill()
            raise RuntimeError(f"{' '.join(command)} did not finish in {timeout} s")
        time.sleep(0.005)
    exited = time.time() - start
    output = process.stdout.read()
    if process.returncode != 0 or not wav.exists():
        raise RuntimeError(f"{' '.join(command)} failed ({process.returncode}):\n{output[-3000:]}")
    return (written or exited), exited, output, start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--acoustic", help="acoustic model (default: a tiny random FastSpeech2)")
    parser.add_argument("--vocoder", help="vocoder (default: a tiny random MB-MelGAN)")
    parser.add_argument("--processor", default=None, help="mapper JSON (default: the one in the acoustic folder)")
    parser.add_argument("--text", default=TEXT)
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per way")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds one process may take")
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="tts_cold_start_"))
    try:
        if args.acoustic is None or args.vocoder is None:
            start = time.perf_counter()
            acoustic, vocoder = make_tiny_models(workdir)
            print(f"saved tiny random models to {workdir} in {time.perf_counter() - start:.1f} s")
        else:
            acoustic, vocoder = args.acoustic, args.vocoder
        acoustic = args.acoustic or acoustic
        vocoder = args.vocoder or vocoder
        wav = workdir / "out.wav"
        cli = synthesize_command() + ["--text", args.text, "--acoustic", str(acoustic), "--vocoder", str(vocoder),
                                      "--out", str(wav)]
        if args.processor:
            cli += ["--processor", args.processor]
        api = [sys.executable, "-c", API_SCRIPT, str(acoustic), str(vocoder), args.processor or "", args.text, str(wav)]

        print(f"load average {os.getloadavg() if hasattr(os, 'getloadavg') else None}; cpus {os.cpu_count()}")
        results = {}
        for name, command in (("cli", cli), ("api", api)):
            written, exited, stages = [], [], {}
            for _ in range(args.repeats):
                seconds, exit_seconds, output, start = run_once(command, wav, args.timeout)
                written.append(seconds)
                exited.append(exit_seconds)
                for line in output.splitlines():
                    if line.startswith("MARKS "):
                        for stage, stamp in json.loads(line[len("MARKS "):]).items():
                            stages.setdefault(stage, []).append(stamp - start)
            results[name] = {
                "wav_written_s": round(statistics.median(written), 2),
                "exit_s": round(statistics.median(exited), 2),
                "runs": len(written),
                **{f"{stage}_s": round(statistics.median(times), 2) for stage, times in stages.items()},
            }
            breakdown = ", ".join(f"{stage} {statistics.median(times):.2f}" for stage, times in stages.items())
            print(f"{name}: first wav written after {results[name]['wav_written_s']:.2f} s (median of {len(written)}; "
                  f"exit {results[name]['exit_s']:.2f} s){'; ' + breakdown if breakdown else ''}", flush=True)
        print(json.dumps(results))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
