"""Synthesise mels of a dump split with a trained Tacotron 2 (free-running, stop token).

    python examples/tacotron2/decode_tacotron2.py --rootdir ./dump/valid --outdir ./predictions \
        --checkpoint ./exp/tacotron2/checkpoints/model-65000.h5 \
        --config examples/tacotron2/conf/tacotron2.v1.yaml --batch-size 8 --win-front 3 --win-back 3

Writes <utt>-norm-feats.npy (or -raw-feats.npy with --use-norm 0), the mel after the postnet
[frames, num_mels] cut at the first stop, and <utt>.png (prediction above the reference when
the split has it, and the alignment).
"""

import logging
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import tensorflow_tts  # noqa: E402,F401

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tqdm import tqdm  # noqa: E402

from tensorflow_tts.recipes import acoustic as recipe_lib  # noqa: E402
from examples.tacotron2.extract_duration import load_model  # noqa: E402
from tensorflow_tts.configs.base_config import ConfigError  # noqa: E402

logger = logging.getLogger("tensorflow_tts.decode_tacotron2")


def parse_args(argv=None):
    parser = recipe_lib.decoding_parser("Decode mels with a trained Tacotron 2.")
    parser.add_argument("--win-front", type=int, default=None, help="attention window behind the last peak")
    parser.add_argument("--win-back", type=int, default=None, help="and ahead of it (both or neither)")
    parser.add_argument("--maximum-iterations", type=int, default=None, help="decoder steps at most (default 4000)")
    args = parser.parse_args(argv)
    if (args.win_front is None) != (args.win_back is None):
        parser.error("give both --win-front and --win-back, or neither")
    if args.maximum_iterations is not None and args.maximum_iterations < 1:
        parser.error("--maximum-iterations must be >= 1")
    return args


def stop_length(stop_logits, reduction_factor, threshold):
    """Frames up to and including the first step whose r stop probabilities all pass the threshold
    (all frames when none does). stop_logits: (S * r,) -> int."""
    steps = np.asarray(stop_logits).reshape(-1, reduction_factor)
    stopped = np.all(1.0 / (1.0 + np.exp(-steps)) > threshold, axis=1)
    return int((np.argmax(stopped) + 1) * reduction_factor) if stopped.any() else int(steps.size)


def read_utterances(rootdir, num_samples, config):
    """[(utt_id, ids, speaker)] of a split; empty ones are skipped with a warning."""
    folder = Path(rootdir) / "ids"
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder; --rootdir must be a dump split such as dump/valid")
    utt_ids = sorted(path.name[: -len("-ids.npy")] for path in folder.glob("*-ids.npy"))
    utterances = []
    for utt_id in utt_ids[:num_samples] if num_samples else utt_ids:
        ids = recipe_lib.read_ids(folder / f"{utt_id}-ids.npy")
        if ids.size == 0:
            logger.warning("%s: empty token sequence, skipped", utt_id)
            continue
        if ids.max() >= config.vocab_size:
            raise ConfigError(f"{utt_id}: token id {ids.max()} >= vocab_size {config.vocab_size}; wrong config for this dump")
        speaker_path = Path(rootdir) / "speaker-ids" / f"{utt_id}-speaker-ids.npy"
        speaker = int(np.load(speaker_path).reshape(-1)[0]) if speaker_path.is_file() else 0
        if config.n_speakers > 1 and not 0 <= speaker < config.n_speakers:
            raise ConfigError(f"{utt_id}: speaker id {speaker} outside [0, {config.n_speakers}) (n_speakers of the config)")
        utterances.append((utt_id, ids, speaker))
    return utterances


def main(argv=None):
    args = parse_args(argv)
    recipe_lib.setup_logging(args.verbose)
    try:
        _, model = load_model(args.config, args.checkpoint)
        utterances = read_utterances(args.rootdir, args.num_samples, model.config)
    except (ConfigError, FileNotFoundError, ValueError) as error:
        logger.error("%s", error)
        return 2
    from tensorflow_tts.utils.plotting import figure_to_array, plot_alignment, plot_mel_comparison

    if args.win_front is not None:
        model.setup_window(args.win_front, args.win_back)
    if args.maximum_iterations:
        model.setup_maximum_iterations(args.maximum_iterations)
    r, threshold = model.config.reduction_factor, model.config.stop_threshold
    rootdir, outdir = Path(args.rootdir), Path(args.outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    feats = "norm-feats" if args.use_norm else "raw-feats"
    for start in tqdm(range(0, len(utterances), args.batch_size), desc="[decode]"):
        chunk = utterances[start : start + args.batch_size]
        width = max(len(ids) for _, ids, _ in chunk)
        input_ids = np.zeros([len(chunk), width], np.int32)
        for row, (_, ids, _) in enumerate(chunk):
            input_ids[row, : len(ids)] = ids
        lengths = np.array([len(ids) for _, ids, _ in chunk], np.int32)
        speakers = np.array([speaker for _, _, speaker in chunk], np.int32)
        _, mel_outputs, stop_logits, alignments = model.inference(
            tf.constant(input_ids), tf.constant(lengths), tf.constant(speakers)
        )
        mel_outputs, stop_logits, alignments = mel_outputs.numpy(), stop_logits.numpy(), alignments.numpy()
        for row, (utt_id, ids, _) in enumerate(chunk):
            length = stop_length(stop_logits[row], r, threshold)
            mel = mel_outputs[row, :length].astype(np.float32)
            np.save(outdir / f"{utt_id}-{feats}.npy", mel, allow_pickle=False)
            reference_path = rootdir / feats / f"{utt_id}-{feats}.npy"
            reference = np.load(reference_path) if reference_path.is_file() else None
            figure = plot_mel_comparison(mel, reference, title=utt_id)
            alignment = plot_alignment(
                alignments[row].T, title=f"{utt_id} alignment", input_length=len(ids), output_length=length // r
            )
            image = np.concatenate([_fit_width(figure_to_array(figure), 1000), _fit_width(figure_to_array(alignment), 1000)])
            tf.io.write_file(str(outdir / f"{utt_id}.png"), tf.io.encode_png(image))
            if length == stop_logits.shape[1]:
                logger.warning("%s: no stop within %d decoder steps; the mel runs to the limit", utt_id, length // r)
    logger.info("wrote %d mel(s) and plot(s) to %s", len(utterances), outdir)
    return 0


def _fit_width(image, width):
    """Pad (or crop) an [H, W, C] image to the given width with white."""
    if image.shape[1] >= width:
        return image[:, :width]
    return np.pad(image, [[0, 0], [0, width - image.shape[1]], [0, 0]], constant_values=255)


if __name__ == "__main__":
    sys.exit(main())
