"""Dump statistics and normalisation: mel mean/std over the train split, F0/energy stats, normalising a dump.

`compute_statistics` and `normalize_dump` are what `tensorflow-tts-compute-statistics`
and `tensorflow-tts-normalize` run.
"""

import logging
from pathlib import Path

import numpy as np
from tqdm import tqdm

from tensorflow_tts.dump.layout import (
    ENERGY,
    ENERGY_STATS_NAME,
    F0,
    F0_STATS_NAME,
    MEL,
    NORM_MEL,
    STATS_NAME,
    load_feature,
    save_feature,
)
from tensorflow_tts.dump.screening import DumpCheckError

logger = logging.getLogger(__name__)




def read_stats(path):
    """[mean, std] from a stats_f0.npy / stats_energy.npy file, with an error naming it."""
    path = Path(path)
    if not path.is_file():
        raise DumpCheckError(f"{path}: no such statistics file; rerun tensorflow-tts-preprocess (it writes it)")
    stats = np.load(path).astype(np.float32).reshape(-1)
    if stats.shape != (2,) or not np.all(np.isfinite(stats)) or stats[1] <= 0:
        raise DumpCheckError(f"{path}: expected [mean, std > 0], got {stats.tolist()}")
    return stats


# A mel bin whose standard deviation is below this is constant over the train split;
# it is normalised with a standard deviation of 1 instead of being blown up.
MIN_STD = 1e-8


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
