"""tensorflow-tts-normalize: write norm-feats from raw-feats with the train statistics.

    tensorflow-tts-normalize --rootdir ./dump_ljspeech --outdir ./dump_ljspeech \
        --config preprocess/ljspeech_preprocess.yaml --stats ./dump_ljspeech/stats.npy
"""

import argparse
import logging
import sys
from pathlib import Path

from tensorflow_tts.bin.cli import add_preprocess_flags, load_preprocess_config, setup_logging
from tensorflow_tts.dump.layout import STATS_NAME
from tensorflow_tts.dump.statistics import load_mel_statistics, normalize_dump

logger = logging.getLogger("tensorflow_tts.normalize")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="tensorflow-tts-normalize",
        description="Normalise the log-mel features of every split (DUMP/train, DUMP/valid) "
        "with the mean and standard deviation in stats.npy.",
    )
    add_preprocess_flags(parser, rootdir_help="the dump folder (or one split folder)", outdir_help="where norm-feats go, normally the dump folder")
    parser.add_argument("--stats", type=Path, default=None, help=f"mel statistics (default: ROOTDIR/{STATS_NAME})")
    parser.add_argument("--dataset", default=None, help="accepted for compatibility with older commands; unused")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    setup_logging(args.verbose)
    config = load_preprocess_config(args.config, logger)
    if config is None:
        return 2
    if not args.rootdir.is_dir():
        logger.error("--rootdir %s: no such folder", args.rootdir)
        return 2
    stats_path = args.stats if args.stats is not None else args.rootdir / STATS_NAME
    if not stats_path.is_file():
        logger.error("--stats %s: no such file; run tensorflow-tts-compute-statistics first", stats_path)
        return 1
    try:
        mel_stats = load_mel_statistics(stats_path, config.num_mels)
        counts = normalize_dump(args.rootdir, args.outdir, mel_stats)
    except (OSError, ValueError) as error:
        logger.error("%s", error)
        return 1
    for split, count in counts.items():
        logger.info("normalised %d utterances of %s", count, split)
    return 0


if __name__ == "__main__":
    sys.exit(main())
