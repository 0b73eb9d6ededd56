"""Synthesise mels of a dump split with a trained FastSpeech2 (predicted durations, F0, energy).

    python examples/fastspeech2/decode_fastspeech2.py --rootdir ./dump/valid --outdir ./predictions \
        --checkpoint ./exp/fastspeech2/checkpoints/model-200000.h5 \
        --config examples/fastspeech2/conf/fastspeech2.v1.yaml --batch-size 8

Writes <utt>-norm-feats.npy (or -raw-feats.npy with --use-norm 0), the mel after the postnet
[frames, num_mels], and <utt>.png (prediction above the reference when the split has it).
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
from tensorflow_tts.configs.base_config import ConfigError  # noqa: E402
from tensorflow_tts.models import TFFastSpeech, TFFastSpeech2  # noqa: E402
from tensorflow_tts.utils.plotting import plot_mel_comparison  # noqa: E402

logger = logging.getLogger("tensorflow_tts.decode")

MODELS = {"fastspeech": TFFastSpeech, "fastspeech2": TFFastSpeech2}


def parse_args(argv=None, model_type="fastspeech2"):
    parser = recipe_lib.decoding_parser(f"Decode mels with a trained {model_type}.")
    parser.add_argument("--f0-stat", default=None, help="accepted for compatibility; predictions stay normalised")
    parser.add_argument("--energy-stat", default=None, help="accepted for compatibility")
    parser.add_argument("--speed-ratio", type=float, default=1.0, help="> 0; 2.0 = twice as fast")
    parser.add_argument("--f0-ratio", type=float, default=1.0)
    parser.add_argument("--energy-ratio", type=float, default=1.0)
    args = parser.parse_args(argv)
    if not args.speed_ratio > 0:
        parser.error(f"--speed-ratio {args.speed_ratio}: must be > 0 (1.0 = normal speed, 2.0 = twice as fast)")
    return args


def list_utterances(rootdir, num_samples):
    folder = Path(rootdir) / "ids"
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder; --rootdir must be a dump split such as dump/valid")
    utt_ids = sorted(path.name[: -len("-ids.npy")] for path in folder.glob("*-ids.npy"))
    return utt_ids[:num_samples] if num_samples else utt_ids


def main(argv=None, model_type="fastspeech2"):
    args = parse_args(argv, model_type)
    recipe_lib.setup_logging(args.verbose)
    try:
        recipe = recipe_lib.load_recipe(args.config, model_type)
        utt_ids = list_utterances(args.rootdir, args.num_samples)
    except (ConfigError, FileNotFoundError) as error:
        logger.error("%s", error)
        return 2
    config = recipe.model_config
    model = MODELS[model_type](config=config, name=model_type)
    model.build_once()
    recipe_lib.restore_weights({"model": model}, args.checkpoint)
    rootdir, outdir = Path(args.rootdir), Path(args.outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    feats = "norm-feats" if args.use_norm else "raw-feats"
    written = 0
    for start in tqdm(range(0, len(utt_ids), args.batch_size), desc="[decode]"):
        batch_ids = []
        for utt_id in utt_ids[start : start + args.batch_size]:
            ids = recipe_lib.read_ids(rootdir / "ids" / f"{utt_id}-ids.npy")
            if ids.size == 0:
                logger.warning("%s: empty token sequence, skipped", utt_id)
                continue
            if ids.max() >= config.vocab_size:
                logger.error("%s: token id %d >= vocab_size %d; wrong config for this dump", utt_id, ids.max(), config.vocab_size)
                return 2
            speaker_path = rootdir / "speaker-ids" / f"{utt_id}-speaker-ids.npy"
            speaker = int(np.load(speaker_path).reshape(-1)[0]) if speaker_path.is_file() else 0
            if config.n_speakers > 1 and not 0 <= speaker < config.n_speakers:
                logger.error("%s: speaker id %d outside [0, %d) (n_speakers of the config)", utt_id, speaker, config.n_speakers)
                return 2
            batch_ids.append((utt_id, ids, speaker))
        if not batch_ids:
            continue
        width = max(len(ids) for _, ids, _ in batch_ids)
        input_ids = np.zeros([len(batch_ids), width], np.int32)
        for row, (_, ids, _) in enumerate(batch_ids):
            input_ids[row, : len(ids)] = ids
        speakers = np.array([speaker for _, _, speaker in batch_ids], np.int32)
        ratios = lambda value: np.full([len(batch_ids)], value, np.float32)  # noqa: E731
        inputs = [input_ids, speakers, ratios(args.speed_ratio)]
        if model_type == "fastspeech2":
            inputs += [ratios(args.f0_ratio), ratios(args.energy_ratio)]
        outputs = model.inference(*[tf.constant(value) for value in inputs])
        mel_after, durations = outputs[1].numpy(), outputs[2].numpy()
        for row, (utt_id, _, _) in enumerate(batch_ids):
            length = int(durations[row].sum())
            mel = mel_after[row, :length].astype(np.float32)
            np.save(outdir / f"{utt_id}-{feats}.npy", mel, allow_pickle=False)
            reference_path = rootdir / feats / f"{utt_id}-{feats}.npy"
            reference = np.load(reference_path) if reference_path.is_file() else None
            if length == 0:
                logger.warning("%s: every predicted duration is 0; wrote an empty mel and no plot", utt_id)
            else:
                plot_mel_comparison(mel, reference, title=utt_id).savefig(outdir / f"{utt_id}.png")
            written += 1
    logger.info("wrote %d mel(s) and plot(s) to %s", written, outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
