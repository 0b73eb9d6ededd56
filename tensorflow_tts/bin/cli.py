"""What every console script shares: the --verbose flag, logging set-up, the dump I/O flags."""

import logging
import sys
from pathlib import Path

from tensorflow_tts.configs import ConfigError, PreprocessConfig


def add_verbose_flag(parser):
    parser.add_argument("--verbose", type=int, default=1, choices=(0, 1, 2), help="0 warnings, 1 info, 2 debug")


def setup_logging(verbose):
    """Log to stderr at the level `--verbose` asks for (the package's level, even if logging is set up)."""
    level = {0: logging.WARNING, 1: logging.INFO, 2: logging.DEBUG}[verbose]
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    logging.getLogger("tensorflow_tts").setLevel(level)


def add_preprocess_flags(parser, rootdir_help, outdir_help):
    """--rootdir, --outdir, --config and --verbose, as the three preprocessing commands take them."""
    parser.add_argument("--rootdir", required=True, type=Path, help=rootdir_help)
    parser.add_argument("--outdir", required=True, type=Path, help=outdir_help)
    parser.add_argument("--config", required=True, type=Path, help="preprocess/<dataset>_preprocess.yaml")
    add_verbose_flag(parser)


def load_preprocess_config(path, logger):
    """The PreprocessConfig in `path`, or None after logging why it is invalid."""
    try:
        return PreprocessConfig.from_yaml(path)
    except ConfigError as error:
        logger.error("invalid config: %s", error)
        return None
