"""Teacher-forced passes of a trained Tacotron 2 over a dump, written back into it: durations
(DUMP/<split>/durations/, for FastSpeech and FastSpeech 2) and postnet mels (DUMP/<split>/postnets/,
for FastSpeech knowledge distillation).

Durations: each decoder step goes to its most attended token and counts for its r frames, cut
to the mel length, so the durations (int32, one per token) sum exactly to the mel frames
(docs/dump_layout.md). Postnet mels: float32 [frames, num_mels], exactly the frames of the
utterance's mel, normalised as the mels the model was trained on.
`examples/tacotron2/extract_duration.py` and `extract_postnets.py` call `durations_main` and
`postnets_main`.
"""

import argparse
import logging
from pathlib import Path

import numpy as np
import tensorflow as tf
from tqdm import tqdm

from tensorflow_tts.alignment.attention import AlignmentError, durations_from_alignment
from tensorflow_tts.configs.base_config import ConfigError
from tensorflow_tts.datasets import AcousticDataset
from tensorflow_tts.datasets.dump_dataset import DumpError
from tensorflow_tts.dump import layout
from tensorflow_tts.dump.screening import DumpCheckError, screen_utterances
from tensorflow_tts.recipes import acoustic
from tensorflow_tts.recipes.tacotron2 import load_model

# The names the example scripts logged under before their code moved here: log lines read as before.
logger = logging.getLogger("tensorflow_tts.extract_duration")
postnets_logger = logging.getLogger("tensorflow_tts.extract_postnets")


def add_common_flags(parser):
    """Flags shared by the durations and the postnets extraction."""
    parser.add_argument("--dump-dir", default=None, help="a dump: process its --splits")
    parser.add_argument("--rootdir", default=None, help="or one dump split, e.g. dump/train (1.8 style)")
    parser.add_argument("--splits", nargs="+", default=["train", "valid"], help="with --dump-dir")
    parser.add_argument("--checkpoint", required=True, help="model-N.h5 (also 1.8's), ckpt-N or a checkpoint folder")
    parser.add_argument("--config", required=True, help="the YAML the model was trained with")
    parser.add_argument("--use-norm", default="1", type=acoustic.as_bool, help="as in training")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--win-front", type=int, default=None, help="attend at most this many tokens behind the last peak")
    parser.add_argument("--win-back", type=int, default=None, help="and this many ahead (both or neither)")
    parser.add_argument("--verbose", type=int, default=1, choices=(0, 1, 2))


def check_common_flags(parser, args):
    if (args.dump_dir is None) == (args.rootdir is None):
        parser.error("give either --dump-dir (all --splits) or --rootdir (one split)")
    if (args.win_front is None) != (args.win_back is None):
        parser.error("give both --win-front and --win-back, or neither")
    if args.batch_size < 1:
        parser.error("--batch-size must be >= 1")


def split_dirs(args):
    """[(dump_dir, split)] to process."""
    if args.rootdir:
        return [acoustic.split_dir_parts(args.rootdir)]
    return [(Path(args.dump_dir), split) for split in args.splits]


def screen_split(dump_dir, split, use_norm, reduction_factor, n_speakers=None, vocab_size=None):
    """Utterances of a split that can be aligned: (kept ids, {utt_id: reason} skipped).

    Skips empty token sequences and mels shorter than one decoder step (r frames), with a
    warning naming each one.
    """
    mel_folder = layout.mel_kind(use_norm).folder
    report = screen_utterances(dump_dir, split, mel_folder=mel_folder, n_speakers=n_speakers, vocab_size=vocab_size)
    kept, skipped = [], dict(report.skipped)
    for utt_id in report.kept:
        path = Path(dump_dir) / split / mel_folder / f"{utt_id}-{mel_folder}.npy"
        frames = int(np.load(path, mmap_mode="r").shape[0])
        if frames < reduction_factor:
            skipped[utt_id] = (
                f"{frames} mel frame(s), fewer than one decoder step (reduction_factor={reduction_factor}); "
                "it cannot be aligned"
            )
            logger.warning("%s/%s: skipping %s: %s", dump_dir, split, utt_id, skipped[utt_id])
            continue
        kept.append(utt_id)
    if not kept:
        raise DumpCheckError(f"{Path(dump_dir) / split}: no utterance can be aligned ({skipped})")
    return kept, skipped


def teacher_forced_batches(model, dump_dir, split, utt_ids, use_norm, batch_size, window=None):
    """Yield, per utterance of ``utt_ids``, a dict with utt_id, input_length, mel_length,
    alignment (T_in, S) and mel_after (F, n_mels) of a teacher-forced pass (no dropout except
    Tacotron 2's prenet dropout, as at inference).

    window: optional (win_front, win_back): attention restricted around the previous peak.
    """
    dataset = AcousticDataset(
        dump_dir, split, use_norm=use_norm, with_durations=False, with_f0_energy=False, utt_ids=utt_ids
    )
    batches = dataset.create(batch_size=batch_size, shuffle=False, add_padding_ratio=False)

    # One trace for every batch shape: the decoder loop is slow to trace.
    @tf.function(input_signature=[batches.element_spec])
    @tf.autograph.experimental.do_not_convert  # plain TF ops; the decoder builds its own while_loop
    def forward(batch):
        if window is None:
            _, mel_after, _, alignments = model(
                batch["input_ids"], batch["input_lengths"], batch["speaker_ids"], batch["mel_gts"],
                batch["mel_lengths"], training=False,
            )
            return mel_after, alignments
        # TFTacotron2.call has no window argument; the decoder loop has.
        keys, values, input_mask = model._encode(batch["input_ids"], batch["input_lengths"], batch["speaker_ids"], False)
        decoder_output, _, alignments = model._decode(
            keys, values, input_mask, False, targets=batch["mel_gts"], window=window
        )
        step_mask = tf.sequence_mask(batch["mel_lengths"], tf.shape(decoder_output)[1])
        return model._postnet(decoder_output, step_mask, False), alignments

    for batch in tqdm(batches, desc=f"[{split}]", total=-(-len(dataset) // batch_size)):
        mel_after, alignments = (value.numpy() for value in forward(batch))
        for row, utt_id in enumerate(batch["utt_ids"].numpy()):
            mel_length = int(batch["mel_lengths"][row])
            yield {
                "utt_id": utt_id.decode(),
                "input_length": int(batch["input_lengths"][row]),
                "mel_length": mel_length,
                "alignment": alignments[row],
                "mel_after": mel_after[row, :mel_length],
            }


def extract_durations_split(model, dump_dir, split, outdir, use_norm, batch_size, window=None):
    """Write the durations of every alignable utterance of a split into ``outdir``.

    Returns: (files written, {utt_id: reason} skipped).
    """
    config = model.config
    utt_ids, skipped = screen_split(dump_dir, split, use_norm, config.reduction_factor, config.n_speakers, config.vocab_size)
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    written = zero_tokens = 0
    for item in teacher_forced_batches(model, dump_dir, split, utt_ids, use_norm, batch_size, window):
        try:
            durations = durations_from_alignment(
                item["alignment"], item["input_length"], item["mel_length"], config.reduction_factor, item["utt_id"]
            )
        except AlignmentError as error:
            skipped[item["utt_id"]] = str(error)
            logger.warning("%s", error)
            continue
        np.save(outdir / f"{item['utt_id']}{layout.DURATIONS.file_suffix}", durations, allow_pickle=False)
        written += 1
        zero_tokens += int((durations == 0).sum())
    logger.info(
        "%s/%s: wrote %d durations files to %s (%d utterances skipped, %d tokens got 0 frames)",
        dump_dir, split, written, outdir, len(skipped), zero_tokens,
    )
    return written, skipped


def extract_postnets_split(model, dump_dir, split, outdir, use_norm, batch_size, window=None):
    """Write <outdir>/postnets/<utt>-postnet.npy for every usable utterance; returns the count."""
    config = model.config
    utt_ids, _ = screen_split(dump_dir, split, use_norm, config.reduction_factor, config.n_speakers, config.vocab_size)
    folder = Path(outdir) / layout.POSTNET.folder
    folder.mkdir(parents=True, exist_ok=True)
    written = 0
    for item in teacher_forced_batches(model, dump_dir, split, utt_ids, use_norm, batch_size, window):
        mel = item["mel_after"].astype(np.float32)
        np.save(folder / f"{item['utt_id']}{layout.POSTNET.file_suffix}", mel, allow_pickle=False)
        written += 1
    postnets_logger.info("%s/%s: wrote %d postnet mels to %s", dump_dir, split, written, folder)
    return written


def parse_extraction_args(argv, description, outdir_help, dump_dir_destination):
    """Flags of the Tacotron 2 extraction scripts: the common ones plus `--outdir` (with --rootdir only)."""
    parser = argparse.ArgumentParser(description=description)
    add_common_flags(parser)
    parser.add_argument("--outdir", default=None, help=outdir_help)
    args = parser.parse_args(argv)
    check_common_flags(parser, args)
    if args.outdir and not args.rootdir:
        parser.error(f"--outdir goes with --rootdir; with --dump-dir {dump_dir_destination}")
    return args


def run_extraction(args, extract, default_outdir):
    """Load the model once, then ``extract(model, dump_dir, split, outdir, use_norm, batch_size, window)``
    for every split; ``default_outdir(dump_dir, split)`` when --outdir is not given. Returns the exit status."""
    acoustic.setup_logging(args.verbose)
    window = None if args.win_front is None else (args.win_front, args.win_back)
    try:
        _, model = load_model(args.config, args.checkpoint)
        for dump_dir, split in split_dirs(args):
            outdir = args.outdir or default_outdir(dump_dir, split)
            extract(model, dump_dir, split, outdir, args.use_norm, args.batch_size, window)
    except (ConfigError, DumpCheckError, DumpError, ValueError, FileNotFoundError) as error:
        logger.error("%s", error)
        return 2
    return 0


def parse_durations_args(argv=None):
    """The extract_duration.py flags."""
    return parse_extraction_args(
        argv, "Write Tacotron 2 alignment durations into a dump.",
        "with --rootdir: where to write (default <rootdir>/durations)",
        "durations go to <dump-dir>/<split>/durations",
    )


def durations_main(argv=None):
    """The extract_duration.py command line; returns the exit status (2: bad config, checkpoint, dump)."""

    def default_outdir(dump_dir, split):
        return Path(dump_dir) / split / layout.DURATIONS.folder

    return run_extraction(parse_durations_args(argv), extract_durations_split, default_outdir)


def parse_postnets_args(argv=None):
    """The extract_postnets.py flags."""
    return parse_extraction_args(
        argv, "Write teacher-forced Tacotron 2 postnet mels into a dump.",
        "with --rootdir: folder to hold postnets/ (default <rootdir>)",
        "mels go to <dump-dir>/<split>/postnets",
    )


def postnets_main(argv=None):
    """The extract_postnets.py command line; returns the exit status (2: bad config, checkpoint, dump)."""

    def default_outdir(dump_dir, split):
        return Path(dump_dir) / split  # postnets/ goes inside it

    return run_extraction(parse_postnets_args(argv), extract_postnets_split, default_outdir)
