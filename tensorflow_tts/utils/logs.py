"""Logging set-up for every script and console command: one `--verbose` flag, one format."""

import logging
import sys

LEVELS = {0: logging.WARNING, 1: logging.INFO, 2: logging.DEBUG}


def add_verbose_flag(parser):
    parser.add_argument("--verbose", type=int, default=1, choices=tuple(LEVELS), help="0 warnings, 1 info, 2 debug")


def setup_logging(verbose):
    """Log to stderr at the level `--verbose` asks for (the package's level, even if logging is set up)."""
    level = LEVELS[verbose]
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    logging.getLogger("tensorflow_tts").setLevel(level)
    logging.getLogger("tensorflow").setLevel(max(level, logging.WARNING))  # its INFO lines repeat per replica
