"""Preprocessing throughput: seconds of audio turned into dump features per wall-clock second.

Runs the whole `tensorflow-tts-preprocess` work (text ids, loading, trimming, mel, F0,
energy, split, statistics, normalisation) on a corpus with one worker and with every
core, several times each, and prints the medians.

    python benchmarks/preprocess_throughput.py [--rootdir test/files/corpus/ljspeech] [--repeats 3]
"""

import argparse
import logging
import os
import statistics
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rootdir", type=Path, default=ROOT / "test" / "files" / "corpus" / "ljspeech")
    parser.add_argument("--dataset", default="ljspeech")
    parser.add_argument("--config", type=Path, default=ROOT / "preprocess" / "ljspeech_preprocess.yaml")
    parser.add_argument("--repeats", type=int, default=3, help="runs per worker count; the median is printed")
    parser.add_argument(
        "--n_cpus", type=int, nargs="+", default=None, help="worker counts to try (default: 1 and all cores)"
    )
    return parser.parse_args()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.WARNING)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from tensorflow_tts.configs import PreprocessConfig
    from tensorflow_tts.processor import PROCESSORS
    from tensorflow_tts.dump.preprocess import preprocess_corpus

    config = PreprocessConfig.from_yaml(args.config)
    processor = PROCESSORS[args.dataset](data_dir=str(args.rootdir))
    cores = os.cpu_count() or 1
    worker_counts = args.n_cpus or sorted({1, cores})

    print(f"corpus: {args.rootdir} ({len(processor.items)} items), {cores} core(s), {args.repeats} run(s) each")
    print(f"{'workers':>8} {'audio s':>9} {'median wall s':>14} {'audio s / wall s':>17}")
    for n_cpus in worker_counts:
        walls, audio_seconds = [], 0.0
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory() as outdir:
                start = time.perf_counter()
                report = preprocess_corpus(processor, config, outdir, n_cpus=n_cpus, dataset=args.dataset)
                walls.append(time.perf_counter() - start)
            audio_seconds = report["seconds_ok"]
        wall = statistics.median(walls)
        print(f"{n_cpus:>8} {audio_seconds:>9.1f} {wall:>14.2f} {audio_seconds / wall:>17.1f}")


if __name__ == "__main__":
    main()
