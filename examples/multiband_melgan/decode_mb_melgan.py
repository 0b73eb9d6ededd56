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

import sys

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)
from tensorflow_tts.recipes.vocoder import decode_main


def main(argv=None):
    return decode_main(argv, __doc__)


if __name__ == "__main__":
    sys.exit(main())
