"""Text cleaners: turn raw text into the spoken-form string a processor maps to symbols.

A cleaner is a function `str -> str`; processors name theirs (`cleaner_names`) and
`clean_text` runs them in order. `english_cleaners` is frozen: the LJSpeech ids of
existing voices depend on every character it returns.
"""

import re
from typing import Callable, Dict, Iterable, Union

from unidecode import unidecode

from tensorflow_tts.processor.text.number_norm import normalize_numbers

_WHITESPACE = re.compile(r"\s+")

# Expanded only when followed by a period; "st." is "saint" (not "street") as it always was.
_ENGLISH_ABBREVIATIONS = {
    "mrs": "misess",
    "mr": "mister",
    "dr": "doctor",
    "st": "saint",
    "co": "company",
    "jr": "junior",
    "maj": "major",
    "gen": "general",
    "drs": "doctors",
    "rev": "reverend",
    "lt": "lieutenant",
    "hon": "honorable",
    "sgt": "sergeant",
    "capt": "captain",
    "esq": "esquire",
    "ltd": "limited",
    "col": "colonel",
    "ft": "fort",
}
_ENGLISH_ABBREVIATION_PATTERNS = [
    (re.compile(rf"\b{short}\.", re.IGNORECASE), full) for short, full in _ENGLISH_ABBREVIATIONS.items()
]


def lowercase(text: str) -> str:
    return text.lower()


def collapse_whitespace(text: str) -> str:
    """Runs of whitespace become one space; the ends are kept (a trailing space is a symbol)."""
    return _WHITESPACE.sub(" ", text)


def convert_to_ascii(text: str) -> str:
    """Transliterate to ASCII: "café" -> "cafe", "£" -> "PS"."""
    return unidecode(text)


def expand_abbreviations(text: str) -> str:
    for pattern, full in _ENGLISH_ABBREVIATION_PATTERNS:
        text = pattern.sub(full, text)
    return text


def expand_numbers(text: str) -> str:
    return normalize_numbers(text)


def basic_cleaners(text: str) -> str:
    """Lower case and collapse whitespace; no transliteration (any script)."""
    return collapse_whitespace(lowercase(text))


def transliteration_cleaners(text: str) -> str:
    """ASCII transliteration, lower case, whitespace collapse (non-English Latin text)."""
    return collapse_whitespace(lowercase(convert_to_ascii(text)))


def english_cleaners(text: str) -> str:
    """English: ASCII, lower case, numbers/money/ordinals spelled out, abbreviations expanded."""
    text = convert_to_ascii(text)
    text = lowercase(text)
    text = expand_numbers(text)
    text = expand_abbreviations(text)
    return collapse_whitespace(text)


def korean_cleaners(text: str) -> str:
    """Korean: numbers and Latin letters read in Korean, then hangul split into jamo."""
    from tensorflow_tts.processor.text import korean

    return korean.text_to_jamo(korean.normalize(text))


def german_cleaners(text: str) -> str:
    """German: numbers, money and abbreviations spelled out, lower case, umlauts kept."""
    from tensorflow_tts.processor.text import german

    return collapse_whitespace(lowercase(german.normalize(text)))


_FRENCH_LETTERS = set("abcdefghijklmnopqrstuvwxyzéèàùâêîôûçäëïöüÿœæ")
_FRENCH_QUOTES = str.maketrans({"’": "'", "‘": "'", "«": '"', "»": '"', "–": "-", "—": "-"})


def french_cleaners(text: str) -> str:
    """French: lower case, typographic quotes/dashes made plain, accents outside French transliterated."""
    text = lowercase(text).translate(_FRENCH_QUOTES)
    text = "".join(
        char if char in _FRENCH_LETTERS or char.isascii() else unidecode(char) for char in text
    )
    return collapse_whitespace(text)


CLEANERS: Dict[str, Callable[[str], str]] = {
    "basic_cleaners": basic_cleaners,
    "transliteration_cleaners": transliteration_cleaners,
    "english_cleaners": english_cleaners,
    "korean_cleaners": korean_cleaners,
    "german_cleaners": german_cleaners,
    "french_cleaners": french_cleaners,
}


def clean_text(text: str, cleaner_names: Union[str, Iterable[str], None]) -> str:
    """Run the named cleaners in order; `None` or `[]` returns the text unchanged."""
    if cleaner_names is None:
        return text
    if isinstance(cleaner_names, str):
        cleaner_names = [cleaner_names]
    for name in cleaner_names:
        if name not in CLEANERS:
            raise ValueError(f"unknown cleaner {name!r}; known: {', '.join(sorted(CLEANERS))}")
        text = CLEANERS[name](text)
    return text
