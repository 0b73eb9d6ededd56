"""Acceptance: the symbol tables and token ids of the original TensorFlowTTS 1.8 are reproduced.

The fixtures (../shared/compat/mappers/*.json, text_ids.json) were written by the original
processors; see ../shared/compat/README.md, "Text front ends".
"""

import json
from pathlib import Path

import pytest

from tensorflow_tts.processor import BakerProcessor, KSSProcessor, LJSpeechProcessor, get_processor_class

COMPAT_DIR = Path(__file__).resolve().parents[2] / "shared" / "compat"
pytestmark = pytest.mark.skipif(
    not (COMPAT_DIR / "text_ids.json").is_file(),
    reason=f"compatibility fixtures not found at {COMPAT_DIR} (they live beside the repository)",
)

# How text_ids.json says each processor was called.
CALL_KWARGS = {
    "text_to_sequence(text)": {},
    "text_to_sequence(text, inference=True)": {"inference": True},
}


def load_text_ids():
    return json.loads((COMPAT_DIR / "text_ids.json").read_text(encoding="utf-8"))["processors"]


def compat_cases():
    if not (COMPAT_DIR / "text_ids.json").is_file():
        return []
    return [
        pytest.param(lang, entry, index, id=f"{lang}-{index:02d}")
        for lang, entry in load_text_ids().items()
        for index in range(len(entry["items"]))
    ]


@pytest.fixture(scope="module")
def original_processors():
    """One processor per language, loaded from the original's mapper as the original loads it."""
    processors = {}
    for lang, entry in load_text_ids().items():
        cls = get_processor_class(entry["processor"])
        processors[lang] = cls(data_dir=None, loaded_mapper_path=str(COMPAT_DIR / entry["mapper"]))
    return processors


def test_the_fixtures_cover_ljspeech_baker_and_kss():
    assert {"ljspeech", "baker", "kss"} <= set(load_text_ids())


@pytest.mark.parametrize("lang, entry, index", compat_cases())
def test_original_mapper_gives_the_original_ids(original_processors, lang, entry, index):
    processor = original_processors[lang]
    item = entry["items"][index]
    ids = processor.text_to_sequence(item["text"], **CALL_KWARGS[entry["call"]])
    assert processor.sequence_to_symbols(ids) == item["symbols"], item["text"]
    assert ids == item["ids"]
    assert processor.eos_id == entry["eos_id"]
    assert len(processor.symbol_to_id) == entry["n_symbols"]


@pytest.mark.parametrize("cls", [LJSpeechProcessor, BakerProcessor, KSSProcessor], ids=lambda c: c.dataset_name)
def test_our_default_tables_equal_the_original_ones(cls):
    original = json.loads((COMPAT_DIR / "mappers" / f"{cls.dataset_name}_mapper.json").read_text(encoding="utf-8"))
    ours = cls().to_mapper()
    for key in original:
        assert ours[key] == original[key], f"{cls.__name__}: {key} differs from the original"


def test_kss_keeps_the_original_duplicate_dash():
    # "-" is both the special symbol (id 1) and punctuation (id 7); the original maps it to 7.
    processor = KSSProcessor(data_dir=None, loaded_mapper_path=str(COMPAT_DIR / "mappers" / "kss_mapper.json"))
    assert processor.id_to_symbol[1] == processor.id_to_symbol[7] == "-"
    assert processor.text_to_sequence("-") == [7, 80]
