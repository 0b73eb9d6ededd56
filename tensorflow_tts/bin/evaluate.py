"""tensorflow-tts-evaluate: objective metrics of synthesized speech against the recordings.

    tensorflow-tts-evaluate --reference LJSpeech-1.1/wavs --synthesized exp/predictions \\
        --metrics mcd log_f0_rmse vuv_error --out report.json

Files pair by utterance id: `<id>.wav` (any format soundfile reads), or a dump's
`wavs/<id>-wave.npy` (a dump split folder may be given; the rate comes from the dump's
preprocess_config.yml). Synthesized audio at another rate is resampled to the recording's.
"""

import argparse
import logging
import sys
from pathlib import Path

from tensorflow_tts.bin.cli import add_verbose_flag, load_preprocess_config, setup_logging
from tensorflow_tts.configs import PreprocessConfig
from tensorflow_tts.dump import layout
from tensorflow_tts.metrics.evaluation import (
    METRIC_NAMES,
    METRICS,
    Source,
    evaluate_sources,
    format_summary,
    summarize,
    write_report,
)

logger = logging.getLogger("tensorflow_tts.evaluate")

AUDIO_SUFFIXES = (".wav", ".flac", ".ogg", ".aiff", ".aif")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="tensorflow-tts-evaluate",
        description="Score synthesized utterances against their recordings (MCD, log-F0 RMSE, V/UV error, "
        "PESQ-WB, STOI, MR-STFT distance, log-mel L1); prints mean, median and the 95 % confidence interval of the mean per metric and "
        "writes per-utterance scores as JSON and CSV.",
        epilog="metrics: " + "; ".join(f"{metric.name}: {metric.description}, {metric.better} is better"
                                       for metric in METRICS),
    )
    parser.add_argument("--reference", required=True, type=Path, help="folder of recordings (wav files or a dump's wavs/)")
    parser.add_argument("--synthesized", required=True, type=Path, help="folder of synthesized audio, same utterance ids")
    parser.add_argument("--metrics", nargs="+", default=list(METRIC_NAMES), choices=METRIC_NAMES, metavar="METRIC",
                        help=f"any of {', '.join(METRIC_NAMES)} (default: all; "
                        f"{', '.join(metric.name for metric in METRICS if metric.same_length)} need same-length "
                        "copy-synthesis and are left out, with a note, for pairs whose lengths differ)")
    parser.add_argument("--out", type=Path, default=Path("evaluation.json"),
                        help="JSON report; the per-utterance CSV goes beside it (default: ./evaluation.json)")
    parser.add_argument("--config", type=Path, default=None,
                        help="preprocess YAML whose mel settings the log-mel L1 uses (default: the dump's, else the "
                        "LJSpeech defaults)")
    parser.add_argument("--max-frequency", type=float, default=None, metavar="HZ",
                        help="MCD over 0..HZ only, e.g. the mel fmax when the synthesized audio comes from "
                        "mels (Griffin-Lim leaves the band above it empty); default: the whole band")
    parser.add_argument("--sampling-rate", type=int, default=None,
                        help="rate of .npy waveforms outside a dump (a dump's own rate is read from it)")
    add_verbose_flag(parser)
    return parser.parse_args(argv)


def dump_config_path(folder):
    """The preprocess_config.yml of the dump `folder` lies in (a split, its wavs/ or the dump), or None."""
    for candidate in (folder, *list(folder.parents)[:2]):
        if (candidate / layout.CONFIG_NAME).is_file():
            return candidate / layout.CONFIG_NAME
    return None


def list_sources(folder, npy_rate, problems):
    """{utt_id: Source} of the audio files in `folder` (or in its wavs/ when it is a dump split).

    Files with two sources for one id are named in `problems` and the first is kept.
    """
    if (folder / layout.WAVE.folder).is_dir() and not any(path.suffix.lower() in AUDIO_SUFFIXES for path in folder.iterdir()):
        folder = folder / layout.WAVE.folder
    sources = {}
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() in AUDIO_SUFFIXES:
            utt_id, source = path.stem, Source(path)
        elif path.suffix == ".npy":
            utt_id, source = layout.WAVE.utt_id_of(path.name) or path.stem, Source(path, npy_rate)
        else:
            continue
        if utt_id in sources:
            problems.append(f"{utt_id}: two files in {folder} ({sources[utt_id].path.name}, {path.name}); "
                            f"{sources[utt_id].path.name} is used")
            continue
        sources[utt_id] = source
    return sources


def npy_rate_of(folder, args):
    """The rate of .npy waveforms in `folder`: its dump's, else --sampling-rate; None when neither."""
    config_path = dump_config_path(folder)
    if config_path is not None:
        config = load_preprocess_config(config_path, logger)
        return None if config is None else config.sampling_rate
    return args.sampling_rate


def main(argv=None):
    args = parse_args(argv)
    setup_logging(args.verbose)
    for folder in (args.reference, args.synthesized):
        if not folder.is_dir():
            logger.error("%s: not a folder", folder)
            return 2
    problems, sources = [], []
    for folder in (args.reference, args.synthesized):
        listing = list_sources(folder, npy_rate_of(folder, args), problems)
        unrated = [source.path.name for source in listing.values() if source.path.suffix == ".npy" and not source.stored_rate]
        if unrated:
            logger.error("%s: %d .npy waveform(s) (e.g. %s) but no dump %s above it: give --sampling-rate",
                         folder, len(unrated), unrated[0], layout.CONFIG_NAME)
            return 2
        if not listing:
            logger.error("%s: no audio files (%s or .npy)", folder, ", ".join(AUDIO_SUFFIXES))
            return 2
        sources.append(listing)
    for problem in problems:
        logger.warning("%s", problem)

    mel_config = mel_settings(args)
    if mel_config is None:
        return 2
    rows, unusable = evaluate_sources(*sources, metrics=args.metrics, mel_config=mel_config,
                                      max_frequency=args.max_frequency)
    problems += unusable
    summary = summarize(rows, args.metrics)
    print(f"{len(rows)} utterance(s) scored, {len(problems)} file(s) left out")
    print(format_summary(summary))
    csv_path = write_report(args.out, rows, summary, problems, args.metrics,
                            reference=str(args.reference), synthesized=str(args.synthesized))
    print(f"per-utterance scores: {args.out}, {csv_path}")
    return 0 if rows else 1


def mel_settings(args):
    """The PreprocessConfig whose mel settings the log-mel L1 uses, or None after logging why it is invalid."""
    path = args.config or dump_config_path(args.reference) or dump_config_path(args.synthesized)
    return PreprocessConfig() if path is None else load_preprocess_config(path, logger)


if __name__ == "__main__":
    sys.exit(main())
