"""Scoring pairs of utterances (a recording and its synthesis) with every metric, and the summary.

Used by `tensorflow-tts-evaluate`; pairs can also be scored from Python:

    from tensorflow_tts.metrics import evaluate_pair, summarize
    scores, failures = evaluate_pair(recording, synthesized, 22050)
"""

import collections
import csv
import dataclasses
import json
import logging
import math
from pathlib import Path

import librosa
import numpy as np
import scipy.stats
import soundfile
from tqdm import tqdm

from tensorflow_tts.audio.load import RESAMPLE_TYPE, AudioError, load_audio
from tensorflow_tts.metrics.cepstral import cepstral_scores
from tensorflow_tts.metrics.perceptual import pesq_wb, stoi
from tensorflow_tts.metrics.signals import MetricError
from tensorflow_tts.metrics.spectral import log_mel_l1, mr_stft_distance

logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class Metric:
    name: str
    description: str  # what it measures and its unit
    better: str  # "lower" or "higher"
    group: str  # the computation that yields it (a key of GROUPS)
    same_length: bool  # needs copy-synthesis (same length as the recording)


METRICS = (
    Metric("mcd", "mel-cepstral distortion (dB), DTW-aligned", "lower", "cepstral", False),
    Metric("log_f0_rmse", "log-F0 RMSE (ln Hz) on frames voiced in both, DTW-aligned", "lower", "cepstral", False),
    Metric("vuv_error", "voiced/unvoiced disagreement (fraction of frames), DTW-aligned", "lower", "cepstral", False),
    Metric("pesq", "PESQ wide-band MOS-LQO (1.04-4.64)", "higher", "pesq", True),
    Metric("stoi", "STOI (0-1)", "higher", "stoi", True),
    Metric("mr_stft", "multi-resolution STFT distance (spectral convergence + log magnitude)", "lower", "mr_stft", True),
    Metric("log_mel_l1", "log10-mel L1, floored at -5", "lower", "log_mel_l1", True),
)
METRIC_NAMES = tuple(metric.name for metric in METRICS)
BY_NAME = {metric.name: metric for metric in METRICS}


def _cepstral(reference, synthesized, sampling_rate, mel_config, max_frequency):
    scores = cepstral_scores(reference, synthesized, sampling_rate, max_frequency=max_frequency)
    return {"mcd": scores.mcd, "log_f0_rmse": scores.log_f0_rmse, "vuv_error": scores.vuv_error}


def _mr_stft(reference, synthesized, sampling_rate, mel_config, max_frequency):
    return {"mr_stft": sum(mr_stft_distance(reference, synthesized))}


def _log_mel_l1(reference, synthesized, sampling_rate, mel_config, max_frequency):
    if mel_config is None:
        raise MetricError("log_mel_l1 needs the mel settings (mel_config, a PreprocessConfig)")
    if mel_config.sampling_rate != sampling_rate:
        try:
            mel_config = dataclasses.replace(mel_config, sampling_rate=sampling_rate)
        except ValueError as error:
            raise MetricError(f"the mel settings do not fit {sampling_rate} Hz audio: {error}") from None
    return {"log_mel_l1": log_mel_l1(reference, synthesized, mel_config)}


# group -> function(reference, synthesized, sampling_rate, mel_config, max_frequency) -> {metric name: value}
GROUPS = {
    "cepstral": _cepstral,
    "pesq": lambda reference, synthesized, rate, *_: {"pesq": pesq_wb(reference, synthesized, rate)},
    "stoi": lambda reference, synthesized, rate, *_: {"stoi": stoi(reference, synthesized, rate)},
    "mr_stft": _mr_stft,
    "log_mel_l1": _log_mel_l1,
}


def evaluate_pair(reference, synthesized, sampling_rate, metrics=METRIC_NAMES, mel_config=None, max_frequency=None):
    """Score one synthesized waveform against its recording.

    Args:
        reference, synthesized: float `[samples]` at `sampling_rate`.
        metrics: names from `METRIC_NAMES`.
        mel_config: a PreprocessConfig for the log-mel L1 (its mel settings; the rate is
            taken from `sampling_rate`); needed only when "log_mel_l1" is asked for.
        max_frequency: Hz; the MCD measures the band below it only (None: the whole band).

    Returns:
        `(scores, failures)`: {metric: float} for those computed, and {metric: one-line
        reason} for those that could not be (e.g. same-length metrics on lengths that differ).
    """
    scores, failures = {}, {}
    for group in dict.fromkeys(BY_NAME[name].group for name in metrics):
        try:
            values = GROUPS[group](reference, synthesized, sampling_rate, mel_config, max_frequency)
        except MetricError as error:
            values = {name: str(error) for name in metrics if BY_NAME[name].group == group}
            failures.update(values)
            continue
        scores.update({name: value for name, value in values.items() if name in metrics})
    return scores, failures


def interval_95(values):
    """The 95 % confidence interval of the mean (Student t); `(mean, mean)` for one value."""
    values = np.asarray(values, dtype=np.float64)
    mean = float(values.mean())
    if len(values) < 2:
        return mean, mean
    half = scipy.stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / math.sqrt(len(values))
    return mean - float(half), mean + float(half)


def summarize(rows, metrics=METRIC_NAMES):
    """{metric: {count, mean, median, ci95_low, ci95_high}} over the finite values of `rows`
    ({utt_id: {metric: value}}); metrics with no value are left out."""
    summary = {}
    for name in metrics:
        values = [row[name] for row in rows.values() if name in row and math.isfinite(row[name])]
        if values:
            low, high = interval_95(values)
            summary[name] = {"count": len(values), "mean": float(np.mean(values)), "median": float(np.median(values)),
                             "ci95_low": low, "ci95_high": high}
    return summary


def format_summary(summary):
    """The summary as a text table, one metric a line."""
    lines = [f"{'metric':<12}{'n':>5}{'mean':>10}{'median':>10}{'95 % CI of the mean':>24}  better"]
    for name, figures in summary.items():
        interval = f"[{figures['ci95_low']:.4f}, {figures['ci95_high']:.4f}]"
        lines.append(f"{name:<12}{figures['count']:>5}{figures['mean']:>10.4f}{figures['median']:>10.4f}"
                     f"{interval:>24}  {BY_NAME[name].better}")
    return "\n".join(lines)


def write_report(json_path, rows, summary, problems, metrics=METRIC_NAMES, **header):
    """Write the JSON report (header, summary, per-utterance scores, problems) and a CSV of
    the per-utterance scores beside it (same name, `.csv`); returns the CSV path.

    Args:
        rows: {utt_id: {metric: value, ..., "notes": str}}.
        problems: [one-line description of each file that could not be paired, read or scored].
    """
    json_path = Path(json_path)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    finite = {utt_id: {key: (value if not isinstance(value, float) or math.isfinite(value) else None)
                       for key, value in row.items()} for utt_id, row in rows.items()}
    report = {**header, "metrics": {name: BY_NAME[name].description for name in metrics}, "summary": summary,
              "utterances": finite, "problems": problems}
    json_path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    csv_path = json_path.with_suffix(".csv")
    with open(csv_path, "w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["utt_id", *metrics, "notes"])
        for utt_id, row in rows.items():
            writer.writerow([utt_id, *(_cell(row.get(name)) for name in metrics), row.get("notes", "")])
    return csv_path


def _cell(value):
    return "" if value is None or (isinstance(value, float) and not math.isfinite(value)) else f"{value:.6g}"


def read_waveform(path, sampling_rate, stored_rate=None):
    """One waveform as float32 `[samples]` at `sampling_rate`.

    Args:
        path: an audio file soundfile reads, or a `.npy` array of float samples.
        stored_rate: the rate of a `.npy` file's samples (they carry none).

    Returns:
        `(audio, conversions)`: the waveform and one-line notes of what was changed.

    Raises:
        AudioError: the file is missing, damaged, empty or not one waveform.
    """
    path = Path(path)
    if path.suffix != ".npy":
        return load_audio(path, sampling_rate)
    try:
        audio = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as error:
        raise AudioError(path, f"not a readable .npy array ({error})") from None
    audio = np.squeeze(audio)
    if audio.ndim != 1 or audio.size == 0 or not np.issubdtype(audio.dtype, np.floating):
        raise AudioError(path, f"expected a 1-D float waveform, got {audio.dtype} {list(audio.shape)}")
    if not np.all(np.isfinite(audio)):
        raise AudioError(path, "contains NaN or infinite samples")
    conversions = []
    if stored_rate != sampling_rate:
        conversions.append(f"resampled from {stored_rate} Hz to {sampling_rate} Hz")
        audio = librosa.resample(audio, orig_sr=stored_rate, target_sr=sampling_rate, res_type=RESAMPLE_TYPE)
    return np.ascontiguousarray(audio, dtype=np.float32), conversions


def native_rate(path, stored_rate=None):
    """The sampling rate of an audio file as stored (`stored_rate` for a `.npy` file).

    Raises:
        AudioError: soundfile cannot open the file.
    """
    if Path(path).suffix == ".npy":
        return stored_rate
    try:
        return soundfile.info(str(path)).samplerate
    except (soundfile.SoundFileError, RuntimeError, OSError) as error:
        raise AudioError(path, f"not a readable audio file ({error})") from None


@dataclasses.dataclass(frozen=True)
class Source:
    """One utterance's audio: a file soundfile reads, or a `.npy` waveform at `stored_rate` Hz."""

    path: Path
    stored_rate: int = None


def evaluate_sources(reference, synthesized, metrics=METRIC_NAMES, mel_config=None, max_frequency=None):
    """Score every utterance id present in both `{utt_id: Source}` maps, at the recording's rate.

    Nothing stops the run: ids with no partner, files that cannot be read and metrics that
    cannot be computed are each logged in one line and reported.

    Returns:
        `(rows, problems)`: {utt_id: {metric: value, "notes": str}} in id order, and a list
        of one-line descriptions of the files that could not be paired or read.
    """
    problems = [f"{utt_id}: no synthesized file for reference {reference[utt_id].path}"
                for utt_id in sorted(set(reference) - set(synthesized))]
    problems += [f"{utt_id}: no reference file for synthesized {synthesized[utt_id].path}"
                 for utt_id in sorted(set(synthesized) - set(reference))]
    for problem in problems:
        logger.warning("%s (left out)", problem)
    rows, conversions = {}, collections.Counter()
    for utt_id in tqdm(sorted(set(reference) & set(synthesized)), desc="[evaluate]", unit="utt"):
        try:
            rate = native_rate(reference[utt_id].path, reference[utt_id].stored_rate)
            recording, reference_changes = read_waveform(reference[utt_id].path, rate, reference[utt_id].stored_rate)
            synthesis, changes = read_waveform(synthesized[utt_id].path, rate, synthesized[utt_id].stored_rate)
        except AudioError as error:
            problems.append(f"{utt_id}: {error}")
            logger.warning("%s: %s (left out)", utt_id, error)
            continue
        conversions.update(changes)
        scores, failures = evaluate_pair(recording, synthesis, rate, metrics, mel_config, max_frequency)
        notes = [f"reference {change}" for change in reference_changes] + [f"synthesized {change}" for change in changes]
        for reason, names in _group_by_value(failures).items():
            notes.append(f"{', '.join(names)} not computed: {reason}")
            logger.warning("%s: %s not computed: %s", utt_id, ", ".join(names), reason)
        rows[utt_id] = {**scores, "notes": "; ".join(notes)}
    for change, count in conversions.items():
        logger.warning("%d synthesized file(s): %s", count, change)
    return rows, problems


def _group_by_value(mapping):
    groups = {}
    for key, value in mapping.items():
        groups.setdefault(value, []).append(key)
    return groups
