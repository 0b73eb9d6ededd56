"""Writing a corpus into the dump: what `tensorflow-tts-preprocess` runs.

Every item is read, trimmed and featurised in worker processes; a broken item is
skipped or converted with its reason in `preprocess_report.json`, and the rest goes on.
"""

import contextlib
import json
import logging
import multiprocessing
import os
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
from tensorflow_tts.dump.layout import (
    CONFIG_NAME,
    DURATIONS,
    ENERGY,
    ENERGY_STATS_NAME,
    F0,
    F0_STATS_NAME,
    IDS,
    MEL,
    NORM_MEL,
    PREPROCESS_KINDS,
    REPORT_NAME,
    SHARDS_FOLDER,
    SPEAKER_ID,
    SPLITS,
    STATS_NAME,
    WAVE,
    is_safe_utt_id,
    save_utt_ids,
)
from tensorflow_tts.dump.statistics import (
    compute_statistics,
    normalize_dump,
    save_statistics,
)

logger = logging.getLogger(__name__)

# Converted items are logged one line each up to this many; a corpus recorded at another
# rate would otherwise log every file. The report always lists them all.
MAX_LOGGED_CONVERSIONS = 20




































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
        # A stale shard index would make readers take the split for a sharded one.
        shards = Path(outdir) / split / SHARDS_FOLDER
        if shards.is_dir():
            shutil.rmtree(shards)
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
        processor.save_mapper(outdir / processor.mapper_file_name())

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
