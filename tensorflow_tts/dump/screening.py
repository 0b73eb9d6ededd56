"""Checking a dump split before an acoustic model trains on it: which utterances are usable, and why not."""

import dataclasses
import logging
import typing
from pathlib import Path

import numpy as np

from tensorflow_tts.dump.layout import (
    DURATIONS,
    IDS,
    MEL_KINDS,
    NORM_MEL,
    SPEAKER_ID,
    DumpError,
    is_sharded,
    shard_index_path,
    split_utt_ids,
)
from tensorflow_tts.dump.shards import ShardIndex

logger = logging.getLogger(__name__)


class DumpCheckError(DumpError):
    """A dump that an acoustic model cannot be trained on as it is (the message says why and the fix)."""


def _num_rows(path):
    """First dimension of a .npy array, read from its header only."""
    array = np.load(path, mmap_mode="r", allow_pickle=False)
    return int(array.shape[0]) if array.ndim else 0


@dataclasses.dataclass
class _Facts:
    """What screening needs of one utterance; the optional ones are None when not asked for or absent."""

    utt_id: str
    num_tokens: int
    num_frames: int
    ids_source: str
    largest_token: typing.Optional[int] = None
    speaker_source: typing.Optional[str] = None
    speaker_id: typing.Optional[int] = None
    num_durations: typing.Optional[int] = None
    duration_total: typing.Optional[int] = None


def _npy_facts(dump_dir, split, mel, need_tokens, need_speaker, need_durations):
    """Facts of the utterances of a `.npy` split, reading small files and headers only."""
    split_dir = dump_dir / split
    for utt_id in split_utt_ids(dump_dir, split):
        ids_path = IDS.path(split_dir, utt_id)
        mel_path = mel.path(split_dir, utt_id)
        if not ids_path.is_file() or not mel_path.is_file():
            continue  # the dataset reports missing files itself
        fact = _Facts(utt_id, _num_rows(ids_path), _num_rows(mel_path), str(ids_path))
        if need_tokens and fact.num_tokens:
            fact.largest_token = int(np.load(ids_path).max())
        speaker_path = SPEAKER_ID.path(split_dir, utt_id)
        if need_speaker and speaker_path.is_file():
            fact.speaker_source, fact.speaker_id = str(speaker_path), int(np.load(speaker_path).reshape(-1)[0])
        duration_path = DURATIONS.path(split_dir, utt_id)
        if need_durations and duration_path.is_file():
            durations = np.load(duration_path)
            fact.num_durations = durations.shape[0] if durations.ndim else 0
            fact.duration_total = int(np.maximum(durations, 0).sum())
        yield fact


def _shard_facts(dump_dir, split, mel, need_tokens, need_speaker, need_durations):
    """Facts of the utterances of a sharded split, from its index alone."""
    index = ShardIndex.load(dump_dir / split)
    source = str(shard_index_path(dump_dir / split))
    tokens, frames, durations = index.rows_of(IDS), index.rows_of(mel), index.rows_of(DURATIONS)
    for position, utt_id in enumerate(index.utt_ids):
        if tokens[position] < 0 or frames[position] < 0:
            continue  # the dataset reports missing features itself
        fact = _Facts(str(utt_id), int(tokens[position]), int(frames[position]), f"{source} ({utt_id})")
        fact.largest_token = int(index.max_token_ids[position])
        if index.speaker_ids[position] >= 0:
            fact.speaker_source, fact.speaker_id = fact.ids_source, int(index.speaker_ids[position])
        if durations[position] >= 0:
            fact.num_durations, fact.duration_total = int(durations[position]), int(index.duration_totals[position])
        yield fact


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

    Reads only small files and `.npy` headers (the index alone for a sharded split). An
    utterance is skipped (with the reason) when its token sequence is empty, when its
    durations have a different length than its tokens, when its durations total is off
    by more than ``max_fix_frames`` (None: any total is repaired), or, with
    ``need_frames_per_token``, when it has fewer frames than tokens (an aligner cannot
    give every token a frame). A speaker id outside
    ``[0, n_speakers)`` or a token id outside ``[0, vocab_size)`` is an error: the model
    cannot embed it.

    Returns: ScreeningReport.
    """
    dump_dir = Path(dump_dir)
    split_dir = dump_dir / split
    facts = _shard_facts if is_sharded(split_dir) else _npy_facts
    kept, skipped, fixed = [], {}, {}
    for fact in facts(dump_dir, split, MEL_KINDS[mel_folder], vocab_size is not None, n_speakers is not None,
                      with_durations):
        utt_id, num_tokens, num_frames = fact.utt_id, fact.num_tokens, fact.num_frames
        if num_tokens == 0:
            skipped[utt_id] = "empty token sequence"
            continue
        if vocab_size is not None and fact.largest_token >= vocab_size:
            raise DumpCheckError(
                f"{fact.ids_source}: token id {fact.largest_token} is outside [0, {vocab_size}); set vocab_size in "
                "the model params to the number of symbols of the processor (see the dump's *_mapper.json)"
            )
        if n_speakers is not None and fact.speaker_id is not None and not 0 <= fact.speaker_id < n_speakers:
            raise DumpCheckError(
                f"{fact.speaker_source}: speaker id {fact.speaker_id} is outside [0, {n_speakers}); set "
                f"n_speakers in the model params to at least {fact.speaker_id + 1} (the number of "
                "speakers in the processor's speakers_map)"
            )
        if with_durations:
            if fact.num_durations is None:
                skipped[utt_id] = "no durations file (write them with examples/fastspeech2/extract_durations.py)"
                continue
            if fact.num_durations != num_tokens:
                skipped[utt_id] = f"{fact.num_durations} durations for {num_tokens} tokens"
                continue
            total = fact.duration_total
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
