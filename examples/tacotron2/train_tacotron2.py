"""Train Tacotron 2 on a dump (teacher-forced, guided attention, scheduled teacher forcing).

    python examples/tacotron2/train_tacotron2.py \
        --train-dir ./dump/train/ --dev-dir ./dump/valid/ --outdir ./exp/tacotron2 \
        --config examples/tacotron2/conf/tacotron2.v1.yaml --use-norm 1 --mixed_precision 0

The recipe (trainer, losses, YAML, flags) is tensorflow_tts/recipes/tacotron2.py.
"""

import os
import sys

# Runs from a checkout without installing the package.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tensorflow_tts.recipes.tacotron2 import train_main  # noqa: E402

if __name__ == "__main__":
    sys.exit(train_main())
