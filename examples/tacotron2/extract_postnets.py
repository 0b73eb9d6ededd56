"""Teacher-forced Tacotron 2 mels (after the postnet), the targets of FastSpeech knowledge distillation.

    python examples/tacotron2/extract_postnets.py --dump-dir ./dump \
        --checkpoint ./exp/tacotron2/checkpoints/model-65000.h5 \
        --config examples/tacotron2/conf/tacotron2.v1.yaml --use-norm 1 --batch-size 32

or, as in TensorFlowTTS 1.8, one split at a time: --rootdir ./dump/train/ --outdir ./dump/train/.
Writes <split>/postnets/<utt>-postnet.npy: float32 [frames, num_mels], exactly the frames of
the utterance's mel (same normalisation as the mels the model was trained on). The code is
tensorflow_tts/recipes/tacotron2_extraction.py.
"""

import os
import sys

# Runs from a checkout without installing the package.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from tensorflow_tts.recipes.tacotron2_extraction import postnets_main  # noqa: E402

if __name__ == "__main__":
    sys.exit(postnets_main())
