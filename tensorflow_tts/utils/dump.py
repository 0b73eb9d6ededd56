"""The dump (docs/dump_layout.md): writing a corpus into it, statistics and normalisation.

`preprocess_corpus` is what `tensorflow-tts-preprocess` runs; `compute_statistics` and
`normalize_dump` are shared with `tensorflow-tts-compute-statistics` and
`tensorflow-tts-normalize`.
"""

import contextlib
import json
import logging
import multiprocessing
import os
import re
import shutil
import sys
import traceback
from pathlib import Path

import numpy as np
import yaml
from tqdm import tqdm
from tqdm.contrib.logging import logging_redirect_tqdm

from tensorflow_tts.audio.features import extract_features, load_for_features
from tensorflow_tts.audio.load import AudioError
from tensorflow_tts.audio.trim import trim_silence

logger = logging.getLogger(__name__)

SPLITS = ("train", "valid")
REPORT_NAME = "preprocess_report.json"
# The preprocessing settings the dump was made with, so later stages can invert or check
# its features (e.g. Griffin-Lim audio at evaluation) without being told the YAML again.
CONFIG_NAME = "preprocess_config.yml"
STATS_NAME = "stats.npy"
F0_STATS_NAME = "stats_f0.npy"
ENERGY_STATS_NAME = "stats_energy.npy"
# Converted items are logged one line each up to this many; a corpus recorded at another
# rate would otherwise log every file. The report always lists them all.
MAX_LOGGED_CONVERSIONS = 20
# A mel bin whose standard deviation is below this is constant over the train split;
# it is normalised with a standard deviation of 1 instead of being blown up.
MIN_STD = 1e-8


class FeatureKind:
    """One kind of per-utterance file: `<split>/<folder>/<utt>-<suffix>.npy`."""

    def __init__(self, folder, suffix, dtype):
        self.folder = folder
        self.suffix = suffix
        self.dtype = np.dtype(dtype)

    def path(self, split_dir, utt_id):
        return Path(split_dir) / self.folder / f"{utt_id}-{self.suffix}.npy"

    def utt_ids(self, split_dir):
        """Sorted ids of the utterances that have this kind of file in `split_dir`."""
        tail = f"-{self.suffix}.npy"
        folder = Path(split_dir) / self.folder
        if not folder.is_dir():
            return []
        return sorted(p.name[: -len(tail)] for p in folder.iterdir() if p.name.endswith(tail))


IDS = FeatureKind("ids", "ids", np.int32)
MEL = FeatureKind("raw-feats", "raw-feats", np.float32)
NORM_MEL = FeatureKind("norm-feats", "norm-feats", np.float32)
F0 = FeatureKind("raw-f0", "raw-f0", np.float32)
ENERGY = FeatureKind("raw-energies", "raw-energy", np.float32)
WAVE = FeatureKind("wavs", "wave", np.float32)
SPEAKER_ID = FeatureKind("speaker-ids", "speaker-ids", np.int32)
DURATIONS = FeatureKind("durations", "durations", np.int32)
# What preprocessing writes per utterance (durations come later, from an aligner).
PREPROCESS_KINDS = (IDS, MEL, NORM_MEL, F0, ENERGY, WAVE, SPEAKER_ID)

_SAFE_UTT_ID = re.compile(r"^\w[\w.\-]*$")


def is_safe_utt_id(utt_id):
    """True for ids usable as a file-name stem: word characters, '.', '-'; no separators."""
    return isinstance(utt_id, str) and bool(_SAFE_UTT_ID.match(utt_id)) and ".." not in utt_id


def save_feature(kind, split_dir, utt_id, value):
    path = kind.path(split_dir, utt_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, np.asarray(value, dtype=kind.dtype))
    return path


def load_feature(kind, split_dir, utt_id):
    return np.load(kind.path(split_dir, utt_id))


def utt_ids_path(dump_dir, split):
    return Path(dump_dir) / f"{split}_utt_ids.npy"


def save_utt_ids(dump_dir, split, utt_ids):
    np.save(utt_ids_path(dump_dir, split), np.asarray(sorted(utt_ids), dtype=str))


def load_utt_ids(dump_dir, split):
    return [str(utt_id) for utt_id in np.load(utt_ids_path(dump_dir, split))]


# --- statistics and normalisation ----------------------------------------------------------


class RunningMoments:
    """Mean and population standard deviation over many arrays, merged one array at a time.

    Uses the pairwise (Chan et al.) update, which stays accurate over millions of frames.
    """

    def __init__(self):
        self.count = 0
        self.mean = 0.0
        self.m2 = 0.0

    def update(self, values):
        """Add `values` `[n, ...]`; statistics are kept per trailing position."""
        values = np.asarray(values, dtype=np.float64)
        count = values.shape[0]
        if count == 0:
            return
        mean = values.mean(axis=0)
        m2 = ((values - mean) ** 2).sum(axis=0)
        total = self.count + count
        delta = mean - self.mean
        self.mean = self.mean + delta * (count / total)
        self.m2 = self.m2 + m2 + delta**2 * (self.count * count / total)
        self.count = total

    def mean_and_std(self):
        """float32 `[2, ...]`: mean, then standard deviation (1 where it is ~0)."""
        std = np.sqrt(self.m2 / self.count)
        std = np.where(std < MIN_STD, 1.0, std)
        return np.stack([np.asarray(self.mean, dtype=np.float64), std]).astype(np.float32)


def compute_statistics(split_dir):
    """Statistics of the features in one split folder (normally `DUMP/train`).

    Returns:
        `(mel_stats, f0_stats, energy_stats)`: float32 `[2, num_mels]`, `[2]`, `[2]`, each
        mean then standard deviation. F0 and energy use only their non-zero (voiced)
        frames; a feature with no such frame gets mean 0 and standard deviation 1.

    Raises:
        FileNotFoundError: `split_dir` holds no `raw-feats` files.
    """
    utt_ids = MEL.utt_ids(split_dir)
    if not utt_ids:
        raise FileNotFoundError(f"{split_dir}: no {MEL.folder}/*-{MEL.suffix}.npy files to compute statistics from")
    mel_moments, f0_moments, energy_moments = RunningMoments(), RunningMoments(), RunningMoments()
    for utt_id in tqdm(utt_ids, desc="statistics", unit="utt", leave=False, disable=None):
        mel_moments.update(load_feature(MEL, split_dir, utt_id))
        for kind, moments in ((F0, f0_moments), (ENERGY, energy_moments)):
            if kind.path(split_dir, utt_id).exists():
                values = load_feature(kind, split_dir, utt_id)
                moments.update(values[values != 0])
    stats = [mel_moments.mean_and_std()]
    for name, moments in (("f0", f0_moments), ("energy", energy_moments)):
        if moments.count == 0:
            logger.warning("%s: no non-zero %s frames; using mean 0 and std 1", split_dir, name)
            stats.append(np.array([0.0, 1.0], dtype=np.float32))
        else:
            stats.append(moments.mean_and_std())
    constant = int(np.sum(mel_moments.m2 / mel_moments.count < MIN_STD**2))
    if constant:
        logger.warning("%s: %d mel bin(s) are constant over the split; normalised with std 1", split_dir, constant)
    return tuple(stats)


def save_statistics(outdir, mel_stats, f0_stats, energy_stats):
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    np.save(outdir / STATS_NAME, mel_stats.astype(np.float32))
    np.save(outdir / F0_STATS_NAME, f0_stats.astype(np.float32))
    np.save(outdir / ENERGY_STATS_NAME, energy_stats.astype(np.float32))


def load_mel_statistics(path, num_mels=None):
    """Read `stats.npy`, checking it is float `[2, num_mels]`."""
    stats = np.load(path)
    if stats.ndim != 2 or stats.shape[0] != 2 or (num_mels is not None and stats.shape[1] != num_mels):
        expected = f"[2, {num_mels}]" if num_mels is not None else "[2, num_mels]"
        raise ValueError(f"{path}: expected mel statistics of shape {expected}, got {list(stats.shape)}")
    return stats.astype(np.float32)


def normalize_mel(mel, mel_stats):
    """`(mel - mean) / std` per bin; `mel` `[frames, num_mels]`, `mel_stats` `[2, num_mels]`."""
    return ((mel - mel_stats[0]) / mel_stats[1]).astype(np.float32)


def normalize_split(split_dir, mel_stats, out_split_dir=None):
    """Write `norm-feats` for every `raw-feats` file in `split_dir`; returns how many."""
    out_split_dir = Path(split_dir if out_split_dir is None else out_split_dir)
    utt_ids = MEL.utt_ids(split_dir)
    for utt_id in tqdm(utt_ids, desc=f"normalize {Path(split_dir).name}", unit="utt", leave=False, disable=None):
        mel = load_feature(MEL, split_dir, utt_id)
        if mel.ndim != 2 or mel.shape[1] != mel_stats.shape[1]:
            raise ValueError(
                f"{MEL.path(split_dir, utt_id)}: expected [frames, {mel_stats.shape[1]}] to match the statistics, "
                f"got {list(mel.shape)}"
            )
        save_feature(NORM_MEL, out_split_dir, utt_id, normalize_mel(mel, mel_stats))
    return len(utt_ids)


def normalize_dump(rootdir, outdir, mel_stats):
    """Normalise every split folder of `rootdir` (or `rootdir` itself if it holds `raw-feats`).

    Returns:
        dict of split folder name to number of utterances normalised.
    """
    rootdir, outdir = Path(rootdir), Path(outdir)
    if (rootdir / MEL.folder).is_dir():
        return {rootdir.name: normalize_split(rootdir, mel_stats, outdir)}
    counts = {}
    for split_dir in sorted(p for p in rootdir.iterdir() if (p / MEL.folder).is_dir()):
        counts[split_dir.name] = normalize_split(split_dir, mel_stats, outdir / split_dir.name)
    if not counts:
        raise FileNotFoundError(f"{rootdir}: no {MEL.folder}/ folder in it or in any split folder below it")
    return counts


# --- preprocessing a corpus ----------------------------------------------------------------

# Set in each worker (inherited through fork, pickled otherwise) by _init_worker.
_WORKER = {}


def _init_worker(processor, config, staging_dir):
    _WORKER.update(processor=processor, config=config, staging_dir=Path(staging_dir))


def _single_threaded_math():
    """Limit BLAS to one thread: the pool already keeps every core busy, and one thread
    gives the same float rounding whatever the number of workers."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # installed with librosa (through scikit-learn), but only indirectly
        return contextlib.nullcontext()
    return threadpool_limits(limits=1)


def _init_pool_worker(processor, config, staging_dir):
    _init_worker(processor, config, staging_dir)
    _WORKER["thread_limits"] = _single_threaded_math()


def _item_name(item):
    """How the report names an item before the processor has given it an utterance id."""
    try:
        return Path(item[1]).stem
    except (TypeError, IndexError):
        return str(item)


def _staging_path(staging_dir, index, kind):
    return Path(staging_dir) / f"{index}-{kind.suffix}.npy"


def _process_item(task):
    """Text and audio features of one corpus item, written to the staging folder.

    Returns a result dict: `status` "ok" or "skipped", `item`, `reason` or the utterance's
    `utt_id`, `conversions`, `speaker_id`, `seconds`.
    """
    from tensorflow_tts.processor.base_processor import DataProcessorError

    index, item = task
    processor, config, staging_dir = _WORKER["processor"], _WORKER["config"], _WORKER["staging_dir"]
    name = _item_name(item)
    result = {"index": index, "item": name, "status": "skipped"}
    try:
        sample = processor.get_one_sample(item)
        utt_id = sample["utt_id"]
        result["item"] = name = str(utt_id)
        if not is_safe_utt_id(utt_id):
            result["reason"] = f"utterance id {utt_id!r} is not a safe file name (it could escape the dump folder)"
            return result
        text_ids = np.asarray(sample["text_ids"], dtype=np.int32)
        if text_ids.size == 0:
            result["reason"] = "no tokens left after text processing"
            return result
        speaker_name = sample.get("speaker_name")
        if speaker_name not in processor.speakers_map:
            result["reason"] = f"speaker {speaker_name!r} is not in the processor's speakers_map"
            return result
        audio, conversions = load_for_features(sample["wav_path"], config)
        features = extract_features(audio, config)
    except DataProcessorError as error:
        reason = str(error)
        result["reason"] = reason[len(name) + 2 :] if reason.startswith(f"{name}: ") else reason
        return result
    except AudioError as error:
        result["reason"] = error.reason
        return result
    except Exception as error:  # noqa: BLE001 - one broken item must not cost the whole corpus
        logger.error("%s: unexpected error\n%s", name, traceback.format_exc())
        result["reason"] = f"unexpected error: {type(error).__name__}: {error}"
        return result

    dropped = sample.get("dropped_symbols") or []
    if dropped:
        conversions.append(
            "dropped character(s) with no symbol: " + " ".join(repr(symbol) for symbol in dict.fromkeys(dropped))
        )
    values = {
        IDS: text_ids,
        MEL: features.mel,
        F0: features.f0,
        ENERGY: features.energy,
        WAVE: features.audio,
        SPEAKER_ID: processor.speakers_map[speaker_name],
    }
    for kind, value in values.items():
        np.save(_staging_path(staging_dir, index, kind), np.asarray(value, dtype=kind.dtype))
    result.update(
        status="ok",
        utt_id=utt_id,
        conversions=conversions,
        seconds=len(features.audio) / config.sampling_rate,
    )
    return result


def _warm_up(config):
    """Run the feature code once so workers forked afterwards skip librosa's lazy imports."""
    seconds = max(1.0, config.min_duration_seconds)
    if config.max_duration_seconds is not None:
        seconds = min(seconds, config.max_duration_seconds)
    length = max(config.fft_size, int(seconds * config.sampling_rate))
    tone = 0.1 * np.sin(2 * np.pi * 220.0 * np.arange(length) / config.sampling_rate).astype(np.float32)
    trim_silence(tone, config.trim_threshold_in_db, config.trim_frame_size, config.trim_hop_size)
    extract_features(tone, config)


def _run_items(tasks, processor, config, staging_dir, n_cpus):
    """Yield `_process_item` results, in a pool of `n_cpus` processes when above 1."""
    _warm_up(config)
    if n_cpus <= 1:
        _init_worker(processor, config, staging_dir)
        with _single_threaded_math():
            yield from map(_process_item, tasks)
        return
    chunksize = max(1, min(16, len(tasks) // (n_cpus * 8)))
    initargs = (processor, config, staging_dir)
    # fork where there is one: workers inherit the warmed-up modules and the processor for free.
    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else None)
    with context.Pool(n_cpus, initializer=_init_pool_worker, initargs=initargs) as pool:
        yield from pool.imap_unordered(_process_item, tasks, chunksize=chunksize)


def split_utt_ids(utt_ids, test_size, seed):
    """Split ids into `(train, valid)`, both sorted; the same ids and seed give the same split.

    `test_size` is a fraction in [0, 1) or a whole number of utterances >= 1. The valid
    split gets at least one utterance when `test_size > 0` and there are two or more.
    """
    utt_ids = sorted(utt_ids)
    if test_size >= 1:
        n_valid = int(test_size)
    else:
        n_valid = int(round(len(utt_ids) * test_size))
        if test_size > 0 and n_valid == 0:
            n_valid = 1
    n_valid = min(n_valid, max(len(utt_ids) - 1, 0))
    order = np.random.default_rng(seed).permutation(len(utt_ids))
    valid = sorted(utt_ids[i] for i in order[:n_valid])
    valid_set = set(valid)
    train = [utt_id for utt_id in utt_ids if utt_id not in valid_set]
    return train, valid


def _remove_previous_outputs(outdir):
    """Delete the files an earlier run wrote, so stale utterances or statistics cannot leak in."""
    removed = 0
    for name in (STATS_NAME, F0_STATS_NAME, ENERGY_STATS_NAME):
        if (Path(outdir) / name).is_file():
            (Path(outdir) / name).unlink()
            removed += 1
    for split in SPLITS:
        for kind in PREPROCESS_KINDS:
            folder = Path(outdir) / split / kind.folder
            if folder.is_dir():
                for path in folder.glob(f"*-{kind.suffix}.npy"):
                    path.unlink()
                    removed += 1
        if (Path(outdir) / split / DURATIONS.folder).is_dir():
            logger.warning(
                "%s: durations from an earlier alignment are kept; rerun the aligner if features changed",
                Path(outdir) / split / DURATIONS.folder,
            )
    if removed:
        logger.info("removed %d files of an earlier run from %s", removed, outdir)


def preprocess_corpus(processor, config, outdir, n_cpus=None, test_size=0.05, seed=42, dataset=None):
    """Write a corpus into the dump layout: features, split, statistics, norm-feats, mapper, report.

    Args:
        processor: a tensorflow_tts.processor processor; its `items` are processed and its
            `rejected` metadata lines are reported as skipped.
        config: a PreprocessConfig.
        outdir: the dump folder.
        n_cpus: worker processes (default: all cores).
        test_size: fraction (or count) of utterances for the valid split.
        seed: seed of the train/valid split.
        dataset: corpus name, recorded in the report.

    Returns:
        The report dict also written to `outdir/preprocess_report.json`: `skipped` and
        `converted` (lists of `{"item", "reason"}`), `n_ok`, `n_train`, `n_valid`, ...
        `config` itself is written to `outdir/preprocess_config.yml`.
    """
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    n_cpus = n_cpus or os.cpu_count() or 1
    items = list(processor.items)
    skipped = [
        {"item": str(entry.get("item")), "reason": str(entry.get("reason"))} for entry in processor.rejected
    ]
    # The processor has already logged each rejected line.

    _remove_previous_outputs(outdir)
    staging_dir = outdir / ".preprocess-staging"
    shutil.rmtree(staging_dir, ignore_errors=True)
    staging_dir.mkdir()
    try:
        results, n_converted = [], 0
        n_workers = min(n_cpus, max(len(items), 1))
        logger.info("processing %d items with %d process(es)", len(items), n_workers)
        with logging_redirect_tqdm():
            progress = tqdm(total=len(items), desc="preprocess", unit="utt", disable=None)
            with contextlib.closing(progress):
                for result in _run_items(list(enumerate(items)), processor, config, staging_dir, n_workers):
                    if result["status"] == "skipped":
                        logger.warning("skipped %s: %s", result["item"], result["reason"])
                    elif result["conversions"]:
                        n_converted += 1
                        if n_converted <= MAX_LOGGED_CONVERSIONS:
                            logger.info("converted %s: %s", result["item"], "; ".join(result["conversions"]))
                        if n_converted == MAX_LOGGED_CONVERSIONS:
                            logger.info("further conversions are listed in %s only", outdir / REPORT_NAME)
                    results.append(result)
                    progress.update()
        results.sort(key=lambda result: result["index"])

        converted, ok = [], {}
        for result in results:
            if result["status"] == "ok" and result["utt_id"] in ok:
                first = ok[result["utt_id"]]
                reason = f"duplicate utterance id (item #{first['index']} already has it)"
                logger.warning("skipped %s: %s", result["item"], reason)
                result.update(status="skipped", reason=reason)
            if result["status"] == "skipped":
                skipped.append({"item": result["item"], "reason": result["reason"]})
                continue
            ok[result["utt_id"]] = result
            if result["conversions"]:
                converted.append({"item": result["item"], "reason": "; ".join(result["conversions"])})

        train, valid = split_utt_ids(list(ok), test_size, seed)
        for split, utt_ids in (("train", train), ("valid", valid)):
            split_dir = outdir / split
            for kind in PREPROCESS_KINDS:
                (split_dir / kind.folder).mkdir(parents=True, exist_ok=True)
            for utt_id in utt_ids:
                index = ok[utt_id]["index"]
                for kind in PREPROCESS_KINDS:
                    if kind is not NORM_MEL:
                        os.replace(_staging_path(staging_dir, index, kind), kind.path(split_dir, utt_id))
            save_utt_ids(outdir, split, utt_ids)
    finally:
        shutil.rmtree(staging_dir, ignore_errors=True)

    if train:
        mel_stats, f0_stats, energy_stats = compute_statistics(outdir / "train")
        save_statistics(outdir, mel_stats, f0_stats, energy_stats)
        normalize_dump(outdir, outdir, mel_stats)
    if ok:
        processor.save_pretrained(outdir)

    report = {
        "dataset": dataset,
        "n_items": len(items) + len(processor.rejected),
        "n_ok": len(ok),
        "n_train": len(train),
        "n_valid": len(valid),
        "seconds_ok": round(sum(result["seconds"] for result in ok.values()), 3),
        "skipped": skipped,
        "converted": converted,
    }
    with open(outdir / REPORT_NAME, "w", encoding="utf-8") as stream:
        json.dump(report, stream, indent=2, ensure_ascii=False)
    with open(outdir / CONFIG_NAME, "w", encoding="utf-8") as stream:
        yaml.safe_dump(config.to_dict(), stream, sort_keys=False)
    return report
