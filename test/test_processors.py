"""Text processors: reading each corpus layout, the sample contract, mapper JSON round trips."""

import json
import logging
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import List

import numpy as np
import pytest

from tensorflow_tts.processor import (
    PROCESSORS,
    BakerProcessor,
    BaseProcessor,
    DataProcessorError,
    KSSProcessor,
    LibriTTSProcessor,
    LJSpeechProcessor,
    LJSpeechUltimateProcessor,
    SynpaflexProcessor,
    ThorstenProcessor,
    default_mapper_path,
    get_processor_class,
    load_processor,
)
from tensorflow_tts.processor.baker import default_pinyin_dict, split_syllable
from tensorflow_tts.processor.registry import PROCESSOR_CLASSES
from tensorflow_tts.processor.text.korean import text_to_jamo

CORPUS_DIR = Path(__file__).parent / "files" / "corpus"


def write(path: Path, text: str, encoding="utf-8") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding))
    return path


@pytest.fixture
def ljspeech_dir(tmp_path):
    write(tmp_path / "metadata.csv", "LJ001-0001|Hello, world!|Hello, world!\nLJ001-0002|It's $5.|It's five dollars.\n")
    return tmp_path


# --- LJSpeech and the shared behaviour of every processor ---------------------------------


def test_ljspeech_reads_metadata_normalized_column_and_wav_paths(ljspeech_dir):
    processor = LJSpeechProcessor(data_dir=str(ljspeech_dir))
    assert processor.items == [
        ("Hello, world!", str(ljspeech_dir / "wavs" / "LJ001-0001.wav"), "ljspeech"),
        ("It's five dollars.", str(ljspeech_dir / "wavs" / "LJ001-0002.wav"), "ljspeech"),
    ]
    assert processor.speakers_map == {"ljspeech": 0}
    assert processor.rejected == []


def test_get_one_sample_returns_the_preprocessing_contract(ljspeech_dir):
    processor = LJSpeechProcessor(data_dir=str(ljspeech_dir))
    sample = processor.get_one_sample(processor.items[0])
    assert set(sample) == {"raw_text", "text_ids", "wav_path", "utt_id", "speaker_name", "dropped_symbols"}
    assert sample["utt_id"] == "LJ001-0001"
    assert sample["text_ids"].dtype == np.int32
    assert sample["text_ids"][-1] == processor.eos_id == 148
    assert "".join(processor.sequence_to_symbols(sample["text_ids"][:-1])) == "hello, world!"
    assert sample["dropped_symbols"] == []


def test_corpus_with_bom_crlf_and_bad_lines_keeps_the_good_lines_and_lists_the_rest(tmp_path, caplog):
    lines = [
        "good-1|Fine.|Fine.",
        "few-fields|Only two",
        "empty-text||",
        "../escape|Up.|Up.",
        "a\\b|Back.|Back.",
        "|No id.|No id.",
        "good-2|Also fine.|Also fine.",
    ]
    write(tmp_path / "metadata.csv", "\ufeff" + "\r\n".join(lines) + "\r\n")
    with caplog.at_level(logging.WARNING):
        processor = LJSpeechProcessor(data_dir=str(tmp_path))
    assert [Path(wav).stem for _, wav, _ in processor.items] == ["good-1", "good-2"]
    assert processor.items[0][0] == "Fine."  # no BOM, no "\r"
    # A line names its utterance id when it holds a usable one.
    assert [r["item"] for r in processor.rejected] == [
        "metadata.csv line 2 (few-fields)", "metadata.csv line 3 (empty-text)",
        "metadata.csv line 4", "metadata.csv line 5", "metadata.csv line 6",
    ]
    assert processor.rejected[0]["reason"] == "expected 3 fields separated by '|', got 2"
    assert processor.rejected[1]["reason"] == "empty text"
    assert "metadata.csv line 4" in caplog.text and "'../escape'" in caplog.text


def test_unknown_characters_are_dropped_reported_and_logged(caplog):
    processor = LJSpeechProcessor()
    with caplog.at_level(logging.WARNING):
        sample = processor.get_one_sample(("Hi ~ there #1", "/data/wavs/utt-7.wav", "ljspeech"))
    assert sample["dropped_symbols"] == ["~", "#"]
    assert "".join(processor.sequence_to_symbols(sample["text_ids"][:-1])) == "hi  there one"
    assert "utt-7" in caplog.text and "'~'" in caplog.text


def test_text_with_no_known_symbol_is_an_error_naming_the_utterance():
    with pytest.raises(DataProcessorError, match=r"^utt-9: no known symbols in text"):
        LJSpeechProcessor().get_one_sample(("#~^*", "/data/wavs/utt-9.wav", "ljspeech"))


def test_arpabet_in_braces_becomes_at_phone_symbols():
    processor = LJSpeechProcessor()
    ids = processor.text_to_sequence("Say {HH AH0 L OW1} now.")
    assert processor.sequence_to_symbols(ids) == list("say ") + ["@HH", "@AH0", "@L", "@OW1"] + list(" now.") + ["eos"]


def test_save_pretrained_writes_processor_json_that_loading_reads_back(tmp_path, ljspeech_dir):
    processor = LJSpeechProcessor(data_dir=str(ljspeech_dir))
    path = processor.save_pretrained(tmp_path / "out")
    assert Path(path).name == "processor.json"  # as TensorFlowTTS 1.8
    mapper = json.loads(Path(path).read_text(encoding="utf-8"))
    assert mapper["processor_name"] == "LJSpeechProcessor"
    assert mapper["id_to_symbol"]["0"] == "pad" and mapper["symbol_to_id"]["eos"] == 148
    assert mapper["speakers_map"] == {"ljspeech": 0}

    for loaded in (
        LJSpeechProcessor(data_dir=None, loaded_mapper_path=path),
        LJSpeechProcessor.from_pretrained(tmp_path / "out"),
        load_processor(path),
    ):
        assert type(loaded) is LJSpeechProcessor
        assert loaded.symbol_to_id == processor.symbol_to_id
        assert loaded.id_to_symbol == processor.id_to_symbol
        assert loaded.text_to_sequence("Hello.") == processor.text_to_sequence("Hello.")


def test_saved_mapper_path_writes_the_table_while_reading_the_corpus(tmp_path, ljspeech_dir):
    LJSpeechProcessor(data_dir=str(ljspeech_dir), saved_mapper_path=str(tmp_path / "m.json"))
    assert json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))["symbol_to_id"]["a"] == 38


def test_add_symbol_appends_new_symbols_after_the_last_id():
    processor = LJSpeechProcessor()
    processor.add_symbol(["@SIL", "a"])  # "a" exists and keeps its id
    assert processor.symbol_to_id["@SIL"] == 149 and processor.id_to_symbol[149] == "@SIL"
    assert processor.symbol_to_id["a"] == 38


def test_empty_symbol_list_and_missing_corpus_are_errors(tmp_path):
    with pytest.raises(DataProcessorError, match="symbol list is empty"):
        LJSpeechProcessor(symbols=[])
    with pytest.raises(DataProcessorError, match="metadata.csv not found"):
        LJSpeechProcessor(data_dir=str(tmp_path))


def test_a_user_subclass_reads_the_generic_train_txt_layout(tmp_path):
    @dataclass
    class UpperProcessor(BaseProcessor):
        symbols: List[str] = field(default_factory=lambda: list("ABC "))

        def setup_eos_token(self):
            return "<end>"

        def text_to_sequence(self, text):
            return [self.symbol_to_id[c] for c in text.upper() if c in self.symbol_to_id] + [self.eos_id]

    write(tmp_path / "train.txt", "spk1/u1|ab c|alice\nspk2/u2.wav|cab|bob\nu3|ba|alice\n")
    processor = UpperProcessor(data_dir=str(tmp_path))
    assert processor.speakers_map == {"alice": 0, "bob": 1}
    assert processor.items[1] == ("cab", str(tmp_path / "spk2" / "u2.wav"), "bob")
    sample = processor.get_one_sample(processor.items[0])
    assert sample["utt_id"] == "u1"
    assert sample["text_ids"].tolist() == [0, 1, 3, 2, 4]


# --- registry and shipped mappers --------------------------------------------------------


@pytest.mark.parametrize("cls", PROCESSOR_CLASSES, ids=lambda cls: cls.dataset_name)
def test_registry_maps_class_and_dataset_names_and_ships_the_default_mapper(cls):
    assert get_processor_class(cls.__name__) is cls
    assert get_processor_class(cls.dataset_name.upper()) is cls
    shipped = json.loads(default_mapper_path(cls.dataset_name).read_text(encoding="utf-8"))
    assert shipped == cls().to_mapper(), f"regenerate {default_mapper_path(cls.dataset_name)} with save_pretrained"
    assert type(load_processor(default_mapper_path(cls.__name__))) is cls


def test_registry_knows_every_short_dataset_name():
    for name in ("ljspeech", "ljspeechu", "baker", "libritts", "kss", "thorsten", "synpaflex", "jsut"):
        assert name in PROCESSORS
    with pytest.raises(DataProcessorError, match="unknown processor 'vctk'"):
        get_processor_class("vctk")


# --- Baker -------------------------------------------------------------------------------

BAKER_LABELS = (
    "000001\t你好#1世界#4。\n\tni3 hao3 shi4 jie4\n"
    "000002\t花儿#2红#4。\n\thuar1 hong2\n"
    "000003\t多一个#4。\n\tduo1 yi2\n"  # one syllable short
    "000004\t呣#4。\n\tm2\n"  # not a Baker syllable
    "000005\t好#4！\n\thao3\n"
)


def test_baker_turns_labels_into_phones_with_prosody_marks_and_erhua(tmp_path):
    write(tmp_path / "ProsodyLabeling" / "000001-010000.txt", BAKER_LABELS)
    processor = BakerProcessor(data_dir=str(tmp_path))
    assert [text for text, _, _ in processor.items] == [
        "sil n i3 #0 h ao3 #1 sh iii4 #0 j ie4 sil",
        "sil h ua1 er5 #2 h ong2 sil",
        "sil h ao3 sil",
    ]
    assert processor.items[0][1] == str(tmp_path / "Wave" / "000001.wav")
    assert [r["item"] for r in processor.rejected] == ["000001-010000.txt line 5 (000003)", "000001-010000.txt line 7 (000004)"]
    assert "not in the pinyin table" in processor.rejected[1]["reason"]
    assert processor.get_one_sample(processor.items[1])["utt_id"] == "000002"


def test_baker_inference_reads_chinese_text_with_pypinyin_and_saves_its_pinyin_table(tmp_path):
    processor = BakerProcessor()
    ids = processor.text_to_sequence("你好，世界。", inference=True)
    assert " ".join(processor.sequence_to_symbols(ids)) == "sil n i3 #0 h ao3 #0 sh iii4 #0 j ie4 sil eos"
    path = processor.save_pretrained(tmp_path)
    loaded = BakerProcessor(data_dir=None, loaded_mapper_path=path)
    assert loaded.pinyin_dict == {k: list(v) for k, v in processor.pinyin_dict.items()}


@pytest.mark.parametrize("syllable, parts", [("shi", ("sh", "iii")), ("zi", ("z", "ii")), ("ju", ("j", "v")),
                                             ("yuan", ("^", "van")), ("wo", ("^", "uo")), ("gui", ("g", "uei")),
                                             ("lun", ("l", "uen")), ("xiu", ("x", "iou")), ("er", ("^", "er"))])
def test_pinyin_syllables_split_into_baker_initials_and_finals(syllable, parts):
    assert split_syllable(syllable) == parts


def test_every_default_pinyin_entry_uses_known_phones():
    processor = BakerProcessor()
    for syllable, (initial, final) in default_pinyin_dict().items():
        assert initial in processor.symbol_to_id and final + "5" in processor.symbol_to_id, syllable


# --- LibriTTS, KSS, Thorsten, SynPaFlex ------------------------------------------------


def test_libritts_reads_the_native_tree_with_one_speaker_per_folder(tmp_path):
    for speaker, chapter, text in (("19", "198", "Hello there."), ("103", "1240", "Good day."), ("19", "227", "")):
        stem = tmp_path / "train-clean-100" / speaker / chapter / f"{speaker}_{chapter}_000000_000000"
        write(stem.with_suffix(".normalized.txt"), "\ufeff" + text)
    processor = LibriTTSProcessor(data_dir=str(tmp_path))
    assert sorted(processor.speakers_map) == ["103", "19"]
    assert [(text, speaker) for text, _, speaker in processor.items] == [("Good day.", "103"), ("Hello there.", "19")]
    assert processor.rejected[0]["reason"] == "empty text"
    sample = processor.get_one_sample(processor.items[1])
    assert sample["utt_id"] == "19_198_000000_000000"
    assert processor.eos_id is None
    assert processor.sequence_to_symbols(sample["text_ids"]) == (
        ["@HH", "@AH0", "@L", "@OW1", "@DH", "@EH1", "@R", "@END"]
    )


def test_libritts_prefers_a_train_txt_when_there_is_one(tmp_path):
    write(tmp_path / "train.txt", "19/198/a|Hi.|19\n103/1240/b|Yo.|103\n")
    processor = LibriTTSProcessor(data_dir=str(tmp_path))
    assert processor.speakers_map == {"19": 0, "103": 1}
    assert processor.items[0][1] == str(tmp_path / "19" / "198" / "a.wav")


def test_kss_reads_the_expanded_script_and_splits_hangul_into_jamo(tmp_path):
    write(tmp_path / "transcript.v.1.4.txt", "1/1_0000.wav|안녕 3개|안녕 3개|x|1.0|Hi\n1/1_0001.wav|짧다\n")
    processor = KSSProcessor(data_dir=str(tmp_path))
    assert processor.items == [("안녕 3개", str(tmp_path / "1" / "1_0000.wav"), "kss")]
    assert processor.rejected[0]["reason"] == "expected 3 fields separated by '|', got 2"
    ids = processor.get_one_sample(processor.items[0])["text_ids"]
    assert "".join(processor.sequence_to_symbols(ids[:-1])) == text_to_jamo("안녕 세 개")
    assert processor.sequence_to_symbols(ids[:3]) == ["\u110b", "\u1161", "\u11ab"]  # ㅇ ㅏ ㄴ
    assert processor.text_to_sequence("-") == [7, 80]  # "-" is listed twice; the second id wins


def test_thorsten_reads_id_text_metadata_and_keeps_umlauts(tmp_path):
    write(tmp_path / "metadata.csv", "t-1|Größe 21.\nt-2|\n")
    processor = ThorstenProcessor(data_dir=str(tmp_path))
    assert processor.items == [("Größe 21.", str(tmp_path / "wavs" / "t-1.wav"), "thorsten")]
    ids = processor.get_one_sample(processor.items[0])["text_ids"]
    assert "".join(processor.sequence_to_symbols(ids[:-1])) == "größe einundzwanzig."


def test_synpaflex_reads_its_own_list_or_an_ljspeech_like_metadata(tmp_path):
    write(tmp_path / "synpaflex.txt", "s-1|Un été à Noël.\n")
    processor = SynpaflexProcessor(data_dir=str(tmp_path))
    ids = processor.get_one_sample(processor.items[0])["text_ids"]
    assert "".join(processor.sequence_to_symbols(ids[:-1])) == "un été à noël."
    (tmp_path / "synpaflex.txt").unlink()
    write(tmp_path / "metadata.csv", "s-2|Oui|Oui.\n")
    assert SynpaflexProcessor(data_dir=str(tmp_path)).items[0][0] == "Oui."


# --- English phonemes, offline -----------------------------------------------------------


def test_english_g2p_works_offline_without_nltk_data(tmp_path, monkeypatch):
    def no_network(*args, **kwargs):
        raise OSError("network is blocked in this test")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setenv("NLTK_DATA", str(tmp_path))
    from tensorflow_tts.processor.text.g2p import EnglishG2p

    g2p = EnglishG2p()
    assert g2p("Hello, world.") == ["HH", "AH0", "L", "OW1", ",", " ", "W", "ER1", "L", "D", "."]
    assert g2p.predict("blorptastic")[:3] == ["B", "L", "AO2"]  # not in the dictionary: the network
    assert g2p.word_to_phones("record", previous_word="will") == ["R", "IH0", "K", "AO1", "R", "D"]
    assert g2p.word_to_phones("record", previous_word="the") == ["R", "EH1", "K", "ER0", "D"]
    assert "g2p_en" not in sys.modules and "g2p_en.g2p" not in sys.modules


def test_ljspeech_ultimate_reads_phonemes_and_passes_braces_through():
    processor = LJSpeechUltimateProcessor()
    ids = processor.text_to_sequence("Hello, {W ER1 L D}!", inference=True)
    assert processor.sequence_to_symbols(ids) == (
        ["@HH", "@AH0", "@L", "@OW1", ",", "@W", "@ER1", "@L", "@D", "!", "eos"]
    )


# --- the bundled corpora -----------------------------------------------------------------


@pytest.mark.skipif(not (CORPUS_DIR / "ljspeech").is_dir(), reason="bundled corpora not generated")
def test_bundled_corpora_read_without_rejections():
    ljspeech = LJSpeechProcessor(data_dir=str(CORPUS_DIR / "ljspeech"))
    baker = BakerProcessor(data_dir=str(CORPUS_DIR / "baker"))
    libritts = LibriTTSProcessor(data_dir=str(CORPUS_DIR / "libritts"))
    assert len(ljspeech.items) >= 80 and len(baker.items) >= 8 and len(libritts.speakers_map) >= 3
    assert ljspeech.rejected == baker.rejected == libritts.rejected == []
    for processor in (ljspeech, baker):
        for item in processor.items:
            assert processor.get_one_sample(item)["dropped_symbols"] == []


@pytest.mark.skipif(not (CORPUS_DIR / "broken").is_dir(), reason="bundled corpora not generated")
def test_bundled_broken_corpus_rejects_bad_lines_and_keeps_reading():
    processor = LJSpeechProcessor(data_dir=str(CORPUS_DIR / "broken"))
    reasons = {r["item"]: r["reason"] for r in processor.rejected}
    assert set(reasons) == {"metadata.csv line 11 (empty-text)", "metadata.csv line 12 (few-fields)", "metadata.csv line 13"}
    assert "good-01" in {Path(wav).stem for _, wav, _ in processor.items}  # the BOM did not stick to the id
