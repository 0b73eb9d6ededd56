"""Tacotron 2 attention alignments: durations from them, and how good they are (numpy).

An alignment is Tacotron 2's ``alignment_history`` for one utterance: (tokens, decoder
steps), each column a softmax over the tokens; one decoder step emits r frames.
Used by tensorflow_tts/recipes/tacotron2_extraction.py (examples/tacotron2/extract_duration.py) and
benchmarks/quality_tacotron2.py.
"""

import dataclasses

import numpy as np


class AlignmentError(ValueError):
    """An utterance that cannot be aligned (the message says which and why)."""


def _check(alignment, input_length, mel_length, reduction_factor, name="utterance"):
    alignment = np.asarray(alignment)
    if alignment.ndim != 2:
        raise AlignmentError(f"{name}: expected an alignment (tokens, decoder steps), got shape {alignment.shape}")
    if input_length < 1:
        raise AlignmentError(f"{name}: empty token sequence; nothing to align (remove it from the dump)")
    if reduction_factor < 1:
        raise AlignmentError(f"{name}: reduction_factor must be at least 1, got {reduction_factor}")
    if mel_length < reduction_factor:
        raise AlignmentError(
            f"{name}: {mel_length} mel frame(s), fewer than one decoder step of reduction_factor="
            f"{reduction_factor} frames; remove it from the dump (or raise mel_length_threshold)"
        )
    steps = -(-mel_length // reduction_factor)
    if alignment.shape[0] < input_length or alignment.shape[1] < steps:
        raise AlignmentError(
            f"{name}: alignment {alignment.shape} is smaller than {input_length} tokens x {steps} decoder steps"
        )
    return alignment[:input_length, :steps]


def durations_from_alignment(alignment, input_length, mel_length, reduction_factor=1, name="utterance"):
    """Frames per token: each decoder step goes to its most attended token.

    Every step is expanded to its r frames and the frames are cut to ``mel_length``, so
    the durations sum exactly to the mel length. Tokens never attended most get 0.

    Args:
        alignment: (T_in or more, S or more) attention weights, tokens by decoder steps.
        input_length: real tokens (>= 1).
        mel_length: real mel frames (>= reduction_factor).
        reduction_factor: frames per decoder step.
        name: the utterance, for error messages.

    Returns:
        (input_length,) int32 summing to mel_length.
    Raises:
        AlignmentError: empty tokens, a mel shorter than one step, a too small alignment.
    """
    alignment = _check(alignment, input_length, mel_length, reduction_factor, name)
    step_tokens = np.argmax(alignment, axis=0)
    frame_tokens = np.repeat(step_tokens, reduction_factor)[:mel_length]
    return np.bincount(frame_tokens, minlength=input_length).astype(np.int32)


@dataclasses.dataclass
class AlignmentQuality:
    """Figures of one utterance's alignment (see `alignment_quality`)."""

    focus_rate: float  # mean over decoder steps of the largest attention weight
    diagonal_coverage: float  # fraction of steps whose most attended token is near the diagonal
    token_coverage: float  # fraction of tokens that are the most attended one at some step
    max_backward_jump: int  # largest step back (in tokens) of the most attended token
    monotonic: bool  # max_backward_jump <= the tolerance
    complete: bool  # starts at the first tokens and ends at the last ones


def alignment_quality(alignment, input_length, steps, band=0.2, backward_tolerance=1, end_tolerance=3):
    """How sharp, diagonal and monotonic one alignment is.

    Args:
        alignment: (T_in or more, S or more) attention weights.
        input_length: real tokens; steps: real decoder steps (ceil(mel_length / r)).
        band: a step t is on the diagonal when its argmax token n has
            |n / (N - 1) - t / (S - 1)| <= band.
        backward_tolerance: tokens the argmax may move back and still count as monotonic
            (attention often wavers by one token at a boundary).
        end_tolerance: the path must start within the first and end within the last this
            many tokens to be complete.
    """
    alignment = np.asarray(alignment, dtype=np.float64)[:input_length, :steps]
    path = np.argmax(alignment, axis=0)
    focus_rate = float(np.mean(np.max(alignment, axis=0)))
    token_position = path / max(input_length - 1, 1)
    step_position = np.arange(steps) / max(steps - 1, 1)
    diagonal_coverage = float(np.mean(np.abs(token_position - step_position) <= band))
    token_coverage = float(len(np.unique(path)) / input_length)
    moves = np.diff(path)
    max_backward_jump = int(max(0, -moves.min())) if moves.size else 0
    complete = bool(path[0] < end_tolerance and path[-1] >= input_length - end_tolerance)
    return AlignmentQuality(
        focus_rate=focus_rate,
        diagonal_coverage=diagonal_coverage,
        token_coverage=token_coverage,
        max_backward_jump=max_backward_jump,
        monotonic=max_backward_jump <= backward_tolerance,
        complete=complete,
    )
