"""Checking a dump split before an acoustic model trains on it: which utterances are usable, and why not."""

import dataclasses
import logging
from pathlib import Path

import numpy as np

from tensorflow_tts.dump.layout import (
    DURATIONS,
    IDS,
    MEL_KINDS,
    NORM_MEL,
    SPEAKER_ID,
    DumpError,
    split_utt_ids,
)

logger = logging.getLogger(__name__)


class DumpCheckError(DumpError):
    """A dump that an acoustic model cannot be trained on as it is (the message says why and the fix)."""


def _num_rows(path):
    """First dimension of a .npy array, read from its header only."""
    array = np.load(path, mmap_mode="r", allow_pickle=False)
    return int(array.shape[0]) if array.ndim else 0


@dataclasses.dataclass
class ScreeningReport:
    """What `screen_utterances` kept and why it left the rest out."""

    kept: list
    skipped: dict  # utt_id -> reason
    fixed: dict  # utt_id -> (duration total, mel length): repaired in the training graph

    def log(self, split_dir):
        for utt_id, reason in list(self.skipped.items())[:20]:
            logger.warning("%s: skipping %s: %s", split_dir, utt_id, reason)
        if len(self.skipped) > 20:
            logger.warning("%s: ... and %d more skipped", split_dir, len(self.skipped) - 20)
        if self.fixed:
            examples = ", ".join(f"{utt_id} ({total} vs {length})" for utt_id, (total, length) in list(self.fixed.items())[:5])
            logger.warning(
                "%s: %d utterance(s) have durations that do not sum to their mel length; the last "
                "tokens are adjusted to fit (e.g. %s)",
                split_dir,
                len(self.fixed),
                examples,
            )


def screen_utterances(dump_dir, split, *, mel_folder=NORM_MEL.folder, with_durations=False, n_speakers=None,
                      vocab_size=None, max_fix_frames=None, need_frames_per_token=False):
    """Check the utterances of a dump split before training an acoustic model on them.

    Reads only small files and `.npy` headers. An utterance is skipped (with the reason)
    when its token sequence is empty, when its durations have a different length than its
    tokens, when its durations total is off by more than ``max_fix_frames`` (None: any
    total is repaired), or, with ``need_frames_per_token``, when it has fewer frames than
    tokens (an aligner cannot give every token a frame). A speaker id outside
    ``[0, n_speakers)`` or a token id outside ``[0, vocab_size)`` is an error: the model
    cannot embed it.

    Returns: ScreeningReport.
    """
    dump_dir = Path(dump_dir)
    split_dir = dump_dir / split
    mel = MEL_KINDS[mel_folder]
    kept, skipped, fixed = [], {}, {}
    for utt_id in split_utt_ids(dump_dir, split):
        ids_path = IDS.path(split_dir, utt_id)
        mel_path = mel.path(split_dir, utt_id)
        if not ids_path.is_file() or not mel_path.is_file():
            continue  # the dataset reports missing files itself
        num_tokens = _num_rows(ids_path)
        num_frames = _num_rows(mel_path)
        if num_tokens == 0:
            skipped[utt_id] = "empty token sequence"
            continue
        if vocab_size is not None:
            largest = int(np.load(ids_path).max())
            if largest >= vocab_size:
                raise DumpCheckError(
                    f"{ids_path}: token id {largest} is outside [0, {vocab_size}); set vocab_size in the "
                    "model params to the number of symbols of the processor (see the dump's *_mapper.json)"
                )
        if n_speakers is not None:
            speaker_path = SPEAKER_ID.path(split_dir, utt_id)
            if speaker_path.is_file():
                speaker_id = int(np.load(speaker_path).reshape(-1)[0])
                if not 0 <= speaker_id < n_speakers:
                    raise DumpCheckError(
                        f"{speaker_path}: speaker id {speaker_id} is outside [0, {n_speakers}); set "
                        f"n_speakers in the model params to at least {speaker_id + 1} (the number of "
                        "speakers in the processor's speakers_map)"
                    )
        if with_durations:
            duration_path = DURATIONS.path(split_dir, utt_id)
            if not duration_path.is_file():
                skipped[utt_id] = "no durations file (write them with examples/fastspeech2/extract_durations.py)"
                continue
            durations = np.load(duration_path)
            if durations.shape != (num_tokens,):
                skipped[utt_id] = f"{durations.shape[0] if durations.ndim else 0} durations for {num_tokens} tokens"
                continue
            total = int(np.maximum(durations, 0).sum())
            if total != num_frames:
                if max_fix_frames is not None and abs(total - num_frames) > max_fix_frames:
                    skipped[utt_id] = (
                        f"durations sum to {total} frames but the mel has {num_frames} "
                        f"(more than {max_fix_frames} apart)"
                    )
                    continue
                fixed[utt_id] = (total, num_frames)
        elif need_frames_per_token and num_frames < num_tokens:
            skipped[utt_id] = f"{num_frames} mel frames for {num_tokens} tokens (fewer frames than tokens)"
            continue
        kept.append(utt_id)
    report = ScreeningReport(kept, skipped, fixed)
    report.log(split_dir)
    if not kept:
        raise DumpCheckError(f"{split_dir}: no usable utterance ({len(skipped)} skipped, e.g. {next(iter(skipped.items()), None)})")
    return report
