"""What every console script shares: the --verbose flag, logging set-up, the dump I/O flags."""

from pathlib import Path

from tensorflow_tts.configs import ConfigError, PreprocessConfig
from tensorflow_tts.utils.logs import add_verbose_flag, setup_logging  # noqa: F401  (re-exported for the scripts)


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
