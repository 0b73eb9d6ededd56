"""Synthesise mels of a dump split with a trained FastSpeech2 (predicted durations, F0, energy).

    python examples/fastspeech2/decode_fastspeech2.py --rootdir ./dump/valid --outdir ./predictions \
        --checkpoint ./exp/fastspeech2/checkpoints/model-200000.h5 \
        --config examples/fastspeech2/conf/fastspeech2.v1.yaml --batch-size 8

Writes <utt>-norm-feats.npy (or -raw-feats.npy with --use-norm 0), the mel after the postnet
[frames, num_mels], and <utt>.png (prediction above the reference when the split has it).

The recipe is `tensorflow_tts.recipes.fastspeech2.decode_main`.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # run from a checkout

from tensorflow_tts.recipes.fastspeech2 import decode_main as main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
