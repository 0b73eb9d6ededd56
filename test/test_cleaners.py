"""Cleaners turn raw text into what is spoken; the English readings are frozen for old voices."""

import pytest

from tensorflow_tts.processor.text.cleaners import clean_text, english_cleaners, french_cleaners, german_cleaners
from tensorflow_tts.processor.text.german import number_to_words as german_number
from tensorflow_tts.processor.text.korean import native_korean_number, normalize, sino_korean_number, text_to_jamo
from tensorflow_tts.processor.text.number_norm import normalize_numbers


@pytest.mark.parametrize(
    "raw, spoken",
    [
        ("$5.50", "five dollars, fifty cents"),
        ("$1", "one dollar"),
        ("$0.01", "one cent"),
        ("Dr. Smith", "doctor smith"),
        ("the 3rd", "the third"),
        ("in 1999", "in nineteen ninety-nine"),
        ("in 2005", "in two thousand five"),
        ("1900", "nineteen hundred"),
        ("3.5 km", "three point five km"),
        ("7,500", "seven thousand, five hundred"),
        ("Mr. and Mrs. Lee, St. Louis, Capt. Kirk", "mister and misess lee, saint louis, captain kirk"),
        ("Café   naïve", "cafe naive"),
    ],
)
def test_english_cleaners_spell_out_what_is_read(raw, spoken):
    assert english_cleaners(raw) == spoken


def test_years_are_read_as_years_but_grouped_numbers_as_quantities():
    # Plain four-digit numbers between 1000 and 3000 keep the original's year reading,
    # which old LJSpeech voices were trained on; thousands separators mark a quantity.
    assert english_cleaners("in 1234") == "in twelve thirty-four"
    assert english_cleaners("1,234") == "one thousand, two hundred thirty-four"
    assert english_cleaners("3,234") == "three thousand, two hundred thirty-four"
    assert english_cleaners("1,234.5") == "twelve thirty-four point five"


def test_times_and_percent_signs_are_left_as_the_original_left_them():
    assert normalize_numbers("10:30") == "ten:thirty"
    assert english_cleaners("45%") == "forty-five%"


def test_english_cleaners_keep_the_ends_of_the_text():
    # The ids of existing voices include a leading/trailing space when the text had one.
    assert english_cleaners("  Hi  there ") == " hi there "


def test_clean_text_runs_cleaners_by_name_and_rejects_unknown_names():
    assert clean_text("Hello  World", ["basic_cleaners"]) == "hello world"
    assert clean_text("Hello", None) == "Hello"
    with pytest.raises(ValueError, match="unknown cleaner 'klingon_cleaners'"):
        clean_text("Hello", "klingon_cleaners")


def test_korean_syllables_split_into_lead_vowel_and_tail_jamo():
    assert text_to_jamo("한국") == "\u1112\u1161\u11ab\u1100\u116e\u11a8"
    assert text_to_jamo("가 a.") == "\u1100\u1161 a."


@pytest.mark.parametrize("number, spoken", [(0, "영"), (10, "십"), (15, "십오"), (110, "백십"), (10000, "만"),
                                            (12345, "만이천삼백사십오"), (20000000, "이천만"), (100000000, "일억")])
def test_sino_korean_numbers(number, spoken):
    assert sino_korean_number(number) == spoken


def test_native_korean_numbers_shorten_before_a_counter():
    assert native_korean_number(21) == "스물하나"
    assert native_korean_number(21, before_counter=True) == "스물한"
    assert native_korean_number(20, before_counter=True) == "스무"
    assert normalize("사과 3개와 배 2명") == "사과 세 개와 배 두 명"


def test_korean_normalize_reads_latin_letters_and_decimals():
    assert normalize(" TV 3.5% ") == "티브이 삼점오퍼센트"


@pytest.mark.parametrize("number, spoken", [(1, "eins"), (21, "einundzwanzig"), (101, "einhunderteins"),
                                            (1234, "eintausendzweihundertvierunddreißig"),
                                            (2000000, "zwei millionen")])
def test_german_numbers(number, spoken):
    assert german_number(number) == spoken


def test_german_cleaners_read_money_years_and_abbreviations_and_keep_umlauts():
    text = "Im Jahr 1984 kostete es 3,50 €, z.B. bei Dr. Müller."
    assert german_cleaners(text) == (
        "im jahr neunzehnhundertvierundachtzig kostete es drei euro fünfzig cent, "
        "zum beispiel bei doktor müller."
    )


def test_french_cleaners_keep_french_accents_and_plain_the_quotes():
    assert french_cleaners("L’Été à Noël, Ångström") == "l'été à noël, angström"
