"""The README's main command: the whole pipeline on the bundled LJSpeech-layout corpus.

For now: preprocess -> compute statistics -> normalize, then a summary of the dump.
Later stages (training, synthesis, export) are added here as they land.

    python examples/demo/run_demo.py --outdir demo_output
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from tensorflow_tts.bin import compute_statistics, normalize, preprocess

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "test" / "files" / "corpus" / "ljspeech"
PREPROCESS_CONFIG = REPO / "preprocess" / "ljspeech_preprocess.yaml"


def run_step(name, main, argv):
    print(f"\n== {name}: {' '.join(argv)}", flush=True)
    status = main(argv)
    if status:
        sys.exit(f"demo stopped: {name} exited with status {status}")


def summarize_dump(dump):
    report = json.loads((dump / "preprocess_report.json").read_text())
    train_ids = np.load(dump / "train_utt_ids.npy")
    valid_ids = np.load(dump / "valid_utt_ids.npy")
    mel_frames = sum(np.load(path).shape[0] for path in (dump / "train" / "norm-feats").glob("*.npy"))
    print(f"\nDump written to {dump}")
    print(f"  utterances: {len(train_ids)} train, {len(valid_ids)} valid; {mel_frames} train mel frames")
    print(f"  skipped: {len(report.get('skipped', []))}, converted: {len(report.get('converted', []))}")
    print(f"  statistics: {dump / 'stats.npy'}, {dump / 'stats_f0.npy'}, {dump / 'stats_energy.npy'}")
    print(f"  report: {dump / 'preprocess_report.json'}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outdir", type=Path, default=Path("demo_output"), help="where everything is written")
    args = parser.parse_args(argv)
    dump = args.outdir.resolve() / "dump"
    config = str(PREPROCESS_CONFIG)

    run_step(
        "preprocess",
        preprocess.main,
        ["--rootdir", str(CORPUS), "--outdir", str(dump), "--config", config, "--dataset", "ljspeech"],
    )
    # preprocess already writes stats and norm-feats; the two standalone commands are
    # run again to show the flow users know (and they must reproduce the same files).
    run_step(
        "compute statistics",
        compute_statistics.main,
        ["--rootdir", str(dump / "train"), "--outdir", str(dump), "--config", config],
    )
    run_step(
        "normalize",
        normalize.main,
        ["--rootdir", str(dump), "--outdir", str(dump), "--config", config, "--stats", str(dump / "stats.npy")],
    )
    summarize_dump(dump)


if __name__ == "__main__":
    main()
