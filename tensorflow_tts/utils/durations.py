"""Token durations: repairing their totals, per-token averages of frame values, and dump checks.

Durations are int frames per token; for an utterance they must sum to its mel length
(docs/dump_layout.md). Aligners, TextGrids and old teachers sometimes miss by a frame or
two; `fix_durations` repairs that by moving the end of the last tokens.
"""

import dataclasses
import logging
from pathlib import Path

import numpy as np
import tensorflow as tf

logger = logging.getLogger(__name__)


class DumpCheckError(ValueError):
    """A dump that an acoustic model cannot be trained on as it is (the message says why and the fix)."""


def _num_rows(path):
    """First dimension of a .npy array, read from its header only."""
    array = np.load(path, mmap_mode="r", allow_pickle=False)
    return int(array.shape[0]) if array.ndim else 0


# ----------------------------------------------------------------------------- totals


def fix_durations(durations, mel_length):
    """Make one utterance's durations sum to ``mel_length`` (numpy).

    Token ends past the mel length are cut to it, and the last token is stretched to end
    exactly on it, so a total that is too long shortens the last tokens and a total that
    is too short lengthens the last one. Every duration stays >= 0.

    Args: durations (T,) int, T >= 1; mel_length: int >= 0. Returns (T,) int32.
    """
    durations = np.maximum(np.asarray(durations, dtype=np.int64), 0)
    if durations.size == 0:
        raise ValueError("cannot fix the durations of an empty token sequence")
    ends = np.minimum(np.cumsum(durations), mel_length)
    ends[-1] = mel_length
    return np.diff(ends, prepend=0).astype(np.int32)


def fix_batch_durations(durations, input_lengths, mel_lengths):
    """`fix_durations` for a padded batch in TensorFlow.

    Args: durations (B, T) int, input_lengths (B,), mel_lengths (B,).
    Returns: (B, T) int32 summing to mel_lengths, 0 at padded tokens.
    """
    durations = tf.maximum(tf.cast(durations, tf.int32), 0)
    mel_lengths = tf.cast(mel_lengths, tf.int32)
    input_lengths = tf.cast(input_lengths, tf.int32)
    num_tokens = tf.shape(durations)[1]
    token_mask = tf.sequence_mask(input_lengths, num_tokens)
    durations = tf.where(token_mask, durations, 0)
    ends = tf.minimum(tf.cumsum(durations, axis=1), mel_lengths[:, tf.newaxis])
    is_last = tf.range(num_tokens)[tf.newaxis, :] >= (input_lengths - 1)[:, tf.newaxis]
    ends = tf.where(is_last, mel_lengths[:, tf.newaxis], ends)
    fixed = ends - tf.pad(ends[:, :-1], [[0, 0], [1, 0]])
    return tf.where(token_mask, fixed, 0)


# ----------------------------------------------------------------------------- per-token values


def average_by_durations(values, durations):
    """Mean of the non-zero frame values over each token's frames (TensorFlow).

    Zeros mark unvoiced (F0) or silent (energy) frames and are left out of the mean; a
    token without a non-zero frame gets 0, as those frames do.

    Args:
        values: (B, F) float, one value per mel frame (0 past each item's end).
        durations: (B, T) int, frames per token.

    Returns:
        (B, T) float32 per-token means.
    """
    values = tf.cast(values, tf.float32)
    durations = tf.maximum(tf.cast(durations, tf.int32), 0)
    num_frames = tf.shape(values)[1]
    num_tokens = tf.shape(durations)[1]
    ends = tf.cumsum(durations, axis=1)
    frames = tf.range(num_frames)
    token_index = tf.reduce_sum(tf.cast(ends[:, tf.newaxis, :] <= frames[tf.newaxis, :, tf.newaxis], tf.int32), axis=2)
    # Frames past the total get index T: one_hot gives them an all-zero row.
    membership = tf.one_hot(token_index, num_tokens, dtype=tf.float32)  # (B, F, T)
    voiced = tf.cast(tf.not_equal(values, 0.0), tf.float32)
    sums = tf.einsum("bf,bft->bt", values * voiced, membership)
    counts = tf.einsum("bf,bft->bt", voiced, membership)
    return tf.math.divide_no_nan(sums, counts)


def average_by_durations_numpy(values, durations):
    """`average_by_durations` for one utterance in numpy: values (F,), durations (T,) -> (T,)."""
    values = np.asarray(values, dtype=np.float64)
    result = np.zeros(len(durations), np.float32)
    start = 0
    for index, duration in enumerate(np.asarray(durations, dtype=np.int64)):
        segment = values[start : start + max(int(duration), 0)]
        voiced = segment[segment != 0.0]
        result[index] = voiced.mean() if voiced.size else 0.0
        start += max(int(duration), 0)
    return result


def normalize_nonzero(values, stats):
    """(value - mean) / std where value != 0; zeros stay 0. stats: [mean, std] (2,) or None."""
    if stats is None:
        return tf.cast(values, tf.float32)
    values = tf.cast(values, tf.float32)
    mean, std = float(stats[0]), float(stats[1])
    return tf.where(tf.not_equal(values, 0.0), (values - mean) / std, 0.0)


def read_stats(path):
    """[mean, std] from a stats_f0.npy / stats_energy.npy file, with an error naming it."""
    path = Path(path)
    if not path.is_file():
        raise DumpCheckError(f"{path}: no such statistics file; rerun tensorflow-tts-preprocess (it writes it)")
    stats = np.load(path).astype(np.float32).reshape(-1)
    if stats.shape != (2,) or not np.all(np.isfinite(stats)) or stats[1] <= 0:
        raise DumpCheckError(f"{path}: expected [mean, std > 0], got {stats.tolist()}")
    return stats


# ----------------------------------------------------------------------------- dump checks


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


def screen_utterances(dump_dir, split, *, mel_folder="norm-feats", with_durations=False, n_speakers=None,
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
    listing = dump_dir / f"{split}_utt_ids.npy"
    if listing.is_file():
        utt_ids = [str(utt_id) for utt_id in np.load(listing, allow_pickle=False).reshape(-1)]
    else:
        utt_ids = sorted(path.name[: -len("-ids.npy")] for path in (split_dir / "ids").glob("*-ids.npy"))
    kept, skipped, fixed = [], {}, {}
    for utt_id in utt_ids:
        ids_path = split_dir / "ids" / f"{utt_id}-ids.npy"
        mel_path = split_dir / mel_folder / f"{utt_id}-{mel_folder}.npy"
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
            speaker_path = split_dir / "speaker-ids" / f"{utt_id}-speaker-ids.npy"
            if speaker_path.is_file():
                speaker_id = int(np.load(speaker_path).reshape(-1)[0])
                if not 0 <= speaker_id < n_speakers:
                    raise DumpCheckError(
                        f"{speaker_path}: speaker id {speaker_id} is outside [0, {n_speakers}); set "
                        f"n_speakers in the model params to at least {speaker_id + 1} (the number of "
                        "speakers in the processor's speakers_map)"
                    )
        if with_durations:
            duration_path = split_dir / "durations" / f"{utt_id}-durations.npy"
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
