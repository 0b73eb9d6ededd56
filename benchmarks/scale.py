"""Input pipelines at corpus scale: `.npy` against sharded dumps, LJSpeech-sized and 10x.

    python benchmarks/scale.py                       # 13,100 utterances (~10 GB under /tmp, deleted at the end)
    python benchmarks/scale.py --utterances 500      # a quick check of the script itself

Builds a synthetic dump with LJSpeech's lengths (1-10 s, mean ~6.6 s at 22.05 kHz, hop 256;
80 mels, F0, energy, durations, float32 waves), converts it to shards, and makes a 10x case
whose index lists every utterance ten times (symbolic links to the same files, so only the
index and the file count grow). Each pipeline runs in a fresh process and prints:
time to first batch (dataset construction included), steady batches/s of the FastSpeech2
(padded batches of 16 with durations, F0, energy) and vocoder (16 segments of 8192
samples) pipelines, input wait against a simulated step (a sleep: the pipeline gets the
cores the real step would use, so the share is a lower bound), peak RSS per epoch without
cache, padding share per batching mode, dump size and file count.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from measure import machine_report

import tensorflow_tts  # noqa: F401  (sets up tf.keras before tensorflow is used)
from tensorflow_tts.datasets import AcousticDataset, AudioMelDataset, ljspeech_lengths, write_synthetic_dump
from tensorflow_tts.dump import layout
from tensorflow_tts.dump.shards import ShardIndex, shard_dump

SAMPLE_RATE, HOP_SIZE = 22050, 256
GOALS = {"first_batch_s": {1: 5.0, 10: 30.0}, "peak_rss_gb": 1.5}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--utterances", type=int, default=13100, help="utterances of the LJSpeech-sized dump")
    parser.add_argument("--scale", type=int, default=10, help="the index-only case lists the dump this many times")
    parser.add_argument("--workdir", type=Path, default=None, help="where dumps are built (default: a /tmp folder)")
    parser.add_argument("--keep", action="store_true", help="keep the dumps")
    parser.add_argument("--shard-mb", type=float, default=128)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--steady-batches", type=int, default=50, help="batches timed for batches/s")
    parser.add_argument("--fastspeech2-step-s", type=float, default=4.0,
                        help="simulated FastSpeech2 v1 step (benchmarks/README.md: ~4 s on 2 CPU cores)")
    parser.add_argument("--vocoder-step-s", type=float, default=0.18, help="simulated MB-MelGAN generator step")
    parser.add_argument("--wait-batches", type=int, default=8, help="simulated steps for the input-wait share")
    parser.add_argument("--epochs", type=int, default=3, help="epochs of the RSS measurement (1x case)")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--measure-rss", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


# -- building the dumps ------------------------------------------------------------------


def build_npy(dump_dir, count):
    frames, tokens = ljspeech_lengths(count, sample_rate=SAMPLE_RATE, hop_size=HOP_SIZE)
    write_synthetic_dump(dump_dir, num_utterances=count, hop_size=HOP_SIZE, frame_lengths=frames,
                         token_lengths=tokens, vocab_size=150, num_speakers=1)


def repeat_npy(source, target, copies):
    """A `.npy` dump listing every utterance of `source` `copies` times, through symbolic links."""
    utt_ids = layout.load_utt_ids(source, "train")
    kinds = [kind for kind in layout.KINDS if (source / "train" / kind.folder).is_dir()]
    for kind in kinds:
        (target / "train" / kind.folder).mkdir(parents=True)
    all_ids = []
    for copy in range(copies):
        for utt_id in utt_ids:
            new_id = f"{utt_id}-x{copy}"
            all_ids.append(new_id)
            for kind in kinds:
                os.symlink(kind.path(source / "train", utt_id), kind.path(target / "train", new_id))
    copy_top_level(source, target)
    layout.save_utt_ids(target, "train", all_ids)


def repeat_shards(source, target, copies):
    """A sharded dump whose index lists `source`'s `copies` times, its shards symbolic links to `source`'s."""
    index = ShardIndex.load(source / "train")
    shards = index.num_shards
    (target / "train" / layout.SHARDS_FOLDER).mkdir(parents=True)
    for kind_folder in index.kinds:
        kind = next(kind for kind in layout.KINDS if kind.folder == kind_folder)
        for copy in range(copies):
            for shard, path in enumerate(index.shard_paths(kind)):
                os.symlink(path, layout.shard_path(target / "train", kind, copy * shards + shard, shards * copies))
    count = len(index.utt_ids)
    ShardIndex(
        split_dir=target / "train",
        utt_ids=np.array([f"{utt_id}-x{copy}" for copy in range(copies) for utt_id in index.utt_ids]),
        shard_starts=np.concatenate([[0]] + [copy * count + index.shard_starts[1:] for copy in range(copies)]),
        kinds=index.kinds,
        rows=np.tile(index.rows, copies),
        inner_dims=index.inner_dims,
        speaker_ids=np.tile(index.speaker_ids, copies),
        max_token_ids=np.tile(index.max_token_ids, copies),
        duration_totals=np.tile(index.duration_totals, copies),
    ).save()
    copy_top_level(source, target)


def copy_top_level(source, target):
    for path in source.iterdir():
        if path.is_file():
            shutil.copy2(path, target / path.name)


def disk_usage(dump_dir):
    """(bytes of regular files, number of directory entries that are files or links)."""
    size = files = 0
    for folder, _, names in os.walk(dump_dir):
        for name in names:
            stat = os.lstat(os.path.join(folder, name))
            files += 1
            size += stat.st_size if not os.path.islink(os.path.join(folder, name)) else 0
    return size, files


# -- measuring one dump (in a fresh process) ------------------------------------------------


def rss_gb():
    """Resident memory of this process (Linux: /proc/self/statm), GB."""
    with open("/proc/self/statm") as stream:
        return int(stream.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**30


def steady_rate(iterator, batches):
    start = time.perf_counter()
    for _ in range(batches):
        next(iterator)
    return batches / (time.perf_counter() - start)


def wait_share(batches, step_seconds, steps):
    """Share of a simulated training loop spent waiting for the next batch."""
    iterator = iter(batches)
    next(iterator)
    waited = 0.0
    for _ in range(steps):
        time.sleep(step_seconds)
        start = time.perf_counter()
        next(iterator)
        waited += time.perf_counter() - start
    return waited / (waited + steps * step_seconds)


def fastspeech2_dataset(dump_dir):
    return AcousticDataset(dump_dir, "train", with_durations=True, with_f0_energy=True)


def vocoder_dataset(dump_dir):
    return AudioMelDataset(dump_dir, "train", batch_max_steps=8192, hop_size=HOP_SIZE)


def measure_dump(dump_dir, args):
    figures = {}
    start = time.perf_counter()
    dataset = fastspeech2_dataset(dump_dir)
    figures["index_s"] = time.perf_counter() - start
    iterator = iter(dataset.create(args.batch_size))
    next(iterator)
    figures["first_batch_s"] = time.perf_counter() - start
    figures["fastspeech2_batches_per_s"] = steady_rate(iterator, args.steady_batches)
    del iterator
    figures["fastspeech2_wait"] = wait_share(dataset.create(args.batch_size), args.fastspeech2_step_s, args.wait_batches)

    vocoder = vocoder_dataset(dump_dir)
    iterator = iter(vocoder.create(args.batch_size))
    next(iterator)
    figures["vocoder_batches_per_s"] = steady_rate(iterator, args.steady_batches)
    del iterator
    figures["vocoder_wait"] = wait_share(vocoder.create(args.batch_size), args.vocoder_step_s, args.wait_batches)

    if args.measure_rss:
        # Fresh iterators every epoch, as the trainers make them; the peak of each epoch.
        batches = dataset.create(args.batch_size)
        peaks = []
        for _ in range(args.epochs):
            peak = rss_gb()
            for number, _ in enumerate(batches):
                if number % 10 == 0:
                    peak = max(peak, rss_gb())
            peaks.append(max(peak, rss_gb()))
        figures["rss_peaks_gb"] = peaks
    return figures


class LengthsOnly(AcousticDataset):
    """The index's mel lengths as examples with one-channel zero mels: batching modes without reading features."""

    def _read(self, shuffle, seed):
        import tensorflow as tf

        lengths = tf.constant(self.mel_lengths)
        indices = self._indices(shuffle, seed)
        return indices.map(lambda index: self._finish({
            "utt_ids": tf.constant(""), "input_ids": tf.zeros([1], tf.int32), "speaker_ids": tf.constant(0),
            "mel_gts": tf.zeros([lengths[index], 1]),
        }))


def padding_shares(dump_dir, batch_size):
    """{mode: padded frames / all frames} over one epoch of each batching mode, from the index's lengths."""
    dataset = LengthsOnly(dump_dir, "train", with_durations=False, with_f0_energy=False)
    budget = int(batch_size * dataset.mel_lengths.mean())
    modes = {
        f"padded {batch_size}": dict(batch_size=batch_size),
        f"bucket {batch_size}": dict(batch_size=batch_size, batching="bucket"),
        f"bucket, {budget} frames": dict(batch_frames=budget, batching="bucket"),
        f"frames, {budget}": dict(batch_frames=budget, batching="frames"),
    }
    shares = {}
    for name, options in modes.items():
        padded = total = 0
        for batch in dataset.create(add_padding_ratio=False, **options).as_numpy_iterator():
            size, frames = batch["mel_gts"].shape[:2]
            total += size * frames
            padded += size * frames - int(batch["mel_lengths"].sum())
        shares[name] = padded / total
    return shares


def child(args):
    figures = measure_dump(args.child, args)
    if layout.is_sharded(args.child / "train"):
        figures["padding"] = padding_shares(args.child, args.batch_size)
    print(json.dumps(figures), flush=True)


def run_child(dump_dir, argv, measure_rss):
    command = [sys.executable, __file__, "--child", str(dump_dir), *argv] + (["--measure-rss"] if measure_rss else [])
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"measuring {dump_dir} failed:\n" + "\n".join(result.stderr.splitlines()[-15:]))
    return json.loads(result.stdout.strip().splitlines()[-1])


def report(name, scale, size, files, figures, args):
    goal = GOALS["first_batch_s"].get(scale)
    met = "" if goal is None else f" (goal <= {goal:.0f} s at {scale}x: {'met' if figures['first_batch_s'] <= goal else 'NOT met'})"
    print(f"  {name}: {size / 2**30:.2f} GB on disk in {files} files; index {figures['index_s']:.2f} s, "
          f"first batch {figures['first_batch_s']:.2f} s{met}")
    print(f"    FastSpeech2 pipeline {figures['fastspeech2_batches_per_s']:.1f} batches/s, input wait "
          f"{100 * figures['fastspeech2_wait']:.1f} % of a {args.fastspeech2_step_s} s step; vocoder pipeline "
          f"{figures['vocoder_batches_per_s']:.1f} batches/s, wait {100 * figures['vocoder_wait']:.1f} % of a "
          f"{args.vocoder_step_s} s step")
    if "rss_peaks_gb" in figures:
        peaks = figures["rss_peaks_gb"]
        grows = peaks[-1] > peaks[0] * 1.05 + 0.05
        print(f"    peak RSS per epoch without cache: {', '.join(f'{peak:.2f}' for peak in peaks)} GB "
              f"({'GROWS' if grows else 'flat'}; goal <= {GOALS['peak_rss_gb']} GB: "
              f"{'met' if max(peaks) <= GOALS['peak_rss_gb'] and not grows else 'NOT met'})")
    for mode, share in figures.get("padding", {}).items():
        print(f"    padding share, {mode}: {100 * share:.1f} %")


def main(argv=None):
    raw_argv = sys.argv[1:] if argv is None else argv
    args = parse_args(raw_argv)
    if args.child:
        return child(args)
    print(machine_report())
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="scale-", dir="/tmp"))
    # What the measuring processes need of the flags.
    passed = [f"--{name.replace('_', '-')}={getattr(args, name)}" for name in (
        "batch_size", "steady_batches", "fastspeech2_step_s", "vocoder_step_s", "wait_batches", "epochs")]
    try:
        dumps = {}
        start = time.perf_counter()
        build_npy(workdir / "npy", args.utterances)
        print(f"built the .npy dump of {args.utterances} utterances in {time.perf_counter() - start:.0f} s")
        start = time.perf_counter()
        shard_dump(workdir / "npy", workdir / "shards", shard_bytes=int(args.shard_mb * 2**20))
        print(f"converted it to shards in {time.perf_counter() - start:.0f} s")
        start = time.perf_counter()
        repeat_npy(workdir / "npy", workdir / "npy-x", args.scale)
        repeat_shards(workdir / "shards", workdir / "shards-x", args.scale)
        print(f"made the {args.scale}x cases (links) in {time.perf_counter() - start:.0f} s")
        for scale, suffix in ((1, ""), (args.scale, "-x")):
            print(f"{args.utterances * scale} utterances ({scale}x):")
            for name in ("npy", "shards"):
                dump_dir = workdir / f"{name}{suffix}"
                dumps[dump_dir] = disk_usage(dump_dir)
                figures = run_child(dump_dir, passed, measure_rss=scale == 1)
                report(name, scale, *dumps[dump_dir], figures, args)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
