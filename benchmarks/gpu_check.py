"""One prepared GPU check: FastSpeech2 v1 and MB-MelGAN v1 trained in mixed precision on the bundled corpus.

Preprocesses test/files/corpus/ljspeech once, then runs quality_fastspeech2.py and
quality_vocoder.py, each in its own process (its own GPU memory figures), with the v1
configs, `--mixed-precision` (mixed_float16 on GPU, mixed_bfloat16 on CPU) and
`--minutes-per-model` of training each, and prints what they report: steps/s (after the
first, compiling, step), peak GPU memory (tf.config.experimental.get_memory_info), the
FastSpeech2 valid figures (DTW mel L1, Griffin-Lim MCD and log-F0 RMSE) and the vocoder's
PESQ-WB / STOI / MR-STFT against 60-iteration Griffin-Lim. Writes gpu_check.json into
--workdir. Defaults fit well under 8 minutes on a GPU machine; on CPU, check it with a tiny
budget:

    python benchmarks/gpu_check.py                            # GPU machine: 2 min per model
    python benchmarks/gpu_check.py --minutes-per-model 0.3    # CPU: does it run end to end?
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CONFIGS = {
    "fastspeech2": REPO / "examples" / "fastspeech2" / "conf" / "fastspeech2.v1.yaml",
    "mb_melgan": REPO / "examples" / "multiband_melgan" / "conf" / "multiband_melgan.v1.yaml",
}


def run(command, log_path, timeout):
    """Run a benchmark script, echo and keep its output; returns (exit status, last JSON line or None)."""
    print("$ " + " ".join(map(str, command)), flush=True)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2")}
    with open(log_path, "w", encoding="utf-8") as log:
        try:
            result = subprocess.run([sys.executable, *map(str, command)], stdout=subprocess.PIPE, stderr=log,
                                    text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            print(f"timed out after {timeout:.0f} s; its log: {log_path}")
            return None, None
    print(result.stdout, flush=True)
    summaries = [line for line in result.stdout.splitlines() if line.startswith("{")]
    if result.returncode not in (0, 1):  # 1: ran, goal missed
        print(f"failed with status {result.returncode}; its log: {log_path}")
    return result.returncode, json.loads(summaries[-1]) if summaries else None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes-per-model", type=float, default=2.0, help="training time of each model")
    parser.add_argument("--workdir", default=None, help="default: a temporary folder")
    args = parser.parse_args(argv)
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="gpu_check_"))
    workdir.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()

    import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)
    from measure import machine_report
    from quality_fastspeech2 import preprocess_corpus

    machine = machine_report()
    print(machine, flush=True)
    dump = workdir / "dump"
    preprocess_corpus(dump)
    preprocess_minutes = (time.monotonic() - start) / 60
    print(f"preprocessed the bundled corpus in {preprocess_minutes:.1f} min", flush=True)

    # Each script also loads, decodes and scores after training: allow it a few minutes more.
    timeout = 60 * (args.minutes_per_model + 5)
    fs2_status, fastspeech2 = run(
        [HERE / "quality_fastspeech2.py", "--config", CONFIGS["fastspeech2"], "--dump-dir", dump,
         "--outdir", workdir / "fastspeech2", "--max-minutes", args.minutes_per_model, "--mixed-precision"],
        workdir / "fastspeech2.log", timeout)
    vocoder_status, vocoder = run(
        [HERE / "quality_vocoder.py", "--config", CONFIGS["mb_melgan"], "--dump-dir", dump,
         "--workdir", workdir / "mb_melgan", "--max-minutes", args.minutes_per_model, "--mixed-precision"],
        workdir / "mb_melgan.log", timeout)
    summary = {"machine": machine, "minutes_per_model": args.minutes_per_model,
               "preprocess_minutes": round(preprocess_minutes, 2), "fastspeech2_v1": fastspeech2,
               "mb_melgan_v1": vocoder, "total_minutes": round((time.monotonic() - start) / 60, 2)}
    (workdir / "gpu_check.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary))
    print(f"logs and gpu_check.json in {workdir}")
    return 0 if fastspeech2 is not None and vocoder is not None else 1


if __name__ == "__main__":
    sys.exit(main())
