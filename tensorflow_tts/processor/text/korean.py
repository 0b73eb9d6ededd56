"""Korean text for the KSS front end: read numbers and Latin letters in Korean, split hangul into jamo.

Hangul syllables are decomposed arithmetically into conjoining jamo (leads U+1100..,
vowels U+1161.., tails U+11A8..), one symbol each, as the KSS symbol table expects.
"""

import re

_SYLLABLE_FIRST = 0xAC00
_SYLLABLE_LAST = 0xD7A3
_VOWELS_PER_LEAD = 21
_TAILS_PER_VOWEL = 28  # including "no tail"
_LEAD_BASE = 0x1100
_VOWEL_BASE = 0x1161
_TAIL_BASE = 0x11A7  # tail index 0 means "no tail", so the first real tail is U+11A8

JAMO_LEADS = [chr(code) for code in range(0x1100, 0x1113)]
JAMO_VOWELS = [chr(code) for code in range(0x1161, 0x1176)]
JAMO_TAILS = [chr(code) for code in range(0x11A8, 0x11C3)]


def syllable_to_jamo(syllable: str) -> str:
    """"한" -> "ᄒ" + "ᅡ" + "ᆫ"; anything that is not a precomposed syllable is returned as is."""
    code = ord(syllable)
    if not _SYLLABLE_FIRST <= code <= _SYLLABLE_LAST:
        return syllable
    index = code - _SYLLABLE_FIRST
    lead, rest = divmod(index, _VOWELS_PER_LEAD * _TAILS_PER_VOWEL)
    vowel, tail = divmod(rest, _TAILS_PER_VOWEL)
    jamo = chr(_LEAD_BASE + lead) + chr(_VOWEL_BASE + vowel)
    if tail:
        jamo += chr(_TAIL_BASE + tail)
    return jamo


def text_to_jamo(text: str) -> str:
    return "".join(syllable_to_jamo(char) for char in text)


# --- numbers -----------------------------------------------------------------------------

_SINO_DIGITS = ["영", "일", "이", "삼", "사", "오", "육", "칠", "팔", "구"]
_SINO_SMALL_UNITS = ["", "십", "백", "천"]
_SINO_LARGE_UNITS = ["", "만", "억", "조", "경"]

_NATIVE_ONES = ["", "하나", "둘", "셋", "넷", "다섯", "여섯", "일곱", "여덟", "아홉"]
_NATIVE_TENS = ["", "열", "스물", "서른", "마흔", "쉰", "예순", "일흔", "여든", "아흔"]
# Before a counter the first four (and twenty) shorten: 한 개, 두 명, 세 시, 네 권, 스무 살.
_NATIVE_BEFORE_COUNTER = {"하나": "한", "둘": "두", "셋": "세", "넷": "네", "스물": "스무"}

# Counters read with native numbers (for 1..99); everything else uses Sino-Korean.
_NATIVE_COUNTERS = (
    "개", "명", "시간", "시", "살", "마리", "번", "잔", "권", "장", "병", "사람", "가지",
    "대", "그루", "송이", "켤레", "벌", "채", "척", "통", "줄", "달",
)


def sino_korean_number(number: int) -> str:
    """12345 -> "만이천삼백사십오" (a leading 1 before 십/백/천/만 is silent)."""
    if number == 0:
        return _SINO_DIGITS[0]
    words = []
    group_index = 0
    while number:
        number, group = divmod(number, 10000)
        if group:
            group_words = ""
            for position in range(3, -1, -1):
                digit = group // (10**position) % 10
                if not digit:
                    continue
                if digit == 1 and position > 0:
                    group_words += _SINO_SMALL_UNITS[position]
                else:
                    group_words += _SINO_DIGITS[digit] + _SINO_SMALL_UNITS[position]
            if group == 1 and group_index == 1:
                group_words = ""  # 10000 is "만", not "일만"
            words.append(group_words + _SINO_LARGE_UNITS[group_index])
        group_index += 1
    return "".join(reversed(words))


def native_korean_number(number: int, before_counter: bool = False) -> str:
    """1..99 in native Korean: 21 -> "스물하나" ("스물한" before a counter)."""
    tens, ones = divmod(number, 10)
    tens_word, ones_word = _NATIVE_TENS[tens], _NATIVE_ONES[ones]
    if before_counter:
        if ones_word:
            ones_word = _NATIVE_BEFORE_COUNTER.get(ones_word, ones_word)
        else:
            tens_word = _NATIVE_BEFORE_COUNTER.get(tens_word, tens_word)
    return tens_word + ones_word


_COUNTED_NUMBER = re.compile(r"(\d+)\s*(" + "|".join(_NATIVE_COUNTERS) + ")")
_DECIMAL = re.compile(r"(\d+)\.(\d+)")
_NUMBER = re.compile(r"\d+")


def _read_counted(match: re.Match) -> str:
    number, counter = int(match.group(1)), match.group(2)
    if 0 < number < 100:
        return native_korean_number(number, before_counter=True) + " " + counter
    return sino_korean_number(number) + " " + counter


def _read_decimal(match: re.Match) -> str:
    fraction = "".join(_SINO_DIGITS[int(digit)] for digit in match.group(2))
    return sino_korean_number(int(match.group(1))) + "점" + fraction


def normalize_numbers(text: str) -> str:
    text = re.sub(r"(\d),(\d{3})", r"\1\2", text)
    text = _COUNTED_NUMBER.sub(_read_counted, text)
    text = _DECIMAL.sub(_read_decimal, text)
    text = text.replace("%", "퍼센트")
    return _NUMBER.sub(lambda match: sino_korean_number(int(match.group(0))), text)


# --- Latin letters -----------------------------------------------------------------------

_LETTER_NAMES = dict(
    zip(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        [
            "에이", "비", "씨", "디", "이", "에프", "지", "에이치", "아이", "제이", "케이", "엘", "엠",
            "엔", "오", "피", "큐", "알", "에스", "티", "유", "브이", "더블유", "엑스", "와이", "지",
        ],
    )
)
_LATIN_RUN = re.compile(r"[A-Za-z]+")

_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "`": "'"})


def normalize(text: str) -> str:
    """Spoken-form Korean: "사과 3개" -> "사과 세 개", "TV" -> "티브이"."""
    text = text.strip().translate(_QUOTES)
    text = normalize_numbers(text)
    text = _LATIN_RUN.sub(lambda match: "".join(_LETTER_NAMES[c] for c in match.group(0).upper()), text)
    return text
