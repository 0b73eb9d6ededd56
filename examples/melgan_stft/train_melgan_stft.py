"""Train MelGAN with a multi-resolution STFT loss (MelGAN-STFT) on a dump.

    python examples/melgan_stft/train_melgan_stft.py \
        --train-dir ./dump/train/ --dev-dir ./dump/valid/ \
        --outdir ./examples/melgan_stft/exp/train.melgan_stft.v1/ \
        --config ./examples/melgan_stft/conf/melgan_stft.v1.yaml --use-norm 1

MR-STFT loss alone until `discriminator_train_start_steps`, then adversarial + feature
matching weighted by `lambda_adv`. To fine-tune a MelGAN, pass its generator with
--pretrained generator-N.h5. Decode with examples/multiband_melgan/decode_mb_melgan.py.
"""

import sys

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)
from tensorflow_tts.recipes.vocoder import train_main


def main(argv=None):
    return train_main(argv, __doc__, model_types=("melgan_generator",))


if __name__ == "__main__":
    sys.exit(main())
