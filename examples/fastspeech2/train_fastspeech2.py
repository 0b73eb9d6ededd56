"""Train FastSpeech2 on a dump; with no durations in the dump, the built-in aligner learns them.

    python examples/fastspeech2/train_fastspeech2.py \
        --train-dir ./dump/train/ --dev-dir ./dump/valid/ --outdir ./exp/fastspeech2 \
        --config examples/fastspeech2/conf/fastspeech2.v1.yaml --use-norm 1 \
        --f0-stat ./dump/stats_f0.npy --energy-stat ./dump/stats_energy.npy --mixed_precision 1

The recipe is `tensorflow_tts.recipes.fastspeech2.train_main`.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # run from a checkout

from tensorflow_tts.recipes.fastspeech2 import train_main as main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
