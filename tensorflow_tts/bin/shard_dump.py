"""tensorflow-tts-shard-dump: convert a per-utterance `.npy` dump to TFRecord shards (docs/dump_layout.md).

    tensorflow-tts-shard-dump --rootdir ./dump_ljspeech --outdir ./dump_ljspeech_shards
"""

import argparse
import logging
import sys
from pathlib import Path

from tensorflow_tts.bin.cli import add_shard_flags, add_verbose_flag, setup_logging, shard_size
from tensorflow_tts.dump.layout import DumpError
from tensorflow_tts.dump.shards import shard_dump

logger = logging.getLogger("tensorflow_tts.shard_dump")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="tensorflow-tts-shard-dump",
        description="Pack the .npy features of every split of a dump into TFRecord shards with one index per split; "
        "every dataset reads either layout.",
    )
    parser.add_argument("--rootdir", required=True, type=Path, help="the .npy dump folder")
    parser.add_argument("--outdir", type=Path, default=None, help="the sharded dump folder (default: ROOTDIR)")
    parser.add_argument("--remove_npy", action="store_true", help="delete the .npy folders once a split is sharded")
    add_shard_flags(parser)
    add_verbose_flag(parser)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    setup_logging(args.verbose)
    if not args.rootdir.is_dir():
        logger.error("--rootdir %s: no such folder", args.rootdir)
        return 2
    try:
        shard_dump(args.rootdir, args.outdir, remove_npy=args.remove_npy, **shard_size(args))
    except (DumpError, OSError) as error:
        logger.error("%s", error)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
