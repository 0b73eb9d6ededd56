"""Write a small dump of random features in the exact dump layout (docs/dump_layout.md).

For tests and benchmarks of everything that reads a dump, without running preprocessing,
and `ljspeech_lengths`, the lengths of an LJSpeech-like corpus for batching figures.
"""

import json
from pathlib import Path

import numpy as np

from tensorflow_tts.dump import layout


def ljspeech_lengths(count, seed=0, sample_rate=22050, hop_size=256):
    """Mel frames and token counts of `count` utterances spread as LJSpeech's are.

    LJSpeech's clips last 1-10.1 s, skewed long (Beta(3.2, 2) over that range: mean ~6.6 s),
    with ~14.5 characters per second.

    Returns:
        (frames, tokens): int64 `(count,)` each, tokens <= frames.
    """
    rng = np.random.default_rng(seed)
    seconds = 1.0 + 9.1 * rng.beta(3.2, 2.0, count)
    frames = np.round(seconds * sample_rate / hop_size).astype(np.int64)
    tokens = np.clip(np.round(seconds * rng.normal(14.5, 1.5, count)), 2, frames).astype(np.int64)
    return frames, tokens


def write_synthetic_dump(
    dump_dir,
    num_utterances=24,
    split="train",
    seed=0,
    num_mels=80,
    hop_size=256,
    frames_range=(40, 300),
    tokens_range=(10, 60),
    num_speakers=2,
    vocab_size=40,
    with_durations=True,
    with_norm_feats=True,
    with_waves=True,
    frame_lengths=None,
    token_lengths=None,
):
    """Write `num_utterances` utterances of random features into `dump_dir/<split>`.

    Lengths are drawn uniformly from `frames_range` and `tokens_range` (inclusive), or
    taken from `frame_lengths` and `token_lengths` (int `(num_utterances,)`) when given.
    Durations, when written, are >= 0 per token and sum to the utterance's frames.
    Returns the list of utterance ids written, in order.
    """
    rng = np.random.default_rng(seed)
    dump_dir = Path(dump_dir)
    split_dir = dump_dir / split
    # The same mel statistics for every split and seed, as if computed once over train.
    stats_rng = np.random.default_rng(num_mels)
    mel_mean = stats_rng.normal(-2.0, 0.5, num_mels).astype(np.float32)
    mel_std = stats_rng.uniform(0.5, 1.5, num_mels).astype(np.float32)
    utt_ids = []
    for index in range(num_utterances):
        utt_id = f"{split}-{seed:03d}-{index:05d}"
        utt_ids.append(utt_id)
        frames = int(rng.integers(frames_range[0], frames_range[1] + 1) if frame_lengths is None else frame_lengths[index])
        tokens = int(rng.integers(tokens_range[0], tokens_range[1] + 1) if token_lengths is None else token_lengths[index])
        tokens = min(tokens, frames)

        input_ids = rng.integers(1, vocab_size, tokens).astype(np.int32)
        mel = (mel_mean + mel_std * rng.standard_normal((frames, num_mels))).astype(np.float32)
        f0 = np.where(rng.random(frames) < 0.7, rng.uniform(80.0, 300.0, frames), 0.0).astype(np.float32)
        energy = rng.uniform(0.0, 50.0, frames).astype(np.float32)
        speaker = np.int32(index % num_speakers)

        for kind, value in ((layout.IDS, input_ids), (layout.MEL, mel), (layout.F0, f0), (layout.ENERGY, energy),
                            (layout.SPEAKER_ID, speaker)):
            layout.save_feature(kind, split_dir, utt_id, value)
        if with_norm_feats:
            layout.save_feature(layout.NORM_MEL, split_dir, utt_id, (mel - mel_mean) / mel_std)
        if with_waves:
            layout.save_feature(layout.WAVE, split_dir, utt_id, rng.uniform(-0.5, 0.5, frames * hop_size))
        if with_durations:
            # Every token gets at least one frame, the rest is spread at random.
            durations = 1 + rng.multinomial(frames - tokens, np.full(tokens, 1.0 / tokens))
            layout.save_feature(layout.DURATIONS, split_dir, utt_id, durations)

    np.save(layout.utt_ids_path(dump_dir, split), np.array(utt_ids))
    np.save(dump_dir / layout.STATS_NAME, np.stack([mel_mean, mel_std]).astype(np.float32))
    np.save(dump_dir / layout.F0_STATS_NAME, np.array([180.0, 50.0], np.float32))
    np.save(dump_dir / layout.ENERGY_STATS_NAME, np.array([25.0, 14.0], np.float32))
    symbols = ["pad"] + [f"s{i}" for i in range(1, vocab_size)]
    mapper = {
        "symbol_to_id": {symbol: i for i, symbol in enumerate(symbols)},
        "id_to_symbol": {str(i): symbol for i, symbol in enumerate(symbols)},
        "speakers_map": {f"speaker{i}": i for i in range(num_speakers)},
        "processor_name": "SyntheticProcessor",
    }
    (dump_dir / "synthetic_mapper.json").write_text(json.dumps(mapper, indent=2), encoding="utf-8")
    return utt_ids
