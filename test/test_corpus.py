"""The synthetic corpora under test/files/corpus/ (made by test/files/make_corpus.py) keep
the layouts and formats of LJSpeech, Baker, LibriTTS and JSUT that the processors expect."""

import re
from collections import Counter
from pathlib import Path

import pytest
import soundfile as sf

CORPUS_DIR = Path(__file__).parent / "files" / "corpus"
PROSODY_MARK = re.compile(r"#[1-4]")
PINYIN_SYLLABLE = re.compile(r"[a-z]+[1-5]")
CHINESE_PUNCTUATION = set("，。？！、；：")


def assert_mono_int16(wav_path, sample_rate):
    info = sf.info(wav_path)
    assert info.samplerate == sample_rate, f"{wav_path}: {info.samplerate} Hz"
    assert info.channels == 1, f"{wav_path}: {info.channels} channels"
    assert info.subtype == "PCM_16", f"{wav_path}: {info.subtype}"
    return info.duration


def ljspeech_rows():
    lines = (CORPUS_DIR / "ljspeech" / "metadata.csv").read_text(encoding="utf-8").splitlines()
    return [line.split("|") for line in lines]


def baker_entries():
    label_path = CORPUS_DIR / "baker" / "ProsodyLabeling" / "000001-010000.txt"
    lines = label_path.read_text(encoding="utf-8").splitlines()
    assert len(lines) % 2 == 0, "Baker labels come in pairs of lines"
    return [(lines[i], lines[i + 1]) for i in range(0, len(lines), 2)]


def test_ljspeech_metadata_rows_point_at_short_mono_22050_hz_wavs():
    rows = ljspeech_rows()
    assert len(rows) >= 80
    for number, fields in enumerate(rows, start=1):
        assert len(fields) == 3, f"metadata.csv line {number}: expected 3 fields, got {len(fields)}"
        utt_id = fields[0]
        assert re.fullmatch(r"LJ\d{3}-\d{4}", utt_id), f"metadata.csv line {number}: bad id {utt_id!r}"
        duration = assert_mono_int16(CORPUS_DIR / "ljspeech" / "wavs" / f"{utt_id}.wav", 22050)
        assert 1.0 <= duration <= 6.0, f"{utt_id}: {duration:.2f} s"


def test_ljspeech_normalized_column_spells_out_what_the_raw_column_abbreviates():
    rows = ljspeech_rows()
    assert all(not re.search(r"\d|\$", normalized) for _, _, normalized in rows)
    raw_texts = " ".join(raw for _, raw, _ in rows)
    # The raw column is there to exercise text normalisation, so it must hold the hard cases.
    for case in ("$5.50", "1999", "1,234", "Dr.", "Mr.", "St.", "9:30", "3.5", "1st"):
        assert case in raw_texts, f"no LJSpeech raw text contains {case!r}"


def test_ljspeech_word_starts_follow_the_text_and_lie_within_the_wav():
    """word_starts.tsv (espeak-ng's own word timings) is what quality_tacotron2.py checks
    alignments against: words of the normalized text, in reading order, inside the audio."""
    lines = (CORPUS_DIR / "ljspeech" / "word_starts.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0].split("\t") == ["utt_id", "char_offset", "word", "start_seconds"]
    starts = {}
    for line in lines[1:]:
        utt_id, offset, word, seconds = line.split("\t")
        starts.setdefault(utt_id, []).append((int(offset), word, float(seconds)))
    rows = ljspeech_rows()
    assert sorted(starts) == sorted(utt_id for utt_id, _, _ in rows)
    timed_words = total_words = 0
    for utt_id, _, normalized in rows:
        words = starts[utt_id]
        for offset, word, _ in words:
            assert offset == 0 or normalized[offset - 1] in " -", (utt_id, offset)
            assert normalized[offset:].split()[0] == word, (utt_id, offset, word)
        offsets = [offset for offset, _, _ in words]
        times = [seconds for _, _, seconds in words]
        assert offsets[0] == 0 and all(a < b for a, b in zip(offsets, offsets[1:])), (utt_id, offsets)
        duration = sf.info(CORPUS_DIR / "ljspeech" / "wavs" / f"{utt_id}.wav").duration
        # The speech starts at make_corpus.py's 0.1 s margin and the words follow each other.
        assert 0.05 <= times[0] <= 0.15 and all(a < b for a, b in zip(times, times[1:])) and times[-1] < duration, (
            utt_id, times, duration)
        timed_words += len(words)
        total_words += len(normalized.split())
    # espeak-ng runs a few short words into their neighbour; nearly all have their own start.
    assert timed_words >= 0.9 * total_words, (timed_words, total_words)


def test_baker_labels_have_one_pinyin_syllable_per_chinese_character():
    entries = baker_entries()
    assert 8 <= len(entries) <= 10
    for text_line, pinyin_line in entries:
        utt_id, text = text_line.split("\t")
        assert pinyin_line.startswith("\t"), f"Baker {utt_id}: the pinyin line must start with a tab"
        syllables = pinyin_line.split()
        assert all(PINYIN_SYLLABLE.fullmatch(syllable) for syllable in syllables), syllables
        characters = [c for c in PROSODY_MARK.sub("", text) if c not in CHINESE_PUNCTUATION]
        assert all("\u4e00" <= c <= "\u9fff" for c in characters), f"Baker {utt_id}: {text!r}"
        assert len(characters) == len(syllables), (
            f"Baker {utt_id}: {len(characters)} characters, {len(syllables)} syllables"
        )
        assert text.endswith(("#4。", "#4？", "#4！")), f"Baker {utt_id}: should end with #4 then punctuation"
        assert_mono_int16(CORPUS_DIR / "baker" / "Wave" / f"{utt_id}.wav", 48000)


def test_libritts_has_three_speakers_with_ten_utterances_each():
    wavs = sorted((CORPUS_DIR / "libritts" / "train-clean-100").glob("*/*/*.wav"))
    utterances_per_speaker = Counter(wav.parent.parent.name for wav in wavs)
    assert len(utterances_per_speaker) >= 3
    assert min(utterances_per_speaker.values()) >= 10


@pytest.mark.parametrize("transcript_suffix", [".normalized.txt", ".original.txt"])
def test_every_libritts_wav_is_named_by_speaker_and_chapter_and_has_its_transcript(transcript_suffix):
    wavs = sorted((CORPUS_DIR / "libritts" / "train-clean-100").glob("*/*/*.wav"))
    assert wavs
    for wav in wavs:
        speaker, chapter = wav.parent.parent.name, wav.parent.name
        assert re.fullmatch(rf"{speaker}_{chapter}_\d{{6}}_\d{{6}}", wav.stem), wav.name
        transcript = wav.with_name(wav.stem + transcript_suffix).read_text(encoding="utf-8")
        assert transcript.strip() and "\n" not in transcript.strip(), f"{wav.stem}{transcript_suffix}"
        assert_mono_int16(wav, 24000)


def test_jsut_transcript_lines_hold_japanese_text_and_point_at_mono_wavs():
    subset = CORPUS_DIR / "jsut" / "basic5000"
    lines = (subset / "transcript_utf8.txt").read_text(encoding="utf-8").splitlines()
    assert len(lines) >= 6
    for line in lines:
        utt_id, colon, text = line.partition(":")
        assert colon and re.fullmatch(r"BASIC5000_\d{4}", utt_id), line
        assert any("\u4e00" <= c <= "\u9fff" for c in text) and text.endswith("。"), f"JSUT {utt_id}: {text!r}"
        assert_mono_int16(subset / "wav" / f"{utt_id}.wav", 24000)


def test_the_espeak_corpora_stay_under_8_5_mb():
    # The limit covers what make_corpus.py writes; the broken corpus has its own script.
    generated = [CORPUS_DIR / name for name in ("ljspeech", "baker", "libritts", "jsut")]
    size = sum(path.stat().st_size for folder in generated for path in folder.rglob("*") if path.is_file())
    assert size < 8_500_000, f"make_corpus.py output holds {size} bytes"
