"""Duration extraction: write the built-in aligner's durations into a dump
(DUMP/<split>/durations/<utt>-durations.npy), so FastSpeech, and FastSpeech2 with
`aligner_params: {enabled: false}`, train without the aligner.

`examples/fastspeech2/extract_durations.py` calls `extract_durations_main`.
"""

import argparse
import logging
from pathlib import Path

import numpy as np
import tensorflow as tf
from tqdm import tqdm

from tensorflow_tts.configs.base_config import ConfigError
from tensorflow_tts.datasets import AcousticDataset
from tensorflow_tts.dump import layout
from tensorflow_tts.dump.screening import DumpCheckError, screen_utterances
from tensorflow_tts.layers.aligner import Aligner
from tensorflow_tts.recipes import acoustic as recipe_lib

# The logger name the example script logged under, kept so log lines read as before.
logger = logging.getLogger("tensorflow_tts.extract_durations")


def parse_args(argv=None):
    """The extraction flags: the dump, the aligner's checkpoint and YAML, splits, batch size."""
    parser = argparse.ArgumentParser(description="Export the built-in aligner's durations into the dump.")
    parser.add_argument("--dump-dir", required=True, help="the dump (holding train/ and valid/)")
    parser.add_argument("--checkpoint", required=True, help="ckpt-N, a checkpoint folder, or aligner-N.h5")
    parser.add_argument("--config", required=True, help="the YAML the aligner was trained with")
    parser.add_argument("--outdir", default=None, help="dump to write into (default: --dump-dir)")
    parser.add_argument("--splits", nargs="+", default=["train", "valid"])
    parser.add_argument("--use-norm", default="1", type=recipe_lib.as_bool, help="as in training")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--verbose", type=int, default=1, choices=(0, 1, 2))
    return parser.parse_args(argv)


def extract_split(aligner, dump_dir, split, outdir, use_norm, batch_size):
    """Align every usable utterance of a split and write its durations (int32, (T,), summing to the mel frames).

    Returns: (files written, tokens that got 0 frames).
    """
    report = screen_utterances(dump_dir, split, mel_folder=layout.mel_kind(use_norm).folder)
    dataset = AcousticDataset(
        dump_dir, split, use_norm=use_norm, with_durations=False, with_f0_energy=False, utt_ids=report.kept
    )
    batches = dataset.create(batch_size=batch_size, shuffle=False, add_padding_ratio=False)

    @tf.function(reduce_retracing=True)
    def align(batch):
        return aligner(batch["input_ids"], batch["mel_gts"], batch["input_lengths"], batch["mel_lengths"])["durations"]

    written = zero = 0
    for batch in tqdm(batches, desc=f"[{split}]", total=-(-len(dataset) // batch_size)):
        durations = align(batch).numpy()
        for row, utt_id in enumerate(batch["utt_ids"].numpy()):
            utt_id = utt_id.decode()
            length = int(batch["input_lengths"][row])
            utt_durations = durations[row, :length].astype(np.int32)
            assert utt_durations.sum() == int(batch["mel_lengths"][row]), utt_id
            layout.save_feature(layout.DURATIONS, Path(outdir) / split, utt_id, utt_durations)
            written += 1
            zero += int((utt_durations == 0).sum())
    logger.info(
        "%s: wrote %d durations files to %s (%d utterances skipped, %d zero-frame tokens)",
        split, written, Path(outdir) / split / layout.DURATIONS.folder, len(report.skipped), zero,
    )
    return written, zero


def extract_durations_main(argv=None):
    """Align every split given and write the durations. Returns the exit status (2: bad config or dump)."""
    args = parse_args(argv)
    recipe_lib.setup_logging(args.verbose)
    try:
        recipe = recipe_lib.load_recipe(args.config, None, dump_dir=args.dump_dir)
    except (ConfigError, layout.DumpError) as error:
        logger.error("%s", error)
        return 2
    outdir = args.outdir or args.dump_dir
    aligner = None
    for split in args.splits:
        try:
            if aligner is None:
                probe = AcousticDataset(args.dump_dir, split, use_norm=args.use_norm, with_durations=False, with_f0_energy=False)
                aligner = Aligner(recipe.aligner_config, recipe.model_config.vocab_size, probe.num_mels).build_once()
                models = {"aligner": aligner}
                recipe_lib.restore_weights(models, args.checkpoint)
            extract_split(aligner, args.dump_dir, split, outdir, args.use_norm, args.batch_size)
        except (DumpCheckError, ValueError, FileNotFoundError) as error:
            logger.error("%s", error)
            return 2
    return 0


main = extract_durations_main  # the name examples/fastspeech2/extract_durations.py had
