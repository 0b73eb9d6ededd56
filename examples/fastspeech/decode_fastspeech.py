"""Synthesise mels of a dump split with a trained FastSpeech; same flags as decode_fastspeech2.py
(`tensorflow_tts.recipes.fastspeech.decode_main`).

    python examples/fastspeech/decode_fastspeech.py --rootdir ./dump/valid --outdir ./predictions \
        --checkpoint ./exp/fastspeech/checkpoints/model-150000.h5 --config examples/fastspeech/conf/fastspeech.v1.yaml
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # run from a checkout

from tensorflow_tts.recipes.fastspeech import decode_main as main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
