"""LJSpeech Ultimate and LibriTTS keep the original TensorFlowTTS symbol tables and text rules.

The original repository ships a mapper JSON for each (github.com/TensorSpeech/TensorFlowTTS,
tensorflow_tts/processor/pretrained/: ljspeechu_mapper.json at commit cd3a5e1f99, libritts_mapper.json
at commit 833add5346). We keep no copy of them: `ORIGINAL_TABLES` holds the size, processor
name and SHA-256 of each file's symbol table (the symbols in id order, as a JSON list), taken
from those files. The tables are also rebuilt here from the rules of the original sources
(processor/ljspeechu.py, libritts.py); the expected ids of every example come from that
rebuilt table, which the fingerprint ties to the original file.
"""

import hashlib
import json

import pytest

from tensorflow_tts.configs.legacy_vocab import LEGACY_DATASET_VOCAB_SIZES
from tensorflow_tts.processor import LibriTTSProcessor, LJSpeechUltimateProcessor, get_processor_class, load_processor

ORIGINAL_TABLES = {
    "ljspeechu": (96, "LJSpeechUltimateProcessor", "987aae554f8c5f1ede544d68a0568cce37702f51c3643de1f2115c1f9038762f"),
    "libritts": (86, "LibriTTSProcessor", "7aca455778664dc41696f9580182a6aca3d890c3a841265ffbe7f04dc2f09746"),
}


def fingerprint(symbols):
    return hashlib.sha256(json.dumps(list(symbols)).encode()).hexdigest()


VOWELS = ["AA", "AE", "AH", "AO", "AW", "AY", "EH", "ER", "EY", "IH", "IY", "OW", "OY", "UH", "UW"]
CONSONANTS = ["B", "CH", "D", "DH", "F", "G", "HH", "JH", "K", "L", "M", "N", "NG", "P", "R", "S", "SH",
              "T", "TH", "V", "W", "Y", "Z", "ZH"]


def original_ljspeechu_table():
    # pad, "-", the punctuation "!'(),.:;?" (no space: word boundaries were left out on
    # purpose), "@" + the CMU phones (vowels bare and with stress 0-2) in alphabetical order, eos.
    phones = sorted([vowel + stress for vowel in VOWELS for stress in ("", "0", "1", "2")] + CONSONANTS)
    return ["pad", "-"] + list("!'(),.:;?") + ["@" + phone for phone in phones] + ["eos"]


def original_libritts_table():
    # g2p-en's G2p().phonemes (4 decoder specials, then the CMU phones with stress 0-2 and a
    # bare UW, alphabetical), then SIL and END, all with "@"; then "!'(),.:;? " without.
    phones = sorted([vowel + stress for vowel in VOWELS for stress in "012"] + CONSONANTS + ["UW"])
    specials = ["<pad>", "<unk>", "<s>", "</s>"]
    return ["@" + name for name in specials + phones + ["SIL", "END"]] + list("!'(),.:;? ")


RULES = {LJSpeechUltimateProcessor: original_ljspeechu_table, LibriTTSProcessor: original_libritts_table}


def original_ids(cls, symbols):
    table = {symbol: index for index, symbol in enumerate(RULES[cls]())}
    return [table[symbol] for symbol in symbols]


# --- the tables ----------------------------------------------------------------------------


@pytest.mark.parametrize("cls", list(RULES), ids=lambda cls: cls.dataset_name)
def test_our_table_is_the_one_the_original_rules_build(cls):
    processor = cls()
    assert processor.symbols == RULES[cls]()
    assert processor.id_to_symbol == dict(enumerate(RULES[cls]()))


@pytest.mark.parametrize("cls", list(RULES), ids=lambda cls: cls.dataset_name)
def test_our_table_and_the_rebuilt_one_are_the_table_the_original_ships(cls):
    size, processor_name, digest = ORIGINAL_TABLES[cls.dataset_name]
    mapper = cls().to_mapper()
    ours = [mapper["id_to_symbol"][str(index)] for index in range(len(mapper["id_to_symbol"]))]
    assert (len(ours), mapper["processor_name"], fingerprint(ours)) == (size, processor_name, digest)
    assert fingerprint(RULES[cls]()) == digest


def test_ljspeechu_has_96_symbols_and_no_word_boundary():
    processor = LJSpeechUltimateProcessor()
    assert processor.vocab_size == 96 and " " not in processor.symbol_to_id
    landmarks = {"pad": 0, "-": 1, "!": 2, "?": 10, "@AA": 11, "@HH": 53, "@ZH": 94, "eos": 95}
    assert {symbol: processor.symbol_to_id[symbol] for symbol in landmarks} == landmarks
    assert processor.eos_id == 95


def test_libritts_has_86_symbols_from_g2p_en_and_no_eos():
    processor = LibriTTSProcessor()
    assert processor.vocab_size == 86 and processor.eos_id is None
    landmarks = {"@<pad>": 0, "@</s>": 3, "@AA0": 4, "@UW": 65, "@ZH": 73, "@SIL": 74, "@END": 75, "!": 76, " ": 85}
    assert {symbol: processor.symbol_to_id[symbol] for symbol in landmarks} == landmarks


def test_every_1_8_dataset_name_sizes_the_vocabulary_as_our_processor_of_that_name():
    for name, size in LEGACY_DATASET_VOCAB_SIZES.items():
        assert get_processor_class(name)().vocab_size == size, name


@pytest.mark.parametrize("cls", list(RULES), ids=lambda cls: cls.dataset_name)
def test_a_mapper_in_the_original_layout_loads_into_our_processor_and_reads_text_the_same(cls, tmp_path):
    path = tmp_path / f"{cls.dataset_name}_mapper.json"
    path.write_text(json.dumps(cls().to_mapper()), encoding="utf-8")
    loaded = load_processor(path)
    assert type(loaded) is cls
    text = "The quick brown fox, at 5 o'clock."
    assert loaded.text_to_sequence(text) == cls().text_to_sequence(text)


# --- LJSpeech Ultimate: G2P on the raw text, no word boundaries, eos ------------------------


def test_ljspeechu_reads_english_without_word_boundaries_and_ends_with_eos():
    processor = LJSpeechUltimateProcessor()
    symbols = ["@HH", "@AH0", "@L", "@OW1", ",", "@W", "@ER1", "@L", "@D", ".", "eos"]
    assert processor.text_to_sequence("Hello, world.") == original_ids(LJSpeechUltimateProcessor, symbols)


def test_ljspeechu_runs_g2p_on_the_raw_text_like_the_original():
    # No cleaner first: "Mr." is the dictionary word "mr" and keeps its period; g2p-en
    # deletes ";" and ":" before it reads the text.
    processor = LJSpeechUltimateProcessor()
    ids = processor.text_to_sequence("Mr. Smith; he said: hi")
    assert processor.sequence_to_symbols(ids) == (
        ["@M", "@IH1", "@S", "@T", "@ER0", ".", "@S", "@M", "@IH1", "@TH", "@HH", "@IY1", "@S", "@EH1", "@D"]
        + ["@HH", "@AY1", "eos"]
    )


def test_ljspeechu_maps_punctuation_between_brace_blocks_character_by_character():
    processor = LJSpeechUltimateProcessor()
    symbols = ["@HH", "@AH0", "@L", "@OW1", ";", "(", "@W", "@ER1", "@L", "@D", ")", "eos"]
    assert processor.text_to_sequence("{HH AH0 L OW1}; ({W ER1 L D})") == original_ids(
        LJSpeechUltimateProcessor, symbols
    )


def test_ljspeechu_reads_the_original_filelist_with_one_speaker(tmp_path):
    (tmp_path / "filelist.txt").write_text(
        "wavs/LJ001-0001.wav|{HH AH0 L OW1}.\nwavs/LJ001-0002.wav|Hi.\n", encoding="utf-8"
    )
    processor = LJSpeechUltimateProcessor(data_dir=str(tmp_path))
    assert processor.items == [
        ("{HH AH0 L OW1}.", str(tmp_path / "wavs" / "LJ001-0001.wav"), "ljspeech"),
        ("Hi.", str(tmp_path / "wavs" / "LJ001-0002.wav"), "ljspeech"),
    ]
    assert processor.speakers_map == {"ljspeech": 0}
    sample = processor.get_one_sample(processor.items[0])
    expected = original_ids(LJSpeechUltimateProcessor, ["@HH", "@AH0", "@L", "@OW1", ".", "eos"])
    assert sample["text_ids"].tolist() == expected


# --- LibriTTS: aligned phone strings (1.8 training) and English (1.8 inference) -------------


def test_libritts_reads_a_1_8_training_transcript_phone_by_phone(tmp_path):
    # As examples/mfa_extraction/txt_grid_parser.py wrote it: speaker/utt|phones|speaker.
    (tmp_path / "train.txt").write_text(
        "200/200_124139_000001_000000|SIL HH AH0 L OW1 SIL W ER1 L D END|200\n"
        "250/250_142276_000002_000000|DH AH0 SIL|250\n",
        encoding="utf-8",
    )
    processor = LibriTTSProcessor(data_dir=str(tmp_path))
    assert processor.speakers_map == {"200": 0, "250": 1}
    assert processor.items[0][1] == str(tmp_path / "200" / "200_124139_000001_000000.wav")
    first, second = (processor.get_one_sample(item)["text_ids"].tolist() for item in processor.items)
    assert first == original_ids(
        LibriTTSProcessor, ["@SIL", "@HH", "@AH0", "@L", "@OW1", "@SIL", "@W", "@ER1", "@L", "@D", "@END"]
    )
    assert second == original_ids(LibriTTSProcessor, ["@DH", "@AH0", "@END"])  # a closing SIL is END


def test_libritts_reads_english_like_the_original_inference_mode():
    # G2P, word boundaries dropped, no END and no eos.
    assert LibriTTSProcessor().text_to_sequence("Hello world") == original_ids(
        LibriTTSProcessor, ["@HH", "@AH0", "@L", "@OW1", "@W", "@ER1", "@L", "@D"]
    )


def test_libritts_reads_punctuation_as_the_silence_its_voices_learnt():
    # The original failed here (it looked up "@,"); ";" is dropped as g2p-en dropped it.
    processor = LibriTTSProcessor()
    ids = processor.text_to_sequence("Hello, world; well.")
    assert processor.sequence_to_symbols(ids) == (
        ["@HH", "@AH0", "@L", "@OW1", "@SIL", "@W", "@ER1", "@L", "@D", "@W", "@EH1", "@L", "@END"]
    )
