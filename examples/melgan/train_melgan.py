"""Train MelGAN (Kumar et al., 2019) on a dump.

    python examples/melgan/train_melgan.py \
        --train-dir ./dump/train/ --dev-dir ./dump/valid/ \
        --outdir ./examples/melgan/exp/train.melgan.v1/ \
        --config ./examples/melgan/conf/melgan.v1.yaml --use-norm 1

Adversarial (least-squares) + feature-matching losses from the first step, as melgan.v1.yaml.
Decode with examples/multiband_melgan/decode_mb_melgan.py (it reads any vocoder config).
"""

import sys

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)
from tensorflow_tts.recipes.vocoder import train_main


def main(argv=None):
    return train_main(argv, __doc__, model_types=("melgan_generator",))


if __name__ == "__main__":
    sys.exit(main())
