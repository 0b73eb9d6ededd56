"""tensorflow-tts-export: a trained model as a SavedModel or a builtin-ops-only TFLite file.

    tensorflow-tts-export --config conf/fastspeech2.v1.yaml --checkpoint model-200000.h5 \\
        --format tflite --quantize float16 --outdir exported/
    tensorflow-tts-export --model fastspeech2_dir/ --vocoder mb_melgan_dir/ --format tflite --outdir exported/

With a vocoder, TFLite export also writes one text2wav model (token ids -> waveform).
"""

import argparse
import logging
import sys
from pathlib import Path

from tensorflow_tts.bin.cli import add_verbose_flag, setup_logging

logger = logging.getLogger("tensorflow_tts.export")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="tensorflow-tts-export",
        description="Export an acoustic model or a vocoder as a SavedModel (serving signature with named "
        "inputs) or as TFLite with builtin ops only (float32, float16 or dynamic-range int8).",
    )
    parser.add_argument("--config", type=Path, help="the training YAML (model_type + <model_type>_params)")
    parser.add_argument("--checkpoint", type=Path, help="weights: an .h5 or a trainer checkpoint (ckpt-N or its folder)")
    parser.add_argument("--model", type=Path, help="instead of --config/--checkpoint: a folder with config.yml and weights")
    parser.add_argument("--format", required=True, choices=("saved_model", "tflite"))
    parser.add_argument("--outdir", required=True, type=Path)
    parser.add_argument("--quantize", default="float32", choices=("float32", "float16", "int8"),
                        help="TFLite only: float16 weights, or int8 dynamic-range weights")
    parser.add_argument("--vocoder", type=Path, help="TFLite: a vocoder folder; also writes a text2wav model")
    parser.add_argument("--vocoder-config", type=Path, help="TFLite: the vocoder's training YAML")
    parser.add_argument("--vocoder-checkpoint", type=Path, help="TFLite: the vocoder's weights")
    parser.add_argument("--sampling-rate", type=int, default=None, help="recorded in the export when the YAML lacks it")
    add_verbose_flag(parser)
    return parser.parse_args(argv)


def _load(folder, config, checkpoint, what):
    from tensorflow_tts.inference.export import load_keras_model

    if folder is None and (config is None or checkpoint is None):
        raise ValueError(f"{what}: pass a model folder, or both a config YAML and a checkpoint")
    return load_keras_model(folder, config=config, checkpoint=checkpoint)


def main(argv=None):
    args = parse_args(argv)
    setup_logging(args.verbose)
    from tensorflow_tts.inference.export import ExportError, export_saved_model
    from tensorflow_tts.inference.tflite import TFLiteExportError, convert_model, convert_text2wav

    has_vocoder = args.vocoder is not None or args.vocoder_config is not None or args.vocoder_checkpoint is not None
    if args.format == "saved_model" and (args.quantize != "float32" or has_vocoder):
        logger.error("--quantize and --vocoder apply to --format tflite only; a SavedModel is exported in float32")
        return 2
    try:
        model, info = _load(args.model, args.config, args.checkpoint, "--model")
        sampling_rate = info["sampling_rate"] or args.sampling_rate
        hop_size = info["hop_size"] if info["role"] == "acoustic" else None
        args.outdir.mkdir(parents=True, exist_ok=True)
        if args.format == "saved_model":
            export_saved_model(model, args.outdir, sampling_rate=sampling_rate, hop_size=hop_size)
            print(args.outdir)
            return 0
        suffix = "" if args.quantize == "float32" else f"_{args.quantize}"
        path = args.outdir / f"{info['model_type']}{suffix}.tflite"
        path.write_bytes(convert_model(model, args.quantize, sampling_rate=sampling_rate, hop_size=hop_size))
        logger.info("wrote %s", path)
        print(path)
        if has_vocoder:
            vocoder, vocoder_info = _load(args.vocoder, args.vocoder_config, args.vocoder_checkpoint, "--vocoder")
            path = args.outdir / f"{info['model_type']}_{vocoder_info['model_type']}{suffix}.tflite"
            path.write_bytes(convert_text2wav(model, vocoder, args.quantize,
                                              sampling_rate=vocoder_info["sampling_rate"] or sampling_rate))
            logger.info("wrote %s (token ids -> waveform)", path)
            print(path)
    except (ExportError, TFLiteExportError, ValueError, OSError) as error:
        logger.error("%s", error)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
