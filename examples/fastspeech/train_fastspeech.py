"""Train FastSpeech (v1) from the durations in a dump.

    python examples/fastspeech/train_fastspeech.py \
        --train-dir ./dump/train/ --dev-dir ./dump/valid/ --outdir ./exp/fastspeech \
        --config examples/fastspeech/conf/fastspeech.v1.yaml --use-norm 1 --mixed_precision 0

The dump needs DUMP/<split>/durations/ (examples/fastspeech2/extract_durations.py writes
them from the built-in aligner; a Tacotron2 teacher or TextGrids work as well).

The recipe is `tensorflow_tts.recipes.fastspeech.train_main`.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # run from a checkout

from tensorflow_tts.recipes.fastspeech import train_main as main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
