"""Train Parallel WaveGAN (Yamamoto et al., 2020) on a dump.

    python examples/parallel_wavegan/train_parallel_wavegan.py \
        --train-dir ./dump/train/ --dev-dir ./dump/valid/ \
        --outdir ./examples/parallel_wavegan/exp/train.parallel_wavegan.v1/ \
        --config ./examples/parallel_wavegan/conf/parallel_wavegan.v1.yaml --use-norm 1

As TensorFlowTTS 1.8: MR-STFT loss alone until `discriminator_train_start_steps`, then
`lambda_adv` times the least-squares adversarial loss of the Parallel WaveGAN discriminator.
"""

import sys

import tensorflow_tts  # noqa: F401  (sets TF_USE_LEGACY_KERAS before tf.keras is touched)
from tensorflow_tts.recipes.vocoder import train_main


def main(argv=None):
    return train_main(argv, __doc__, model_types=("parallel_wavegan_generator",))


if __name__ == "__main__":
    sys.exit(main())
