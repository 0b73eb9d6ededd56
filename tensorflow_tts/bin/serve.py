"""tensorflow-tts-serve: an HTTP speech server (batched, streaming) with a web page.

    tensorflow-tts-serve --acoustic fastspeech2/ --vocoder mb_melgan/ --processor ljspeech_mapper.json
    tensorflow-tts-serve --config voices.yaml --port 8000

One voice from the flags of tensorflow-tts-synthesize, or several from a YAML (see
tensorflow_tts/serving/config.py); then http://127.0.0.1:8000/ is the page.
"""

import argparse
import logging
import sys

from tensorflow_tts.bin.cli import add_verbose_flag, setup_logging

logger = logging.getLogger("tensorflow_tts.serve")

# Flags that override the config's value of the same name when given.
LIMIT_FLAGS = ("host", "port", "max_chars", "max_batch_size", "batch_wait_ms", "timeout_s")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="tensorflow-tts-serve", description="Serve speech over HTTP.")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--config", help="voices.yaml: several voices and the server's limits")
    source.add_argument("--acoustic", help="FastSpeech2/FastSpeech/Tacotron2 (or a text2wav .tflite)")
    parser.add_argument("--vocoder", default=None, help="MB-MelGAN/MelGAN/HiFi-GAN")
    parser.add_argument("--processor", default=None, help="mapper JSON (default: the one in the acoustic model's folder)")
    parser.add_argument("--voice-name", default="default", help="the name clients ask for (one voice from flags)")
    parser.add_argument("--sampling-rate", type=int, default=None, help="of the audio, when the models record none")
    parser.add_argument("--num-threads", type=int, default=None, help="TFLite interpreter threads")
    parser.add_argument("--host", default=None, help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=None, help="port (default 8000)")
    parser.add_argument("--max-chars", type=int, default=None, help="longest text one request may send (default 2000)")
    parser.add_argument("--max-batch-size", type=int, default=None,
                        help="requests run together (default 16; 1 turns batching off)")
    parser.add_argument("--batch-wait-ms", type=float, default=None, help="how long a batch gathers requests (default 10)")
    parser.add_argument("--timeout-s", type=float, default=None, help="a request unanswered after this gets 504 (default 60)")
    add_verbose_flag(parser)
    return parser.parse_args(argv)


def load_config(args):
    """The ServeConfig of the flags: the YAML's, or one voice from --acoustic; given flags win."""
    from tensorflow_tts.serving.config import ServeConfig

    overrides = {name: getattr(args, name) for name in LIMIT_FLAGS if getattr(args, name) is not None}
    if args.config:
        config = ServeConfig.from_yaml(args.config)
        values = dict(config.to_dict(), **overrides)
        return ServeConfig.from_dict(values, source=args.config)
    voice = {"name": args.voice_name, "acoustic": args.acoustic, "vocoder": args.vocoder,
             "processor": args.processor, "sampling_rate": args.sampling_rate, "num_threads": args.num_threads}
    return ServeConfig.from_dict(dict(overrides, voices=[voice]), source="flags")


def main(argv=None):
    args = parse_args(argv)
    setup_logging(args.verbose)
    from tensorflow_tts.configs.base_config import ConfigError
    from tensorflow_tts.serving.voices import VoiceError, load_voices

    try:
        config = load_config(args)
        voices = load_voices(config)
    except (ConfigError, VoiceError) as error:
        logger.error("%s", error)
        return 1
    import uvicorn

    from tensorflow_tts.serving.app import create_app

    logger.info("serving %s on http://%s:%d/", ", ".join(voices), config.host, config.port)
    try:
        uvicorn.run(create_app(voices, config), host=config.host, port=config.port,
                    log_level="info" if args.verbose >= 2 else "warning")
    finally:
        for voice in voices.values():
            voice.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
