"""What the server is told: its voices and its limits, as a dataclass config read from YAML.

    host: 127.0.0.1
    port: 8000
    voices:
      - name: lj
        acoustic: models/fastspeech2
        vocoder: models/mb_melgan
        processor: models/ljspeech_mapper.json

Unknown keys are errors, in the file and in each voice.
"""

import dataclasses
import math
import re
from typing import Optional

from tensorflow_tts.configs.base_config import BaseConfig, ConfigError

VOICE_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


@dataclasses.dataclass
class VoiceConfig(BaseConfig):
    """One voice: the models `Synthesizer` loads (folder, SavedModel or .tflite) and its processor."""

    name: str = "default"
    acoustic: str = ""
    vocoder: Optional[str] = None
    processor: Optional[str] = None
    sampling_rate: Optional[int] = None
    num_threads: Optional[int] = None

    def __post_init__(self):
        if not isinstance(self.name, str) or not VOICE_NAME.match(self.name):
            raise ConfigError(f"voice name {self.name!r}: use 1-64 letters, digits, '_', '-' or '.'")
        if not self.acoustic:
            raise ConfigError(f"voice {self.name}: 'acoustic' (the acoustic model's path) is required")


@dataclasses.dataclass
class ServeConfig(BaseConfig):
    """The server: where it listens, its voices and the limits every request meets.

    batch_wait_ms: how long the first request of a batch waits for others (0 with
    max_batch_size 1: one request at a time). timeout_s: a request still unanswered
    then is cancelled with 504. max_queue: waiting requests beyond this get 503.
    """

    host: str = "127.0.0.1"
    port: int = 8000
    voices: list = dataclasses.field(default_factory=list)
    max_chars: int = 2000
    max_batch_size: int = 16
    batch_wait_ms: float = 10.0
    timeout_s: float = 60.0
    max_queue: int = 256
    chunk_frames: int = 32

    def __post_init__(self):
        self.voices = [voice if isinstance(voice, VoiceConfig) else VoiceConfig.from_dict(voice, source=f"voices[{index}]")
                       for index, voice in enumerate(self.voices or [])]
        if not self.voices:
            raise ConfigError("no voice: give at least one under 'voices' (or --acoustic on the command line)")
        names = [voice.name for voice in self.voices]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ConfigError(f"voice names must differ; repeated: {', '.join(repeated)}")
        for name in ("max_chars", "max_batch_size", "max_queue", "chunk_frames", "port"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < (0 if name == "port" else 1):
                raise ConfigError(f"{name} must be a positive integer, got {getattr(self, name)!r}")
        for name in ("batch_wait_ms", "timeout_s"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0 or (name == "timeout_s" and value == 0):
                raise ConfigError(f"{name} must be a {'positive' if name == 'timeout_s' else 'non-negative'} number, got {value!r}")

    @property
    def batching(self):
        return self.max_batch_size > 1
