"""tensorflow-tts-convert: turn TensorFlowTTS 1.8 weights into a `save_pretrained` folder.

    tensorflow-tts-convert --from-tensorflowtts fastspeech2-150k.h5 \
        --config fastspeech2.v1.yaml --mapper ljspeech_mapper.json --outdir ./fastspeech2_ljspeech

writes OUTDIR/config.yml, OUTDIR/model.h5 (and OUTDIR/processor.json with --mapper), which
`TFAutoModel.from_pretrained(OUTDIR)` and `AutoProcessor.from_pretrained(OUTDIR)` load.
"""

import argparse
import logging
import sys
from pathlib import Path

from tensorflow_tts.bin.cli import add_verbose_flag, setup_logging

logger = logging.getLogger("tensorflow_tts.convert")

MAX_LISTED_PROBLEMS = 12


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="tensorflow-tts-convert",
        description="Load an .h5 written by TensorFlowTTS 1.8 into our model (by name, every tensor checked) "
        "and save it as config.yml + model.h5 (+ processor.json).",
    )
    parser.add_argument(
        "--from-tensorflowtts", dest="old_weights", required=True, type=Path, metavar="OLD.h5",
        help="weights saved by TensorFlowTTS 1.8 (model.save_weights / a trainer's checkpoint .h5)",
    )
    parser.add_argument(
        "--config", required=True, type=Path,
        help="the model's old config: a training YAML (model_type + <model_type>_params) or a flat config.json",
    )
    parser.add_argument("--outdir", required=True, type=Path, help="the folder to write")
    parser.add_argument("--mapper", type=Path, default=None, help="the old processor's mapper JSON, saved as processor.json")
    parser.add_argument(
        "--allow-partial", action="store_true",
        help="convert even if tensors are missing, unused or mis-shaped (listed); missing weights keep random values",
    )
    parser.add_argument("--num-mels", type=int, default=None, help="vocoders: mel bins (default: read from the file)")
    parser.add_argument("--overwrite", action="store_true", help="replace an OUTDIR that already holds a model.h5")
    add_verbose_flag(parser)
    return parser.parse_args(argv)


def _check_old_weights(path):
    """None if ``path`` is an old weight file, else why not."""
    from tensorflow_tts.models.legacy_weights import OWN_FORMAT_ATTRIBUTE, is_legacy_h5

    if not path.is_file():
        return f"--from-tensorflowtts {path}: no such file"
    if is_legacy_h5(path):
        return None
    import h5py

    if h5py.is_hdf5(path):
        with h5py.File(path, "r") as h5:
            if OWN_FORMAT_ATTRIBUTE in h5.attrs:
                return f"--from-tensorflowtts {path}: already written by tensorflow_tts; load it with TFAutoModel"
    return f"--from-tensorflowtts {path}: not a Keras HDF5 weight file (no 'layer_names' attribute)"


def convert(old_weights, config_path, outdir, mapper=None, allow_partial=False, num_mels=None):
    """Convert and save; returns the LoadReport. Raises ConfigError, LegacyWeightsError,
    PretrainedError or DataProcessorError naming what does not fit."""
    # Imported here so that `--help` and flag errors do not wait for TensorFlow.
    from tensorflow_tts.inference.auto import (
        LEGACY_LOADABLE,
        AutoConfig,
        AutoProcessor,
        first_kernel_input_size,
        build_model,
        load_h5,
        model_class_for,
    )
    from tensorflow_tts.inference.pretrained import PretrainedError, save_pretrained

    config = AutoConfig.from_pretrained(config_path)
    model_class = model_class_for(config)
    if not issubclass(model_class, LEGACY_LOADABLE):
        raise PretrainedError(f"--config {config_path}: converting {config.model_type} weights is not supported")
    processor = AutoProcessor.from_pretrained(mapper) if mapper is not None else None
    model = build_model(model_class(config), num_mels or first_kernel_input_size(old_weights) or 80)
    report = load_h5(model, old_weights, allow_partial=allow_partial)
    save_pretrained(model, outdir)
    if processor is not None:
        save_pretrained(processor, outdir)
    return report


def _one_problem_a_line(message, limit=MAX_LISTED_PROBLEMS):
    """The loader's "a; b; c" message as indented lines, at most ``limit`` of them."""
    problems = message.split("; ")
    lines = [f"  {problem}" for problem in problems[:limit]]
    if len(problems) > limit:
        lines.append(f"  ... and {len(problems) - limit} more (a config that differs from the one the file was trained with?)")
    return "\n".join(lines)


def main(argv=None):
    args = parse_args(argv)
    setup_logging(args.verbose)
    problem = _check_old_weights(args.old_weights)
    if problem is None and not args.config.is_file():
        problem = f"--config {args.config}: no such file"
    if problem is None and args.mapper is not None and not args.mapper.is_file():
        problem = f"--mapper {args.mapper}: no such file"
    if problem is None and (args.outdir / "model.h5").exists() and not args.overwrite:
        problem = f"--outdir {args.outdir} already holds a model.h5; pass --overwrite to replace it"
    if problem is not None:
        logger.error("%s", problem)
        return 2

    from tensorflow_tts.configs.base_config import ConfigError
    from tensorflow_tts.inference.pretrained import PretrainedError
    from tensorflow_tts.processor.base_processor import DataProcessorError
    from tensorflow_tts.models.legacy_weights import LegacyWeightsError

    try:
        report = convert(args.old_weights, args.config, args.outdir, args.mapper, args.allow_partial, args.num_mels)
    except (ConfigError, DataProcessorError) as error:
        logger.error("%s", error)
        return 2
    except (LegacyWeightsError, PretrainedError) as error:
        message = str(error).split(" (pass allow_partial", 1)[0]  # the loader's hint, in API terms
        logger.error("cannot convert:\n%s\n--allow-partial converts what fits and lists the rest", _one_problem_a_line(message))
        return 1
    if not report.complete:
        logger.warning("converted with --allow-partial:\n%s", _one_problem_a_line(report.describe()))
        if report.missing:
            logger.warning("%d weights of the model keep their random initial values", len(report.missing))
    logger.info("wrote %s (%d tensors loaded, %d ignored on purpose)", args.outdir, len(report.loaded), len(report.ignored))
    return 0


if __name__ == "__main__":
    sys.exit(main())
