"""Synthesise mels of a dump split with a trained FastSpeech; same flags as decode_fastspeech2.py.

    python examples/fastspeech/decode_fastspeech.py --rootdir ./dump/valid --outdir ./predictions \
        --checkpoint ./exp/fastspeech/checkpoints/model-150000.h5 --config examples/fastspeech/conf/fastspeech.v1.yaml
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from examples.fastspeech2.decode_fastspeech2 import main as decode_main  # noqa: E402


def main(argv=None):
    return decode_main(argv, model_type="fastspeech")


if __name__ == "__main__":
    sys.exit(main())
