"""Synthesise mels of a LibriTTS dump split with a trained multi-speaker FastSpeech2.

    python examples/fastspeech2_libritts/decode_fastspeech2.py --rootdir ./dump_libritts/valid \
        --outdir ./predictions/libritts --checkpoint ./examples/fastspeech2_libritts/outdir_libri/checkpoints/ \
        --config ./examples/fastspeech2_libritts/conf/fastspeech2libritts.yaml [--speaker-id 3]

Each utterance is spoken by its own speaker, or every one by --speaker-id; <outdir>/speakers.tsv
lists the speaker of each <utt>-norm-feats.npy.

The recipe is `tensorflow_tts.recipes.fastspeech2.decode_main`.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # run from a checkout

from tensorflow_tts.recipes.fastspeech2 import decode_main as main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
