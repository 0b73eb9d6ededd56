"""tensorflow-tts-preprocess: turn a corpus into the dump layout (docs/dump_layout.md).

    tensorflow-tts-preprocess --rootdir ./LJSpeech-1.1 --outdir ./dump_ljspeech \
        --config preprocess/ljspeech_preprocess.yaml --dataset ljspeech

From a checkout it also runs as a file, as TensorFlowTTS 1.8's guides call it:

    python tensorflow_tts/bin/preprocess.py --rootdir ./LJSpeech-1.1 --outdir ./dump/ljspeech \
        --config preprocess/ljspeech_preprocess.yaml
"""

import argparse
import logging
import os
import sys

if __name__ == "__main__" and not __package__:
    # Run as a file: Python put tensorflow_tts/bin/ on the path, not the checkout holding the
    # package, so `tensorflow_tts` would not import (or would be another installed copy).
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tensorflow_tts.bin.cli import (  # noqa: E402
    add_preprocess_flags,
    add_shard_flags,
    load_preprocess_config,
    setup_logging,
    shard_size,
)
from tensorflow_tts.dump.layout import REPORT_NAME, DumpError  # noqa: E402
from tensorflow_tts.dump.preprocess import preprocess_corpus  # noqa: E402
from tensorflow_tts.dump.shards import shard_dump  # noqa: E402

logger = logging.getLogger("tensorflow_tts.preprocess")


def _test_size(text):
    value = float(text)
    if value < 0 or (value >= 1 and not value.is_integer()):
        raise argparse.ArgumentTypeError(f"expected a fraction in [0, 1) or a whole number of utterances, got {text}")
    return value


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="tensorflow-tts-preprocess",
        description="Extract token ids, log-mel, F0 and energy from a corpus into a dump folder, "
        "split it into train/valid, and compute and apply the normalisation statistics.",
    )
    add_preprocess_flags(parser, rootdir_help="the corpus folder (e.g. LJSpeech-1.1)", outdir_help="the dump folder to write")
    parser.add_argument(
        "--dataset", default="ljspeech", help="corpus name: ljspeech (the default, as in 1.8), baker, libritts, ..."
    )
    parser.add_argument(
        "--n_cpus", type=int, default=None, help="worker processes (default: the YAML's num_workers, else all cores)"
    )
    parser.add_argument(
        "--test_size", type=_test_size, default=0.05, help="fraction (or number) of utterances for valid"
    )
    parser.add_argument("--seed", type=int, default=42, help="seed of the train/valid split")
    parser.add_argument(
        "--format", choices=("npy", "shards"), default="npy",
        help="npy: one file per feature per utterance; shards: TFRecord shards and one index per split "
        "(docs/dump_layout.md)",
    )
    add_shard_flags(parser)
    return parser.parse_args(argv)


def build_processor(dataset, rootdir):
    """The processor registered for `dataset`, reading the corpus in `rootdir`."""
    from tensorflow_tts.processor import PROCESSORS

    if dataset.lower() not in PROCESSORS:
        known = sorted({cls.dataset_name for cls in PROCESSORS.values()})
        raise ValueError(f"--dataset {dataset!r} is unknown; choose one of {', '.join(known)}")
    return PROCESSORS[dataset.lower()](data_dir=str(rootdir))


def main(argv=None):
    args = parse_args(argv)
    setup_logging(args.verbose)
    from tensorflow_tts.processor.base_processor import DataProcessorError

    config = load_preprocess_config(args.config, logger)
    if config is None:
        return 2
    if args.n_cpus is not None and args.n_cpus < 1:
        logger.error("--n_cpus: expected a number >= 1, got %d", args.n_cpus)
        return 2
    n_cpus = args.n_cpus or config.num_workers
    if not args.rootdir.is_dir():
        logger.error("--rootdir %s: no such folder", args.rootdir)
        return 2
    try:
        processor = build_processor(args.dataset, args.rootdir)
    except ValueError as error:
        logger.error("%s", error)
        return 2
    except (DataProcessorError, OSError) as error:
        logger.error("cannot read the %s corpus in %s: %s", args.dataset, args.rootdir, error)
        return 1

    report = preprocess_corpus(
        processor,
        config,
        args.outdir,
        n_cpus=n_cpus,
        test_size=args.test_size,
        seed=args.seed,
        dataset=args.dataset,
    )
    report_path = args.outdir / REPORT_NAME
    if report["n_ok"] == 0:
        logger.error(
            "no utterance could be preprocessed (%d skipped); reasons are in %s", len(report["skipped"]), report_path
        )
        return 1
    if args.format == "shards":
        try:
            shard_dump(args.outdir, remove_npy=True, **shard_size(args))
        except (DumpError, OSError) as error:
            logger.error("%s", error)
            return 1
    logger.info(
        "%d utterances (%.1f s of audio) -> %d train, %d valid; %d skipped, %d converted; report: %s",
        report["n_ok"],
        report["seconds_ok"],
        report["n_train"],
        report["n_valid"],
        len(report["skipped"]),
        len(report["converted"]),
        report_path,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
