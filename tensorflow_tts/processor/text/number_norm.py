"""Spell out English numbers, money and ordinals the way the LJSpeech front end always has.

The readings are frozen where old voices depend on them: voices trained with the original
TensorFlowTTS (and keithito's Tacotron before it) saw exactly these strings, so "1984"
reads like a year and "10:30" stays "ten:thirty". One deliberate change: a number written
with thousands separators ("1,234") is a quantity, never a year, so it is read as a
cardinal; the original dropped the commas first and said "twelve thirty-four".
"""

import functools
import re


@functools.lru_cache(maxsize=1)
def _inflect_engine():
    # inflect takes about a second to import; only English text should pay for it.
    import inflect

    return inflect.engine()


# Order matters: commas go first so "$1,000.50" is seen as 1000.50; money before plain
# decimals so the cents are read as cents; ordinals before cardinals so "3rd" stays whole.
_GROUPED_NUMBER = re.compile(r"([0-9][0-9,]+[0-9])")
_POUNDS = re.compile(r"£([0-9,]*[0-9]+)")
_DOLLARS = re.compile(r"\$([0-9.,]*[0-9]+)")
_DECIMAL = re.compile(r"([0-9]+\.[0-9]+)")
_ORDINAL = re.compile(r"[0-9]+(st|nd|rd|th)")
_CARDINAL = re.compile(r"[0-9]+")


_THOUSANDS_GROUPED = re.compile(r"[0-9]{1,3}(,[0-9]{3})+")


def _drop_commas(match: re.Match) -> str:
    number = match.group(1)
    preceding = match.string[max(match.start() - 1, 0) : match.start()]
    following = match.string[match.end() : match.end() + 2]
    is_money = preceding in ("$", "£")
    is_decimal = re.fullmatch(r"\.[0-9]", following) is not None
    if _THOUSANDS_GROUPED.fullmatch(number) and not (is_money or is_decimal):
        return _inflect_engine().number_to_words(int(number.replace(",", "")), andword="")
    return number.replace(",", "")


def _unit(count: int, singular: str) -> str:
    return singular if count == 1 else singular + "s"


def _spell_dollars(match: re.Match) -> str:
    amount = match.group(1)
    parts = amount.split(".")
    if len(parts) > 2:  # "$1.2.3": not money we understand, keep the digits
        return amount + " dollars"
    dollars = int(parts[0]) if parts[0] else 0
    cents = int(parts[1]) if len(parts) > 1 and parts[1] else 0
    if dollars and cents:
        return f"{dollars} {_unit(dollars, 'dollar')}, {cents} {_unit(cents, 'cent')}"
    if dollars:
        return f"{dollars} {_unit(dollars, 'dollar')}"
    if cents:
        return f"{cents} {_unit(cents, 'cent')}"
    return "zero dollars"


def _spell_decimal(match: re.Match) -> str:
    return match.group(1).replace(".", " point ")


def _spell_ordinal(match: re.Match) -> str:
    return _inflect_engine().number_to_words(match.group(0))


def _spell_cardinal(match: re.Match) -> str:
    number = int(match.group(0))
    if 1000 < number < 3000:
        # Read like a year: 1984 -> nineteen eighty-four, 2005 -> two thousand five.
        if number == 2000:
            return "two thousand"
        if 2000 < number < 2010:
            return "two thousand " + _inflect_engine().number_to_words(number % 100)
        if number % 100 == 0:
            return _inflect_engine().number_to_words(number // 100) + " hundred"
        pairs = _inflect_engine().number_to_words(number, andword="", zero="oh", group=2)
        return pairs.replace(", ", " ")
    return _inflect_engine().number_to_words(number, andword="")


def normalize_numbers(text: str) -> str:
    """Spell out every number in `text`: "$3.50" -> "3 dollars, 50 cents" -> words."""
    text = _GROUPED_NUMBER.sub(_drop_commas, text)
    text = _POUNDS.sub(r"\1 pounds", text)
    text = _DOLLARS.sub(_spell_dollars, text)
    text = _DECIMAL.sub(_spell_decimal, text)
    text = _ORDINAL.sub(_spell_ordinal, text)
    text = _CARDINAL.sub(_spell_cardinal, text)
    return text
