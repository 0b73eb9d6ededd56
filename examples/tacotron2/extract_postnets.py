"""Teacher-forced Tacotron 2 mels (after the postnet), the targets of FastSpeech knowledge distillation.

    python examples/tacotron2/extract_postnets.py --dump-dir ./dump \
        --checkpoint ./exp/tacotron2/checkpoints/model-65000.h5 \
        --config examples/tacotron2/conf/tacotron2.v1.yaml --use-norm 1 --batch-size 32

or, as in TensorFlowTTS 1.8, one split at a time: --rootdir ./dump/train/ --outdir ./dump/train/.
Writes <split>/postnets/<utt>-postnet.npy: float32 [frames, num_mels], exactly the frames of
the utterance's mel (same normalisation as the mels the model was trained on).
"""

import logging
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import tensorflow_tts  # noqa: E402,F401

import numpy as np  # noqa: E402

from examples.tacotron2.extract_duration import (  # noqa: E402
    parse_extraction_args,
    run_extraction,
    screen_split,
    teacher_forced_batches,
)

logger = logging.getLogger("tensorflow_tts.extract_postnets")


def extract_split(model, dump_dir, split, outdir, use_norm, batch_size, window=None):
    """Write <outdir>/postnets/<utt>-postnet.npy for every usable utterance; returns the count."""
    config = model.config
    utt_ids, _ = screen_split(dump_dir, split, use_norm, config.reduction_factor, config.n_speakers, config.vocab_size)
    folder = Path(outdir) / "postnets"
    folder.mkdir(parents=True, exist_ok=True)
    written = 0
    for item in teacher_forced_batches(model, dump_dir, split, utt_ids, use_norm, batch_size, window):
        mel = item["mel_after"].astype(np.float32)
        np.save(folder / f"{item['utt_id']}-postnet.npy", mel, allow_pickle=False)
        written += 1
    logger.info("%s/%s: wrote %d postnet mels to %s", dump_dir, split, written, folder)
    return written


def parse_args(argv=None):
    return parse_extraction_args(
        argv, "Write teacher-forced Tacotron 2 postnet mels into a dump.",
        "with --rootdir: folder to hold postnets/ (default <rootdir>)",
        "mels go to <dump-dir>/<split>/postnets",
    )


def main(argv=None):
    return run_extraction(parse_args(argv), extract_split, lambda dump_dir, split: Path(dump_dir) / split)


if __name__ == "__main__":
    sys.exit(main())
