"""German text in spoken form for the Thorsten front end: numbers, money, years and abbreviations."""

import re

from unidecode import unidecode

_ONES = ["null", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun",
         "zehn", "elf", "zwölf", "dreizehn", "vierzehn", "fünfzehn", "sechzehn", "siebzehn",
         "achtzehn", "neunzehn"]
_TENS = ["", "", "zwanzig", "dreißig", "vierzig", "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig"]


def _below_hundred(number: int, final: bool) -> str:
    # "eins" only when the number ends there; inside compounds it is "ein" (einundzwanzig).
    if number < 20:
        word = _ONES[number]
        return word if final or number != 1 else "ein"
    tens, ones = divmod(number, 10)
    if not ones:
        return _TENS[tens]
    return ("ein" if ones == 1 else _ONES[ones]) + "und" + _TENS[tens]


def _below_thousand(number: int, final: bool = True) -> str:
    hundreds, rest = divmod(number, 100)
    word = ""
    if hundreds:
        word = ("ein" if hundreds == 1 else _ONES[hundreds]) + "hundert"
    if rest:
        word += _below_hundred(rest, final)
    return word


def number_to_words(number: int) -> str:
    """German cardinal: 1234 -> "eintausendzweihundertvierunddreißig"."""
    if number == 0:
        return "null"
    if number < 0:
        return "minus " + number_to_words(-number)
    words = []
    for value, singular, plural in ((10**9, "eine milliarde", "milliarden"), (10**6, "eine million", "millionen")):
        count, number = divmod(number, value)
        if count:
            words.append(singular if count == 1 else f"{number_to_words(count)} {plural}")
    thousands, rest = divmod(number, 1000)
    compound = ""
    if thousands:
        compound += _below_thousand(thousands, final=False) + "tausend"
    if rest:
        compound += _below_thousand(rest)
    if compound:
        words.append(compound)
    return " ".join(words)


def year_to_words(year: int) -> str:
    """1100-1999 are read in hundreds: 1984 -> "neunzehnhundertvierundachtzig"."""
    if 1100 <= year < 2000:
        hundreds, rest = divmod(year, 100)
        return _ONES[hundreds] + "hundert" + (_below_hundred(rest, True) if rest else "")
    return number_to_words(year)


_ABBREVIATIONS = [
    (r"z\.\s?B\.", "zum Beispiel"),
    (r"u\.\s?a\.", "unter anderem"),
    (r"usw\.", "und so weiter"),
    (r"bzw\.", "beziehungsweise"),
    (r"ca\.", "circa"),
    (r"Dr\.", "Doktor"),
    (r"Prof\.", "Professor"),
    (r"Nr\.", "Nummer"),
    (r"Hr\.", "Herr"),
    (r"Fr\.", "Frau"),
    (r"St\.", "Sankt"),
]
_ABBREVIATION_PATTERNS = [(re.compile(r"(?<!\w)" + short), full) for short, full in _ABBREVIATIONS]

_THOUSANDS_DOT = re.compile(r"(?<![\d,])(\d{1,3})((?:\.\d{3})+)(?![\d,])")
_EURO = re.compile(r"€\s*(\d+)(?:,(\d{2}))?|(\d+)(?:,(\d{2}))?\s*€")
_DECIMAL = re.compile(r"(\d+),(\d+)")
_PERCENT = re.compile(r"(\d)\s*%")
_YEAR = re.compile(r"\b(?:im Jahr(?:e)?|Jahr(?:e)?|seit|bis|von|um)\s+(1[1-9]\d\d)\b")
_NUMBER = re.compile(r"\d+")
_KEEP = set("äöüßÄÖÜ")


def _euro(match: re.Match) -> str:
    euros = int(match.group(1) or match.group(3))
    cents = match.group(2) or match.group(4)
    words = f"{_count(euros)} euro"
    if cents and int(cents):
        words += f" {_count(int(cents))} cent"
    return words


def _count(number: int) -> str:
    """A number before a noun: "ein Euro", not "eins Euro"."""
    return "ein" if number == 1 else number_to_words(number)


def normalize(text: str) -> str:
    """Spoken-form German, case kept: "Am 3,5 km" -> "Am drei komma fünf km"."""
    for pattern, full in _ABBREVIATION_PATTERNS:
        text = pattern.sub(full, text)
    text = _THOUSANDS_DOT.sub(lambda m: m.group(1) + m.group(2).replace(".", ""), text)
    text = _EURO.sub(_euro, text)
    text = _PERCENT.sub(r"\1 prozent", text)
    text = _DECIMAL.sub(
        lambda m: number_to_words(int(m.group(1))) + " komma " + " ".join(_ONES[int(d)] for d in m.group(2)),
        text,
    )
    text = _YEAR.sub(lambda m: m.group(0)[: m.start(1) - m.start(0)] + year_to_words(int(m.group(1))), text)
    text = _NUMBER.sub(lambda m: number_to_words(int(m.group(0))), text)
    # Last, so "€" is read as money before it could become "EUR".
    return "".join(char if char in _KEEP or char.isascii() else unidecode(char) for char in text)
