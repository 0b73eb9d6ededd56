"""Print the share of padded mel frames for plain, bucketed and frame-budget batches.

    python benchmarks/padding_waste.py                  # preprocesses the bundled LJSpeech corpus
    python benchmarks/padding_waste.py --dump dump/     # an existing dump
    python benchmarks/padding_waste.py --synthetic      # random features, no preprocessing

Padding ratio = padded frames / all frames over the epochs, with padded = B * T - sum(lengths).
"""

import argparse
import logging
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

import tensorflow_tts  # noqa: F401  (sets up tf.keras before tensorflow is used)
from tensorflow_tts.datasets import AcousticDataset, write_synthetic_dump
GOAL = 0.10


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--dump", type=Path, help="dump folder (default: preprocess test/files/corpus/ljspeech)")
    source.add_argument("--synthetic", action="store_true", help="use a synthetic dump of random features")
    parser.add_argument("--split", default="train")
    parser.add_argument("--batch-size", type=int, default=16, help="plain and bucketed batch size (default 16)")
    parser.add_argument(
        "--batch-frames", type=int, help="frame budget per batch (default: batch size * mean mel length)"
    )
    parser.add_argument("--num-buckets", type=int, default=8)
    parser.add_argument("--sort-window", type=int, default=2048, help="utterances sorted together (frames mode)")
    parser.add_argument("--epochs", type=int, default=3, help="epochs averaged per mode")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--synthetic-utterances", type=int, default=1000)
    return parser.parse_args(argv)


def preprocess_bundled_corpus(outdir):
    command = [
        sys.executable,
        "-m",
        "tensorflow_tts.bin.preprocess",
        "--rootdir",
        str(ROOT / "test/files/corpus/ljspeech"),
        "--outdir",
        str(outdir),
        "--config",
        str(ROOT / "preprocess/ljspeech_preprocess.yaml"),
        "--dataset",
        "ljspeech",
    ]
    print("preprocessing the bundled corpus:", " ".join(command), flush=True)
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        tail = "\n".join(result.stderr.splitlines()[-10:])
        sys.exit(f"preprocessing failed (exit {result.returncode}); pass --dump DIR or --synthetic instead\n{tail}")


def measure(batches, epochs):
    padded = total = count = utterances = 0
    for _ in range(epochs):
        for batch in batches.as_numpy_iterator():
            size, frames = batch["mel_gts"].shape[:2]
            total += size * frames
            padded += size * frames - int(batch["mel_lengths"].sum())
            count += 1
            utterances += size
    return padded / max(total, 1), count // epochs, utterances / max(count, 1), total // max(count, 1)


def run(dump_dir, args):
    # Raw mels are always there (norm-feats need a normalize step); lengths are the same.
    dataset = AcousticDataset(dump_dir, args.split, use_norm=False, with_durations=False, with_f0_energy=False)
    lengths = dataset.mel_lengths
    batch_frames = args.batch_frames or int(args.batch_size * lengths.mean())
    print(
        f"{dump_dir}/{args.split}: {len(dataset)} utterances, mel frames {lengths.min()}-{lengths.max()} "
        f"(mean {lengths.mean():.0f}); batch size {args.batch_size}, frame budget {batch_frames}"
    )
    modes = [
        ("plain padded", dict(batch_size=args.batch_size)),
        ("bucketed", dict(batch_size=args.batch_size, batching="bucket", num_buckets=args.num_buckets)),
        (
            "bucketed + budget",
            dict(batch_frames=batch_frames, batching="bucket", num_buckets=args.num_buckets),
        ),
        ("frame budget", dict(batch_frames=batch_frames, batching="frames", sort_window=args.sort_window)),
    ]
    print(f"{'batching':<18} {'padding':>8} {'batches':>8} {'utts/batch':>10} {'frames/batch':>12} {'seconds':>8}")
    results = {}
    for name, options in modes:
        start = time.perf_counter()
        batches = dataset.create(seed=args.seed, add_padding_ratio=False, **options)
        ratio, count, per_batch, frames = measure(batches, args.epochs)
        seconds = (time.perf_counter() - start) / args.epochs
        results[name] = ratio
        print(f"{name:<18} {ratio:>7.1%} {count:>8d} {per_batch:>10.1f} {frames:>12d} {seconds:>8.2f}")
    best = min(ratio for name, ratio in results.items() if name != "plain padded")
    verdict = "met" if best <= GOAL else "missed"
    print(f"goal: length-aware padding <= {GOAL:.0%}: {verdict} (best {best:.1%})")
    return best


def main(argv=None):
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="padding_waste_") as scratch:
        dump_dir = args.dump
        if args.synthetic:
            dump_dir = Path(scratch) / "dump"
            # LJSpeech-like spread: 1-10 s of audio is about 90-870 frames at hop 256.
            write_synthetic_dump(
                dump_dir,
                num_utterances=args.synthetic_utterances,
                split=args.split,
                seed=args.seed,
                frames_range=(90, 870),
                tokens_range=(20, 180),
                with_norm_feats=False,
                with_waves=False,
            )
        elif dump_dir is None:
            dump_dir = Path(scratch) / "dump"
            preprocess_bundled_corpus(dump_dir)
        best = run(dump_dir, args)
    return 0 if best <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
