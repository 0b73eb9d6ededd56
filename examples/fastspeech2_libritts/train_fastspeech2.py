"""Train multi-speaker FastSpeech2 on a LibriTTS dump; each utterance trains with its speaker id.

    python examples/fastspeech2_libritts/train_fastspeech2.py \
        --train-dir ./dump_libritts/train/ --dev-dir ./dump_libritts/valid/ \
        --outdir ./examples/fastspeech2_libritts/outdir_libri/ \
        --config ./examples/fastspeech2_libritts/conf/fastspeech2libritts.yaml --use-norm 1 \
        --f0-stat ./dump_libritts/stats_f0.npy --energy-stat ./dump_libritts/stats_energy.npy \
        --mixed_precision 1 --dataset_config preprocess/libritts_preprocess.yaml

The recipe is `tensorflow_tts.recipes.fastspeech2.train_main`, as for one speaker.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # run from a checkout

from tensorflow_tts.recipes.fastspeech2 import train_main as main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
