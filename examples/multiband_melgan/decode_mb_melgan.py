"""Turn mel spectrograms into wav files with a trained vocoder (any of this repo's: the config says which).

    python examples/multiband_melgan/decode_mb_melgan.py \
        --rootdir ./dump/valid/ --outdir ./prediction/multiband_melgan.v1/ \
        --checkpoint ./examples/multiband_melgan/exp/train.multiband_melgan.v1/checkpoints/generator-1000000.h5 \
        --config ./examples/multiband_melgan/exp/train.multiband_melgan.v1/config.yml --use-norm 1

--rootdir is a dump split (its norm-feats/ or raw-feats/, by --use-norm) or a folder of
`*.npy` mels such as FastSpeech2's decode output. --use-norm says whether those mels are
normalised. The vocoder's own input scale is the `use_norm` its training wrote into
config.yml; if the two differ, mels are (de)normalised with --stats (the dump's stats.npy).
"""

import argparse
import logging
import sys

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)
from tensorflow_tts.recipes.vocoder import int_flag, decode_mels, setup_logging

logger = logging.getLogger("tensorflow_tts.decode")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rootdir", required=True, help="dump split or folder of mel .npy files")
    parser.add_argument("--outdir", required=True, help="where <utt_id>.wav files are written")
    parser.add_argument("--checkpoint", required=True, help="generator-N.h5, ckpt-N or a checkpoints folder")
    parser.add_argument("--config", required=True, help="the training config.yml (or the recipe YAML)")
    parser.add_argument("--use-norm", type=int_flag, default=1, help="the mels are normalised (1) or raw (0)")
    parser.add_argument("--stats", default=None, help="stats.npy, needed when mel and vocoder scales differ")
    parser.add_argument("--batch-size", type=int, default=1, help="kept for 1.8 command lines; mels decode one by one")
    parser.add_argument("--verbose", type=int, default=1, choices=(0, 1, 2))
    args = parser.parse_args(argv)
    setup_logging(args.verbose)
    try:
        written = decode_mels(args.rootdir, args.outdir, args.config, args.checkpoint, bool(args.use_norm), args.stats)
    except (ValueError, FileNotFoundError) as error:
        logger.error("%s", error)
        return 2
    logger.info("wrote %d wav files to %s", len(written), args.outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
