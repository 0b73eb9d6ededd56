"""Name -> processor class: both the class name a mapper JSON records and the short dataset name."""

import json
from pathlib import Path
from typing import Dict, Type

from tensorflow_tts.processor.baker import BakerProcessor
from tensorflow_tts.processor.base_processor import BaseProcessor, DataProcessorError, find_mapper_file
from tensorflow_tts.processor.jsut import JSUTProcessor
from tensorflow_tts.processor.kss import KSSProcessor
from tensorflow_tts.processor.libritts import LibriTTSProcessor
from tensorflow_tts.processor.ljspeech import LJSpeechProcessor
from tensorflow_tts.processor.ljspeechu import LJSpeechUltimateProcessor
from tensorflow_tts.processor.synpaflex import SynpaflexProcessor
from tensorflow_tts.processor.thorsten import ThorstenProcessor

PROCESSOR_CLASSES = (
    LJSpeechProcessor,
    LJSpeechUltimateProcessor,
    BakerProcessor,
    LibriTTSProcessor,
    KSSProcessor,
    ThorstenProcessor,
    SynpaflexProcessor,
    JSUTProcessor,
)

# "LJSpeechProcessor" and "ljspeech" both resolve; lookups ignore case.
PROCESSORS: Dict[str, Type[BaseProcessor]] = {}
for _cls in PROCESSOR_CLASSES:
    PROCESSORS[_cls.__name__.lower()] = _cls
    PROCESSORS[_cls.dataset_name] = _cls

PRETRAINED_DIR = Path(__file__).parent / "pretrained"


def get_processor_class(name: str) -> Type[BaseProcessor]:
    """The processor class for a `processor_name` ("BakerProcessor") or dataset name ("baker")."""
    try:
        return PROCESSORS[name.lower()]
    except KeyError:
        known = ", ".join(sorted({cls.dataset_name for cls in PROCESSOR_CLASSES}))
        raise DataProcessorError(f"unknown processor {name!r}; known datasets: {known}") from None


def default_mapper_path(name: str) -> Path:
    """The mapper JSON shipped with the package for a processor or dataset name."""
    return PRETRAINED_DIR / get_processor_class(name).mapper_file_name()


def load_processor(path) -> BaseProcessor:
    """A processor of the class named in the mapper JSON (a file, or a folder holding one)."""
    mapper_file = find_mapper_file(path)
    try:
        name = json.loads(mapper_file.read_text(encoding="utf-8-sig"))["processor_name"]
    except (OSError, ValueError, KeyError) as error:
        raise DataProcessorError(f"{mapper_file}: cannot read processor_name ({error})") from error
    return get_processor_class(name).from_pretrained(mapper_file)
