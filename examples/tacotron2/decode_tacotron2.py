"""Synthesise mels of a dump split with a trained Tacotron 2 (free-running, stop token).

    python examples/tacotron2/decode_tacotron2.py --rootdir ./dump/valid --outdir ./predictions \
        --checkpoint ./exp/tacotron2/checkpoints/model-65000.h5 \
        --config examples/tacotron2/conf/tacotron2.v1.yaml --batch-size 8 --win-front 3 --win-back 3

Writes <utt>-norm-feats.npy (or -raw-feats.npy with --use-norm 0), the mel after the postnet
[frames, num_mels] cut at the first stop, and <utt>.png (prediction above the reference when
the split has it, and the alignment). The code is tensorflow_tts/recipes/tacotron2.py.
"""

import os
import sys

# Runs from a checkout without installing the package.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tensorflow_tts.recipes.tacotron2 import decode_main  # noqa: E402

if __name__ == "__main__":
    sys.exit(decode_main())
