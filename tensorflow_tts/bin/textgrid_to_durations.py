"""tensorflow-tts-textgrid-to-durations: durations from TextGrids (e.g. Montreal Forced Aligner) into a dump.

    tensorflow-tts-textgrid-to-durations --textgrid-dir ./mfa_output --dump-dir ./dump \
        --sampling-rate 22050 --hop-size 256 --tier phones

For every utterance <utt> of the dump splits with a <textgrid-dir>/<utt>.TextGrid (also
searched one folder deep, as MFA writes speaker folders), writes
DUMP/<split>/durations/<utt>-durations.npy. The tier needs one interval per token id
(silences included), or one fewer (the EOS token then gets 0 frames). The features must
cover the same audio as the TextGrid: preprocess with trim_silence: false, or align the
trimmed audio.
"""

import argparse
import logging
import sys
from pathlib import Path

import numpy as np

from tensorflow_tts.alignment.textgrid import TextGridError, textgrid_to_durations
from tensorflow_tts.dump import layout
from tensorflow_tts.utils.logs import setup_logging

logger = logging.getLogger("tensorflow_tts.textgrid_to_durations")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="tensorflow-tts-textgrid-to-durations", description=__doc__.splitlines()[0])
    parser.add_argument("--textgrid-dir", required=True, type=Path)
    parser.add_argument("--dump-dir", required=True, type=Path)
    parser.add_argument("--sampling-rate", required=True, type=int)
    parser.add_argument("--hop-size", required=True, type=int)
    parser.add_argument("--tier", default="phones", help="the tier with one interval per token")
    parser.add_argument("--splits", nargs="+", default=["train", "valid"])
    parser.add_argument("--mel-folder", default=layout.MEL.folder, choices=sorted(layout.MEL_KINDS), help="features whose frame count the durations must sum to")
    return parser.parse_args(argv)


def convert_split(textgrids, dump_dir, split, args):
    """Write the durations of one split; returns (written, {utt_id: reason not written})."""
    split_dir = dump_dir / split
    written, problems = 0, {}
    mel = layout.MEL_KINDS[args.mel_folder]
    for utt_id in layout.IDS.utt_ids(split_dir):
        ids_path = layout.IDS.path(split_dir, utt_id)
        if utt_id not in textgrids:
            problems[utt_id] = "no TextGrid"
            continue
        mel_path = mel.path(split_dir, utt_id)
        num_frames = np.load(mel_path, mmap_mode="r").shape[0] if mel_path.is_file() else None
        num_tokens = np.load(ids_path, mmap_mode="r").shape[0]
        try:
            _, durations = textgrid_to_durations(
                textgrids[utt_id], args.sampling_rate, args.hop_size, args.tier, num_frames, num_tokens
            )
        except TextGridError as error:
            problems[utt_id] = str(error)
            continue
        layout.save_feature(layout.DURATIONS, split_dir, utt_id, durations)
        written += 1
    return written, problems


def main(argv=None):
    args = parse_args(argv)
    setup_logging(1)
    if not args.textgrid_dir.is_dir():
        logger.error("--textgrid-dir %s: no such folder", args.textgrid_dir)
        return 2
    textgrids = {path.stem: path for pattern in ("*.TextGrid", "*/*.TextGrid") for path in args.textgrid_dir.glob(pattern)}
    total = 0
    for split in args.splits:
        if not (args.dump_dir / split / layout.IDS.folder).is_dir():
            logger.error("%s: no ids/ folder; is --dump-dir a dump?", args.dump_dir / split)
            return 2
        written, problems = convert_split(textgrids, args.dump_dir, split, args)
        total += written
        for utt_id, reason in list(problems.items())[:20]:
            logger.warning("%s/%s: not converted: %s", split, utt_id, reason)
        logger.info("%s: %d durations written, %d utterance(s) not converted", split, written, len(problems))
    return 0 if total else 1


if __name__ == "__main__":
    sys.exit(main())
