"""Write the built-in aligner's durations into a dump: DUMP/<split>/durations/<utt>-durations.npy.

    python examples/fastspeech2/extract_durations.py --dump-dir ./dump \
        --checkpoint ./exp/fastspeech2/checkpoints --config examples/fastspeech2/conf/fastspeech2.v1.yaml

The durations (int32, one per token) sum exactly to each utterance's mel frames. With them
in the dump, FastSpeech (and FastSpeech2 with `aligner_params: {enabled: false}`) train
without the aligner.

The recipe is `tensorflow_tts.recipes.durations.extract_durations_main`.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # run from a checkout

from tensorflow_tts.recipes.durations import extract_durations_main as main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
