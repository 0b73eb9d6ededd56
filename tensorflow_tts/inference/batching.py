"""Several utterances through one model call: padded token batches and exact batched vocoding.

An acoustic model of the FastSpeech family masks padding (id 0), so padded rows give each
utterance its own mels; its frames are the sum of its predicted durations.

A vocoder is convolutional and pads with reflection at both ends of its input, so zero-padded
rows would change the last samples of every shorter utterance (and padding costs as much as
speech). `vocode_batch` instead vocodes all utterances joined end to end in one call, which is
exact for every frame whose receptive field stays inside its own utterance, and makes the
first and last `context_frames` frames of each from a second call over equal-length windows
at the utterance's real edges: every sample sees what it sees when vocoded alone.

Both calls are padded to a few bucketed shapes: TensorFlow's oneDNN kernels keep memory for
every input shape they meet, so unbounded shapes would make a server's memory grow. For the
same reason the synthesizer pads token ids to `bucket` lengths and rows (`pad_rows`).
"""

import numpy as np


def pad_rows(rows, dtype, length=0, count=0):
    """Sequences of different lengths (each (T_i, ...)) -> zero-padded (B', T', ...), lengths (B',).

    T' is the longest row or `length`, whichever is more; B' is len(rows) or `count`: the
    rows added have length 0.
    """
    lengths = np.asarray([len(row) for row in rows] + [0] * (count - len(rows)), np.int32)
    shape = (len(lengths), max(int(lengths.max()), length)) + np.asarray(rows[0]).shape[1:]
    batch = np.zeros(shape, dtype)
    for index, row in enumerate(rows):
        batch[index, : len(row)] = row
    return batch, lengths


def bucket(size, steps_per_octave=4):
    """`size` rounded up to one of `steps_per_octave` sizes per octave (at most 1/steps_per_octave more)."""
    if size <= 2 * steps_per_octave:
        return size
    step = (1 << (int(size - 1).bit_length() - 1)) // steps_per_octave
    return -(-size // step) * step


def _padded(array, size):
    """array (N, ...) with zeros appended along axis 0 up to `size`."""
    return np.concatenate([array, np.zeros((size - len(array),) + array.shape[1:], array.dtype)]) if size > len(array) else array


def vocode_batch(vocode, mels, hop_size, context_frames):
    """Vocode several mel sequences in two calls; the audio equals vocoding each alone.

    Args:
        vocode: callable, mels (B, F, num_mels) float32 -> audio that reshapes to (B, F * hop_size).
        mels: list of (F_i, num_mels) float32.
        hop_size: samples per frame.
        context_frames: the vocoder's receptive field in frames (see streaming.receptive_field_frames).

    Returns: list of float32 (F_i * hop_size,). Utterances of at most 2 * context_frames
    frames are vocoded alone (one call each).
    """
    edge, window = context_frames, 2 * context_frames
    mels = [np.asarray(row, np.float32) for row in mels]
    joined = [index for index, row in enumerate(mels) if len(row) > window]
    outputs = [None] * len(mels)
    if joined:
        # Zeros after the last utterance reach only frames that come from the edge windows.
        frames = np.concatenate([mels[index] for index in joined])
        middle = np.asarray(vocode(_padded(frames, bucket(len(frames)))[np.newaxis]), np.float32).reshape(-1)
        edges = np.stack([part for index in joined for part in (mels[index][:window], mels[index][-window:])])
        edge_audio = np.asarray(vocode(_padded(edges, bucket(len(edges), 1))), np.float32).reshape(-1, window * hop_size)
        start = 0
        for row, index in enumerate(joined):
            frames = len(mels[index])
            outputs[index] = np.concatenate([
                edge_audio[2 * row, : edge * hop_size],
                middle[(start + edge) * hop_size : (start + frames - edge) * hop_size],
                edge_audio[2 * row + 1, (window - edge) * hop_size :],
            ])
            start += frames
    for index, row in enumerate(mels):
        if outputs[index] is None:
            outputs[index] = np.asarray(vocode(row[np.newaxis]), np.float32).reshape(-1)
    return outputs
