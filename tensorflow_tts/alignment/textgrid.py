"""Praat TextGrid files (e.g. from the Montreal Forced Aligner) -> token durations in mel frames.

Our own small reader for both text formats Praat writes (the long "ooTextFile" one and the
short one): like Praat itself, it reads the sequence of numbers, quoted strings and
``<flags>`` and ignores the ``name =`` labels and ``[index]`` markers between them.
"""

import dataclasses
import re
from pathlib import Path

import numpy as np

from tensorflow_tts.alignment.durations import fix_durations

_TOKEN = re.compile(
    r'"(?P<string>(?:[^"]|"")*)"'  # a string; "" inside is an escaped quote
    r"|\[[^\]]*\]"  # [index] markers of the long format
    r"|(?P<flag><[a-z]+>)"
    r"|!.*"  # a comment, to the end of the line
    r"|(?<![\w.])(?P<number>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?![\w.])"
)


class TextGridError(ValueError):
    """A file that is not a TextGrid we can read (the message names the file and the problem)."""


@dataclasses.dataclass
class Interval:
    xmin: float
    xmax: float
    text: str


@dataclasses.dataclass
class Tier:
    name: str
    kind: str  # "IntervalTier" or "TextTier"
    xmin: float
    xmax: float
    intervals: list  # Interval for an IntervalTier; for a TextTier, Interval(time, time, mark)


@dataclasses.dataclass
class TextGrid:
    xmin: float
    xmax: float
    tiers: list

    def tier(self, name):
        for tier in self.tiers:
            if tier.name == name:
                return tier
        raise KeyError(f"no tier {name!r}; the tiers are {', '.join(repr(t.name) for t in self.tiers)}")


def _read_text(path):
    raw = Path(path).read_bytes()
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _tokens(text):
    for match in _TOKEN.finditer(text):
        if match.group("string") is not None:
            yield match.group("string").replace('""', '"')
        elif match.group("number") is not None:
            yield float(match.group("number"))
        elif match.group("flag") is not None:
            yield match.group("flag")


def parse_textgrid(text, source="<string>"):
    """A TextGrid from the text of a long- or short-format file."""
    tokens = list(_tokens(text))
    position = 0

    def take(kind):
        nonlocal position
        if position >= len(tokens):
            raise TextGridError(f"{source}: the file ends early (expected a {kind.__name__})")
        value = tokens[position]
        position += 1
        if kind is float and isinstance(value, float):
            return value
        if kind is str and isinstance(value, str) and not value.startswith("<"):
            return value
        raise TextGridError(f"{source}: expected a {kind.__name__} at item {position}, got {value!r}")

    if take(str) != "ooTextFile" or take(str) != "TextGrid":
        raise TextGridError(f"{source}: not a Praat TextGrid (it must start with File type = \"ooTextFile\", Object class = \"TextGrid\")")
    xmin, xmax = take(float), take(float)
    if position < len(tokens) and tokens[position] == "<exists>":
        position += 1
    elif position < len(tokens) and tokens[position] == "<absent>":
        return TextGrid(xmin, xmax, [])
    tiers = []
    for _ in range(int(take(float))):
        kind, name = take(str), take(str)
        tier_min, tier_max = take(float), take(float)
        count = int(take(float))
        items = []
        for _ in range(count):
            if kind == "IntervalTier":
                start, end, label = take(float), take(float), take(str)
            elif kind == "TextTier":
                start = take(float)
                end, label = start, take(str)
            else:
                raise TextGridError(f"{source}: unknown tier class {kind!r}")
            items.append(Interval(start, end, label))
        tiers.append(Tier(name, kind, tier_min, tier_max, items))
    return TextGrid(xmin, xmax, tiers)


def read_textgrid(path):
    """Parse a .TextGrid file (UTF-8, UTF-16 with BOM or Latin-1)."""
    return parse_textgrid(_read_text(path), source=str(path))


def interval_durations(intervals, sampling_rate, hop_size, num_frames=None):
    """Frames per interval of a tier: interval ends rounded to frames, then differenced.

    Rounding the ends (not each length) keeps the total right: it is round(end * sr / hop).
    With ``num_frames`` (the utterance's mel length), the total is repaired to it with
    `fix_durations` (the audio may have a frame more or less than the TextGrid covers).

    Args: intervals: Interval list in time order; sampling_rate, hop_size: of the mels.
    Returns: (len(intervals),) int32.
    """
    if not intervals:
        raise TextGridError("the tier has no interval")
    frames_per_second = sampling_rate / hop_size
    ends = np.rint(np.array([interval.xmax for interval in intervals]) * frames_per_second).astype(np.int64)
    ends = np.maximum.accumulate(np.maximum(ends, 0))
    durations = np.diff(ends, prepend=0).astype(np.int32)
    if num_frames is not None:
        durations = fix_durations(durations, num_frames)
    return durations


def textgrid_to_durations(path, sampling_rate, hop_size, tier="phones", num_frames=None, num_tokens=None):
    """(labels, durations) of one TextGrid tier.

    ``num_tokens``: the number of token ids of the utterance. The tier must have that many
    intervals, or one fewer, in which case a final 0 is added for the processor's EOS token.

    Raises: TextGridError (naming the file) when the counts do not match.
    """
    grid = read_textgrid(path)
    try:
        intervals = grid.tier(tier).intervals
    except KeyError as error:
        raise TextGridError(f"{path}: {error.args[0]}") from None
    labels = [interval.text for interval in intervals]
    durations = interval_durations(intervals, sampling_rate, hop_size, num_frames)
    if num_tokens is not None and num_tokens != len(intervals):
        if num_tokens == len(intervals) + 1:
            durations = np.append(durations, 0).astype(np.int32)
            labels.append("<eos>")
        else:
            raise TextGridError(
                f"{path}: tier {tier!r} has {len(intervals)} intervals but the utterance has {num_tokens} "
                "token ids; the ids must come from the same symbol sequence (one token per interval, "
                "silences included)"
            )
    return labels, durations
