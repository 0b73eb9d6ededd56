"""Train Multi-band MelGAN against HiFi-GAN's multi-period + multi-scale discriminators (1.8's `multiband_melgan_hf`).

    python examples/multiband_melgan_hf/train_multiband_melgan_hf.py \
        --train-dir ./dump/train/ --dev-dir ./dump/valid/ \
        --outdir ./examples/multiband_melgan_hf/exp/train.multiband_melgan_hf.lju.v1/ \
        --config ./examples/multiband_melgan_hf/conf/multiband_melgan_hf.lju.v1.yml --use-norm 1

The generator trains on full-band and PQMF sub-band MR-STFT losses alone until
`discriminator_train_start_steps`, then adversarially; the YAML's `hifigan_discriminator_params`
block adds the multi-period discriminator to the multi-scale one. See README.md.
"""

import sys

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)
from tensorflow_tts.recipes.vocoder import train_main


def main(argv=None):
    return train_main(argv, __doc__, model_types=("multiband_melgan_generator",))


if __name__ == "__main__":
    sys.exit(main())
