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


def add_shard_flags(parser):
    """--shard_mb and --utterances_per_shard: the size of TFRecord shards (tensorflow_tts.dump.shards)."""
    from tensorflow_tts.dump.shards import DEFAULT_SHARD_MB

    parser.add_argument("--shard_mb", type=float, default=DEFAULT_SHARD_MB,
                        help=f"target size of a shard group (all feature kinds) in MB (default {DEFAULT_SHARD_MB})")
    parser.add_argument("--utterances_per_shard", type=int, default=None,
                        help="cut shards by utterance count instead of --shard_mb")


def shard_size(args):
    """The keyword arguments of dump.shards.shard_dump from the flags of add_shard_flags."""
    return dict(shard_bytes=int(args.shard_mb * (1 << 20)), utterances_per_shard=args.utterances_per_shard)
