"""Durations from a trained Tacotron 2's teacher-forced alignments: DUMP/<split>/durations/<utt>-durations.npy.

    python examples/tacotron2/extract_duration.py --dump-dir ./dump \
        --checkpoint ./exp/tacotron2/checkpoints/model-65000.h5 \
        --config examples/tacotron2/conf/tacotron2.v1.yaml --use-norm 1 --batch-size 32

or one split at a time, as in TensorFlowTTS 1.8 (--outdir defaults to <rootdir>/durations):

    python examples/tacotron2/extract_duration.py --rootdir ./dump/train/ \
        --outdir ./dump/train/durations/ --checkpoint ... --config ... --win-front 3 --win-back 3

Each decoder step goes to its most attended token and counts for its r frames, cut to the
mel length, so the durations (int32, one per token) sum exactly to the mel frames. FastSpeech
and FastSpeech2 then train on them (docs/dump_layout.md). The code is
tensorflow_tts/recipes/tacotron2_extraction.py.
"""

import os
import sys

# Runs from a checkout without installing the package.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tensorflow_tts.recipes.tacotron2_extraction import durations_main  # noqa: E402

if __name__ == "__main__":
    sys.exit(durations_main())
