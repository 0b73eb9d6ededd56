"""Train HiFi-GAN (Kong et al., 2020) on a dump.

    python examples/hifigan/train_hifigan.py \
        --train-dir ./dump/train/ --dev-dir ./dump/valid/ \
        --outdir ./examples/hifigan/exp/train.hifigan.v1/ \
        --config ./examples/hifigan/conf/hifigan.v1.yaml --use-norm 1

As TensorFlowTTS 1.8: MR-STFT loss alone until `discriminator_train_start_steps`, then the
multi-period + multi-scale discriminators with feature matching, weighted by `lambda_adv`.
Decode with examples/multiband_melgan/decode_mb_melgan.py.
"""

import sys

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)
from tensorflow_tts.models.hifigan import TFHifiGANDiscriminator  # noqa: F401  (1.8 users import it from here)
from tensorflow_tts.recipes.vocoder import train_main


def main(argv=None):
    return train_main(argv, __doc__, model_types=("hifigan_generator",))


if __name__ == "__main__":
    sys.exit(main())
