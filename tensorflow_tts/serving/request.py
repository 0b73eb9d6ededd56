"""A synthesis request as the server accepts it: every field checked, every refusal naming the field.

Nothing of a request reaches the filesystem: a voice is chosen by name among those loaded.
"""

import dataclasses
import json
import math

FORMATS = ("wav", "pcm16")
MAX_BODY_BYTES = 1 << 20


class RequestError(Exception):
    """A refused request: HTTP status, the field at fault (None for the body) and why."""

    def __init__(self, status, field, reason):
        super().__init__(f"{field or 'body'}: {reason}")
        self.status, self.field, self.reason = status, field, reason

    def to_json(self):
        return {"error": {"field": self.field, "reason": self.reason}}


@dataclasses.dataclass
class SpeechRequest:
    text: str
    voice: str
    speaker: int = 0
    speed: float = 1.0
    f0: float = 1.0
    energy: float = 1.0
    format: str = "wav"
    stream: bool = False


FIELDS = tuple(field.name for field in dataclasses.fields(SpeechRequest))


def json_body(raw):
    """The request body (bytes) -> its JSON object; RequestError (400) when it is not one."""
    if len(raw) > MAX_BODY_BYTES:
        raise RequestError(413, None, f"the body is {len(raw)} bytes, more than {MAX_BODY_BYTES}")
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise RequestError(400, None, f"the body is not UTF-8 (byte {raw[error.start]:#04x} at {error.start})") from None
    try:
        values = json.loads(decoded)
    except json.JSONDecodeError as error:
        raise RequestError(400, None, f"the body is not valid JSON ({error.msg} at line {error.lineno} column {error.colno})") from None
    if not isinstance(values, dict):
        raise RequestError(400, None, f"expected a JSON object, got {type(values).__name__}")
    return values


def _ratio(name, value):
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise RequestError(422, name, f"must be a number, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RequestError(422, name, f"must be a number, got {json.dumps(value)}")
    if not math.isfinite(value) or value <= 0:
        raise RequestError(422, name, f"must be a finite positive number (1.0 = unchanged), got {value}")
    return float(value)


def _flag(value):
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "1", "yes", "false", "0", "no"):
        return value.lower() in ("true", "1", "yes")
    raise RequestError(422, "stream", f"must be true or false, got {json.dumps(value)}")


def _speaker(voice, value):
    if isinstance(value, str) and value in voice.speakers:
        return voice.speakers[value]
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        known = ", ".join(sorted(voice.speakers)) or f"ids 0..{voice.n_speakers - 1}"
        raise RequestError(422, "speaker", f"unknown speaker {json.dumps(value)} of voice {voice.name}; known: {known}")
    if not 0 <= value < voice.n_speakers:
        raise RequestError(422, "speaker", f"unknown speaker id {value} of voice {voice.name}; ids are 0..{voice.n_speakers - 1}")
    return value


def _text(voice, value, max_chars):
    if not isinstance(value, str):
        raise RequestError(422, "text", f"must be a string, got {json.dumps(value)[:40]}")
    if not value.strip():
        raise RequestError(422, "text", "is empty: nothing to synthesize")
    if len(value) > max_chars:
        raise RequestError(422, "text", f"is {len(value)} characters, more than the limit of {max_chars}")
    processor = voice.synthesizer.processor
    _, dropped = processor.encode(value)
    if dropped:
        unknown = " ".join(sorted({repr(symbol) for symbol in dropped}))
        raise RequestError(422, "text", f"has characters with no symbol in voice {voice.name}: {unknown}")
    return value


def parse_request(values, voices, max_chars):
    """A mapping (JSON object or query parameters) -> SpeechRequest; RequestError on the first bad field.

    voices: {name: Voice}; the first is the default voice.
    """
    unknown = sorted(set(values) - set(FIELDS))
    if unknown:
        raise RequestError(422, unknown[0], f"unknown field; known fields are {', '.join(FIELDS)}")
    if "text" not in values:
        raise RequestError(422, "text", "is required")
    name = values.get("voice", next(iter(voices)))
    if not isinstance(name, str) or name not in voices:
        raise RequestError(422, "voice", f"unknown voice {json.dumps(name)[:70]}; known: {', '.join(voices)}")
    voice = voices[name]
    request_format = values.get("format", "wav")
    if request_format not in FORMATS:
        raise RequestError(422, "format", f"must be one of {', '.join(FORMATS)}, got {json.dumps(request_format)[:40]}")
    stream = _flag(values.get("stream", False))
    if stream and voice.synthesizer.vocoder is None:
        raise RequestError(422, "stream", f"voice {name} is one text2wav model and cannot stream")
    return SpeechRequest(
        text=_text(voice, values["text"], max_chars),
        voice=name,
        speaker=_speaker(voice, values.get("speaker", 0)),
        speed=_ratio("speed", values.get("speed", 1.0)),
        f0=_ratio("f0", values.get("f0", 1.0)),
        energy=_ratio("energy", values.get("energy", 1.0)),
        format=request_format,
        stream=stream,
    )
