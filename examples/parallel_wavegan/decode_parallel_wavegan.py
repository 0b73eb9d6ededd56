"""Turn mel spectrograms into wav files with a trained Parallel WaveGAN.

    python examples/parallel_wavegan/decode_parallel_wavegan.py \
        --rootdir ./dump/valid/ --outdir ./prediction/parallel_wavegan.v1/ \
        --checkpoint ./examples/parallel_wavegan/exp/train.parallel_wavegan.v1/checkpoints/generator-400000.h5 \
        --config ./examples/parallel_wavegan/exp/train.parallel_wavegan.v1/config.yml --use-norm 1

The generator draws fresh Gaussian noise for every utterance, as in 1.8. --rootdir is a
dump split or a folder of `*.npy` mels; --use-norm and --stats work as for
examples/multiband_melgan/decode_mb_melgan.py.
"""

import sys

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)
from tensorflow_tts.recipes.vocoder import decode_main


def main(argv=None):
    return decode_main(argv, __doc__)


if __name__ == "__main__":
    sys.exit(main())
