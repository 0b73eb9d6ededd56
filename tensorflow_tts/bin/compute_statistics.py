"""tensorflow-tts-compute-statistics: mel, F0 and energy statistics of one dump split.

    tensorflow-tts-compute-statistics --rootdir ./dump_ljspeech/train --outdir ./dump_ljspeech \
        --config preprocess/ljspeech_preprocess.yaml
"""

import argparse
import logging
import sys

import numpy as np

from tensorflow_tts.bin.cli import add_preprocess_flags, load_preprocess_config, setup_logging
from tensorflow_tts.dump.statistics import compute_statistics, save_statistics

logger = logging.getLogger("tensorflow_tts.compute_statistics")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="tensorflow-tts-compute-statistics",
        description="Write stats.npy (mel mean/std per bin), stats_f0.npy and stats_energy.npy "
        "(mean/std over non-zero frames) for the features in one split folder.",
    )
    add_preprocess_flags(parser, rootdir_help="the split folder, normally DUMP/train", outdir_help="where the stats files go, normally DUMP")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    setup_logging(args.verbose)
    config = load_preprocess_config(args.config, logger)
    if config is None:
        return 2
    try:
        mel_stats, f0_stats, energy_stats = compute_statistics(args.rootdir)
    except (FileNotFoundError, ValueError) as error:
        logger.error("%s", error)
        return 1
    if mel_stats.shape[1] != config.num_mels:
        logger.error(
            "%s: the mel features have %d bins but the config says num_mels=%d",
            args.rootdir,
            mel_stats.shape[1],
            config.num_mels,
        )
        return 1
    save_statistics(args.outdir, mel_stats, f0_stats, energy_stats)
    logger.info(
        "wrote statistics of %s to %s (mel mean %.3f, f0 mean %.1f Hz, energy mean %.3f)",
        args.rootdir,
        args.outdir,
        float(np.mean(mel_stats[0])),
        f0_stats[0],
        energy_stats[0],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
