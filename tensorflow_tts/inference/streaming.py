"""Streaming vocoding: the vocoder runs on overlapping mel chunks and audio comes out as it goes.

Each chunk is vocoded with `context` extra frames on both sides (at least the vocoder's
receptive field), and only the samples of the chunk's own frames are kept. Every kept
sample then sees exactly the inputs it sees in one-shot vocoding, so the streamed audio
equals the one-shot audio up to float rounding.

A noise-driven vocoder (Parallel WaveGAN) also needs the same noise at the same samples:
`stream_vocoder` takes the utterance's noise once and hands every window its own slice of
it, so streamed and one-shot audio agree as for the other vocoders.
"""

import math
import time

import numpy as np


def receptive_field_frames(config):
    """Mel frames on each side that one output sample of a vocoder depends on (rounded up).

    Args: a MelGAN, Multi-band MelGAN, HiFi-GAN or Parallel WaveGAN generator config.

    Counted per layer at the layer's own rate, then divided by that rate's samples per frame:
    the first conv, each transposed conv (one input step of its stride), each residual stack
    or multi-receptive-field block (the widest block counts), the last conv and, for
    Multi-band MelGAN, the PQMF synthesis filter.
    """
    if hasattr(config, "aux_context_window"):
        return _parallel_wavegan_receptive_field_frames(config)
    half_kernel = (config.kernel_size - 1) // 2
    frames = float(half_kernel)  # first conv, at the frame rate
    rate = 1  # samples per frame at the current layer
    for scale in config.upsample_scales:
        frames += 1.0 / rate  # a transposed conv of kernel 2 * scale, stride scale: one input step
        rate *= scale
        if hasattr(config, "stack_dilation_rate"):  # HiFi-GAN: parallel blocks, each a chain of convs
            widest = max(
                sum((kernel - 1) // 2 * dilation + (kernel - 1) // 2 for dilation in dilations)
                for kernel, dilations in zip(config.stack_kernel_size, config.stack_dilation_rate)
            )
        else:  # MelGAN: stacks with dilation kernel ** j, then a pointwise conv
            widest = sum((config.stack_kernel_size - 1) // 2 * config.stack_kernel_size**j for j in range(config.stacks))
        frames += widest / rate
    frames += half_kernel / rate  # last conv
    subbands = getattr(config, "subbands", None)
    if subbands:
        frames += (config.taps // 2) / (rate * subbands)  # PQMF synthesis filter, at the audio rate
    return int(math.ceil(frames)) + 1  # one frame of margin for the rounding of transposed convs


def _parallel_wavegan_receptive_field_frames(config):
    """The conditioning conv (aux_context_window frames), each smoothing conv (scale samples
    at its rate) and every dilated conv of the WaveNet blocks, at the audio rate."""
    frames = float(config.aux_context_window)
    rate = 1
    for scale in config.upsample_scales:
        rate *= scale
        frames += scale / rate
    frames += sum((config.kernel_size - 1) // 2 * dilation for dilation in config.dilations) / rate
    return int(math.ceil(frames)) + 1


def stream_vocoder(vocode, mels, hop_size, context_frames, chunk_frames=32, noise=None):
    """Vocode `mels` chunk by chunk; yields each chunk's audio as soon as it is made.

    Args:
        vocode: callable, mels (1, T, num_mels) float32 -> audio with T * hop_size samples
            (any shape that flattens to them: (1, T * hop, 1) or (T * hop,)); with `noise`,
            called as vocode(mels, noise (1, T * hop_size, 1)).
        mels: (F, num_mels) float32.
        hop_size: samples per frame.
        context_frames: frames added on each side of a chunk; use `receptive_field_frames`.
        chunk_frames: frames whose audio each step yields.
        noise: for a noise-driven vocoder, the utterance's noise, F * hop_size samples (any
            shape that flattens to them); each window gets the samples of its own frames.

    Yields: float32 audio (chunk_frames * hop_size,) per chunk (the last may be shorter);
    concatenated they are the one-shot audio of all F frames.
    """
    if chunk_frames < 1:
        raise ValueError(f"chunk_frames must be at least 1, got {chunk_frames}")
    if context_frames < 0:
        raise ValueError(f"context_frames must not be negative, got {context_frames}")
    mels = np.asarray(mels, np.float32)
    total = mels.shape[0]
    if noise is not None:
        noise = np.asarray(noise, np.float32).reshape(-1)
        if noise.size != total * hop_size:
            raise ValueError(f"noise has {noise.size} samples; {total} frames need {total * hop_size}")
    for start in range(0, total, chunk_frames):
        end = min(start + chunk_frames, total)
        window_start, window_end = max(0, start - context_frames), min(total, end + context_frames)
        window = mels[np.newaxis, window_start:window_end]
        if noise is None:
            audio = vocode(window)
        else:
            audio = vocode(window, noise[window_start * hop_size : window_end * hop_size].reshape(1, -1, 1))
        audio = np.asarray(audio, np.float32).reshape(-1)
        offset = (start - window_start) * hop_size
        yield audio[offset : offset + (end - start) * hop_size]


def measure_stream(chunks):
    """Consume an audio-chunk iterator; returns (audio, time_to_first_audio_s, total_s).

    Time to first audio runs from this call to the first chunk, so pass an iterator that has
    not started yet (a generator does its work lazily): it includes the acoustic model.
    """
    started = time.perf_counter()
    first = None
    pieces = []
    for chunk in chunks:
        if first is None:
            first = time.perf_counter() - started
        pieces.append(np.asarray(chunk, np.float32).reshape(-1))
    total = time.perf_counter() - started
    audio = np.concatenate(pieces) if pieces else np.zeros([0], np.float32)
    return audio, (total if first is None else first), total
