"""Train Multi-band MelGAN (Yang et al., 2020) on a dump.

    python examples/multiband_melgan/train_multiband_melgan.py \
        --train-dir ./dump/train/ --dev-dir ./dump/valid/ \
        --outdir ./examples/multiband_melgan/exp/train.multiband_melgan.v1/ \
        --config ./examples/multiband_melgan/conf/multiband_melgan.v1.yaml --use-norm 1

The generator trains on full-band and PQMF sub-band MR-STFT losses alone until
`discriminator_train_start_steps`, then adversarially. See README.md.
"""

import sys

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)
from tensorflow_tts.recipes.vocoder import train_main


def main(argv=None):
    return train_main(argv, __doc__, model_types=("multiband_melgan_generator",))


if __name__ == "__main__":
    sys.exit(main())
