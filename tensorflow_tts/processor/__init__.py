"""Text front ends: one processor per corpus turns text into symbol ids and reads its corpus layout."""

from tensorflow_tts.processor.baker import BakerProcessor
from tensorflow_tts.processor.base_processor import BaseProcessor, DataProcessorError
from tensorflow_tts.processor.jsut import JSUTProcessor
from tensorflow_tts.processor.kss import KSSProcessor
from tensorflow_tts.processor.libritts import LibriTTSProcessor
from tensorflow_tts.processor.ljspeech import LJSpeechProcessor
from tensorflow_tts.processor.ljspeechu import LJSpeechUltimateProcessor
from tensorflow_tts.processor.registry import (
    PROCESSORS,
    default_mapper_path,
    get_processor_class,
    load_processor,
)
from tensorflow_tts.processor.synpaflex import SynpaflexProcessor
from tensorflow_tts.processor.thorsten import ThorstenProcessor

__all__ = [
    "BaseProcessor",
    "DataProcessorError",
    "LJSpeechProcessor",
    "LJSpeechUltimateProcessor",
    "BakerProcessor",
    "LibriTTSProcessor",
    "KSSProcessor",
    "ThorstenProcessor",
    "SynpaflexProcessor",
    "JSUTProcessor",
    "PROCESSORS",
    "get_processor_class",
    "default_mapper_path",
    "load_processor",
]
