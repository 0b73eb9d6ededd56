"""Several utterances through one model call: padded token batches and exact batched vocoding.

An acoustic model of the FastSpeech family masks padding (id 0), so padded rows give each
utterance's own mels; its frames are the sum of its predicted durations. A vocoder pads
with reflection at both ends of its input, so zero-padded rows would change the last
samples of every shorter utterance. `vocode_batch` therefore takes, from one padded call,
only the samples whose receptive field ends inside the utterance, and makes the last
`context_frames` frames of every utterance from a second call over equal-length tail
windows that end at the utterance's real end: every sample sees what it sees alone.
"""

import numpy as np


def pad_rows(rows, dtype):
    """Sequences of different lengths (each (T_i, ...)) -> (B, max T, ...) zero-padded, lengths (B,)."""
    lengths = np.asarray([len(row) for row in rows], np.int32)
    shape = (len(rows), int(lengths.max())) + np.asarray(rows[0]).shape[1:]
    batch = np.zeros(shape, dtype)
    for index, row in enumerate(rows):
        batch[index, : len(row)] = row
    return batch, lengths


def vocode_batch(vocode, mels, hop_size, context_frames):
    """Vocode several mel sequences in two calls; the audio equals vocoding each alone.

    Args:
        vocode: callable, mels (B, F, num_mels) float32 -> audio that reshapes to (B, F * hop_size).
        mels: list of (F_i, num_mels) float32.
        hop_size: samples per frame.
        context_frames: the vocoder's receptive field in frames (see streaming.receptive_field_frames).

    Returns: list of float32 (F_i * hop_size,).
    """
    padded, lengths = pad_rows(mels, np.float32)
    heads = np.asarray(vocode(padded), np.float32).reshape(len(mels), -1)
    # The last `context` frames of each utterance, from a window with `context` frames of
    # left context that ends where the utterance ends; shorter utterances go whole.
    tail, window = context_frames, 2 * context_frames
    windowed = [index for index, length in enumerate(lengths) if length > window]
    tails = {}
    if windowed:
        windows = np.stack([mels[index][lengths[index] - window :] for index in windowed])
        audio = np.asarray(vocode(windows), np.float32).reshape(len(windowed), -1)
        tails = {index: audio[row, (window - tail) * hop_size :] for row, index in enumerate(windowed)}
    outputs = []
    for index, length in enumerate(lengths):
        if index in tails:
            outputs.append(np.concatenate([heads[index, : (length - tail) * hop_size], tails[index]]))
        else:
            outputs.append(np.asarray(vocode(mels[index][np.newaxis]), np.float32).reshape(-1))
    return outputs
