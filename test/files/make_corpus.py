"""Regenerate the small synthetic corpora committed under `test/files/corpus/`.

Writes an LJSpeech-, a Baker (CSMSC)-, a LibriTTS- and a JSUT-shaped corpus from sentences
written here, spoken by espeak-ng and resampled by sox; both programs must be on PATH, and the
espeak-ng library (libespeak-ng.so.1) must load: it tells where each LJSpeech word starts.
The output is the same on every run (no randomness, no dither), so the committed files only
change when this script does.

    python test/files/make_corpus.py [--outdir test/files/corpus] [--corpus jsut ...]
"""

import argparse
import concurrent.futures
import ctypes
import logging
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import soundfile as sf
from tqdm import tqdm

logger = logging.getLogger("make_corpus")

ESPEAK_SAMPLE_RATE = 22050  # espeak-ng always synthesises at this rate
SILENCE_MARGIN_S = 0.1  # silence kept (or padded) before and after the speech
SILENCE_THRESHOLD_DB = -45.0  # frames quieter than this, relative to the loudest, are silence
SIZE_BUDGET_BYTES = 8_500_000  # the corpora are committed; keep them small
LJSPEECH_MIN_S, LJSPEECH_MAX_S = 1.0, 6.0

# --- LJSpeech: one speaker, 22050 Hz ------------------------------------------------------
# A plain string is read as written; a pair is (raw text, normalized text), the normalized
# side spelling out numbers and abbreviations the way LJSpeech's third column does.
LJSPEECH_VOICE = dict(voice="en-us+f2", speed=265, pitch=55)
LJSPEECH_SAMPLE_RATE = 22050
LJSPEECH_SENTENCES = [
    ("Dr. Smith came at 9:30.", "Doctor Smith came at nine thirty."),
    ("It cost $5.50.", "It cost five dollars fifty cents."),
    ("It was built in 1999.", "It was built in nineteen ninety-nine."),
    ("Mr. Brown lives on Oak St.", "Mister Brown lives on Oak Street."),
    ("She finished 1st again!", "She finished first again!"),
    ("It is 3.5 miles long.", "It is three point five miles long."),
    ("About 1,234 people came.", "About one thousand two hundred thirty-four people came."),
    ("Is the train at 6:15?", "Is the train at six fifteen?"),
    ("Mrs. Green paid $12.", "Missus Green paid twelve dollars."),
    ("It arrived on May 3rd.", "It arrived on May third."),
    ("He was born in 1872.", "He was born in eighteen seventy-two."),
    ("We met on the 21st floor.", "We met on the twenty-first floor."),
    ("Only 7 men stayed.", "Only seven men stayed."),
    ("The bridge opened in 2004.", "The bridge opened in two thousand four."),
    ("St. Paul's was full.", "Saint Paul's was full."),
    ("It was $3.25.", "It was three dollars twenty-five cents."),
    ("Lt. Harris gave the order.", "Lieutenant Harris gave the order."),
    ("The shop closes at 4 p.m.", "The shop closes at four p m."),
    ("Capt. Reed sailed in 1805.", "Captain Reed sailed in eighteen oh five."),
    ("It fell to 0.5 degrees.", "It fell to zero point five degrees."),
    ("He owed $1,500!", "He owed one thousand five hundred dollars!"),
    ("Gen. Lee read chapter 12.", "General Lee read chapter twelve."),
    ("Room 101 was locked.", "Room one hundred one was locked."),
    ("The 2nd act was better.", "The second act was better."),
    ("Prof. Hall spoke for an hour.", "Professor Hall spoke for an hour."),
    ("By 1850, it had grown.", "By eighteen fifty, it had grown."),
    ("Is it 2.75 inches?", "Is it two point seven five inches?"),
    ("They sold 300 copies.", "They sold three hundred copies."),
    ("The clock struck 12.", "The clock struck twelve."),
    ("Jan. 5th was cold.", "January fifth was cold."),
    ("The pen cost $0.99.", "The pen cost ninety-nine cents."),
    ("It was the 19th century.", "It was the nineteenth century."),
    ("Wait until 7:45!", "Wait until seven forty-five!"),
    ("Nearly 2,000 letters were sent.", "Nearly two thousand letters were sent."),
    ("Vol. 3 is missing.", "Volume three is missing."),
    ("The fare was $2.", "The fare was two dollars."),
    (
        "On March 14th, 1921, the committee met again.",
        "On March fourteenth, nineteen twenty-one, the committee met again.",
    ),
    "The rain stopped before noon.",
    "Where did you leave the keys?",
    "What a wonderful surprise!",
    "The old house stood alone.",
    "Please close the door, quietly.",
    "He opened the window.",
    "Nobody answered the letter.",
    "Why is the sky so dark?",
    "The garden was full of roses.",
    "We walked home slowly.",
    "Be careful, the floor is wet!",
    "The judge listened in silence.",
    "She wrote her name on the card.",
    "How long will it take?",
    "The bells rang at noon.",
    "A cold wind blew all night.",
    "The prisoner was taken to court.",
    "Look at all the stars!",
    "He read the report twice.",
    "The children laughed, then ran.",
    "Can you hear the music?",
    "The ship left at dawn.",
    "Bread and milk were on the table.",
    "Nobody knew where he went.",
    "Stop that man, quickly!",
    "The lamp flickered, and went out.",
    "Was the door locked that night?",
    "Her voice was calm and low.",
    "The crowd waited outside.",
    "Fresh snow covered the roads.",
    "Who painted this picture?",
    "The horses were tired.",
    "He never spoke of it again.",
    "The printer worked all night.",
    "Each page was printed by hand.",
    "What time does the shop open?",
    "The evidence was weak.",
    "Such a quiet winter!",
    "The officers searched every room.",
    "My brother plays the violin.",
    "The letters were tied with string.",
    "Is this the road to the village?",
    "The book, lost for years, was found under the stairs.",
]
LJSPEECH_UTTERANCES_PER_CHAPTER = 50  # ids run LJ001-0001 .. LJ001-0050, then LJ002-0001 ..

# --- Baker (CSMSC): one Mandarin speaker, 48 kHz ------------------------------------------
# (text with prosody marks, pinyin with tone digits, one syllable per Chinese character).
# #1 prosodic word, #2 prosodic phrase, #3 intonational phrase, #4 end of sentence.
# espeak-ng's plain `cmn` voice spells Chinese characters out as English letters, so the
# audio is made from the pinyin with the `cmn-latn-pinyin` voice, which reads tones.
BAKER_VOICE = dict(voice="cmn-latn-pinyin", speed=270, pitch=50)
BAKER_SAMPLE_RATE = 48000
BAKER_SENTENCES = [
    ("今天#1天气#2很好#4。", "jin1 tian1 tian1 qi4 hen3 hao3"),
    ("我们#1去#1公园#2散步#4。", "wo3 men5 qu4 gong1 yuan2 san4 bu4"),
    ("妈妈#1在#1厨房#2做饭#4。", "ma1 ma5 zai4 chu2 fang2 zuo4 fan4"),
    ("你#1明天#1几点#2起床#4？", "ni3 ming2 tian1 ji3 dian3 qi3 chuang2"),
    ("这本书#1非常#2有意思#4！", "zhe4 ben3 shu1 fei1 chang2 you3 yi4 si5"),
    ("春天#1来了#3，花#1都开了#4。", "chun1 tian1 lai2 le5 hua1 dou1 kai1 le5"),
    ("火车#1下午#1三点#2到站#4。", "huo3 che1 xia4 wu3 san1 dian3 dao4 zhan4"),
    ("请#1把#1窗户#2打开#4。", "qing3 ba3 chuang1 hu5 da3 kai1"),
]
BAKER_PAUSES = {"，": ",", "。": ".", "？": "?", "！": "!"}

# --- LibriTTS: several speakers, 24 kHz ---------------------------------------------------
LIBRITTS_SAMPLE_RATE = 24000
LIBRITTS_SUBSET = "train-clean-100"
LIBRITTS_SPEAKERS = [
    dict(
        speaker="19",
        chapter="198",
        sex="M",
        voice="en-us",
        speed=240,
        pitch=45,
        sentences=[
            "The morning was bright.",
            ("He counted 12 birds.", "He counted twelve birds."),
            "Where are you going?",
            "The kettle began to sing.",
            "She smiled and said nothing.",
            ("They left at 3 o'clock.", "They left at three o'clock."),
            "What a strange town!",
            "The dog slept by the fire.",
            ("Mr. White opened the gate.", "Mister White opened the gate."),
            "The apples were ripe.",
        ],
    ),
    dict(
        speaker="103",
        chapter="1240",
        sex="F",
        voice="en-gb+f3",
        speed=235,
        pitch=60,
        sentences=[
            "The lake was still.",
            "Did you see the lights?",
            ("Mrs. Rachel watched the road.", "Missus Rachel watched the road."),
            "Her dress was blue, and white.",
            ("It was almost 6.", "It was almost six."),
            "Oh, how lovely it is!",
            "The wind moved the trees.",
            ("She lived there 40 years.", "She lived there forty years."),
            "Nobody came down the lane.",
            "Tea was ready at last.",
        ],
    ),
    dict(
        speaker="1034",
        chapter="121119",
        sex="M",
        voice="en-us+m3",
        speed=230,
        pitch=30,
        sentences=[
            "The soldiers marched on.",
            "Is there any water left?",
            "The captain gave the signal.",
            ("We waited for 2 long days.", "We waited for two long days."),
            "The sea was rough and grey.",
            "Hold the rope, tightly!",
            "A small boat drifted past.",
            ("The map showed 3 islands.", "The map showed three islands."),
            "Night fell over the camp.",
            ("Dr. Moore was late.", "Doctor Moore was late."),
        ],
    ),
]

# --- JSUT: one Japanese speaker ----------------------------------------------------------
# (transcript text as JSUT writes it, its reading in kana). espeak-ng's `ja` voice reads kana
# only (it names each kanji as a "Chinese letter"), so the audio is made from the reading.
# JSUT itself is 48 kHz; 24 kHz (the rate preprocessing resamples to) keeps the files small.
JSUT_VOICE = dict(voice="ja", speed=200, pitch=60)
JSUT_SAMPLE_RATE = 24000
JSUT_SUBSET = "basic5000"
JSUT_SENTENCES = [
    ("今日はいい天気ですね。", "きょうは いい てんきですね。"),
    ("雨が降っています。", "あめが ふっています。"),
    ("ちょっと待ってください。", "ちょっと まってください。"),
    ("電車は十時に着きます。", "でんしゃは じゅうじに つきます。"),
    ("猫が庭で寝ています。", "ねこが にわで ねています。"),
    ("明日の朝、山に登ります。", "あしたの あさ、 やまに のぼります。"),
]


def raw_and_normalized(sentence):
    """A sentence entry is either one string (read as written) or a (raw, normalized) pair."""
    if isinstance(sentence, str):
        return sentence, sentence
    return sentence


def synthesize(text, voice, speed, pitch, workdir):
    """Speak `text` with espeak-ng; returns int16 samples `[T]` at ESPEAK_SAMPLE_RATE."""
    wav_path = Path(workdir) / "espeak.wav"
    command = ["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch), "-w", str(wav_path), "--stdin"]
    subprocess.run(command, input=text.encode("utf-8"), check=True, capture_output=True)
    wave, sample_rate = sf.read(wav_path, dtype="int16")
    if sample_rate != ESPEAK_SAMPLE_RATE or wave.ndim != 1:
        raise RuntimeError(
            f"espeak-ng wrote {sample_rate} Hz, {wave.ndim}-D audio; expected mono {ESPEAK_SAMPLE_RATE} Hz"
        )
    return wave


class _EspeakEvent(ctypes.Structure):
    """espeak_EVENT of speak_lib.h (the `id` union is 8 bytes wide)."""

    _fields_ = [
        ("type", ctypes.c_int),
        ("unique_identifier", ctypes.c_uint),
        ("text_position", ctypes.c_int),  # 1-based character offset into the text
        ("length", ctypes.c_int),  # characters
        ("audio_position", ctypes.c_int),  # milliseconds
        ("sample", ctypes.c_int),  # samples at ESPEAK_SAMPLE_RATE
        ("user_data", ctypes.c_void_p),
        ("id", ctypes.c_char * 8),
    ]


_ESPEAK_SYNCHRONOUS = 2  # AUDIO_OUTPUT_SYNCHRONOUS: the callback gets the audio as it is made
_ESPEAK_EVENT_WORD, _ESPEAK_EVENT_END_OF_LIST = 1, 0
_ESPEAK_RATE, _ESPEAK_PITCH = 1, 3
# espeakCHARS_UTF8 | espeakPHONEMES | espeakENDPAUSE: what the espeak-ng command line passes.
_ESPEAK_FLAGS = 0x1 | 0x100 | 0x1000
_ESPEAK_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_EspeakEvent))


def word_starts(text, voice, speed, pitch, expected_wave):
    """Where espeak-ng starts the words of `text`: [(character offset, sample)], read from the
    library's word events while it speaks `text` again with the same settings. The library's
    audio must equal `expected_wave` (the command line's), so the samples belong to it. Not
    every word has an event (see below); offsets and samples both increase."""
    if not text.isascii():
        raise ValueError(f"{text!r}: word offsets are counted in characters; keep LJSpeech sentences ASCII")
    # The synthesiser carries state from one text to the next (even across espeak_Initialize)
    # while each run of the command starts fresh: speak every text in a new process.
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, max_tasks_per_child=1) as fresh_process:
        wave, starts = fresh_process.submit(_speak_with_events, text, voice, speed, pitch).result()
    if not np.array_equal(wave, expected_wave):
        raise RuntimeError(f"libespeak-ng and the espeak-ng command differ on {text!r}; their word times would not match")
    # espeak-ng speaks some short words with their neighbour (one event for "for an") and
    # adds an event for a clause's closing pause; keep the events that open a word (or the
    # part after a hyphen) in reading order.
    kept = []
    for offset, sample in starts:
        opens_word = offset == 0 or text[offset - 1] in " -"
        if opens_word and not text[offset].isspace() and (not kept or offset > kept[-1][0] and sample > kept[-1][1]):
            kept.append((offset, sample))
    return kept


def _speak_with_events(text, voice, speed, pitch):
    """`(int16 wave [T], [(character offset, sample)])` from the espeak-ng library."""
    lib = ctypes.CDLL("libespeak-ng.so.1")
    if lib.espeak_Initialize(_ESPEAK_SYNCHRONOUS, 0, None, 0) != ESPEAK_SAMPLE_RATE:
        raise RuntimeError(f"libespeak-ng does not synthesise at {ESPEAK_SAMPLE_RATE} Hz")
    chunks, starts = [], []

    def collect(wave, num_samples, events):
        if num_samples > 0:
            chunks.append(np.ctypeslib.as_array(wave, (num_samples,)).copy())
        index = 0
        while events[index].type != _ESPEAK_EVENT_END_OF_LIST:
            if events[index].type == _ESPEAK_EVENT_WORD:
                starts.append((events[index].text_position - 1, events[index].sample))
            index += 1
        return 0

    callback = _ESPEAK_CALLBACK(collect)  # kept referenced until synthesis is over
    lib.espeak_SetSynthCallback(callback)
    if lib.espeak_SetVoiceByName(voice.encode()) or lib.espeak_SetParameter(_ESPEAK_RATE, speed, 0) or \
            lib.espeak_SetParameter(_ESPEAK_PITCH, pitch, 0):
        raise RuntimeError(f"libespeak-ng refused voice {voice!r}, speed {speed} or pitch {pitch}")
    encoded = text.encode("utf-8") + b"\0"
    if lib.espeak_Synth(encoded, len(encoded), 0, 1, 0, _ESPEAK_FLAGS, None, None) or lib.espeak_Synchronize():
        raise RuntimeError(f"libespeak-ng failed to speak {text!r}")
    return (np.concatenate(chunks) if chunks else np.zeros(0, np.int16)), starts


def trim_silence(wave, sample_rate, frame_size=256):
    """Cut leading and trailing silence down to SILENCE_MARGIN_S, padding with zeros where
    espeak-ng left less, so every utterance starts and ends the same way.

    Returns: the new wave `[T']`, and the shift in samples from `wave` to it (sample s of
    `wave` is sample s + shift of the new wave)."""
    num_frames = len(wave) // frame_size
    frames = wave[: num_frames * frame_size].astype(np.float64).reshape(num_frames, frame_size)
    frame_db = 10.0 * np.log10(np.mean(frames**2, axis=1) + 1e-10)
    voiced = np.flatnonzero(frame_db > frame_db.max() + SILENCE_THRESHOLD_DB)
    if voiced.size == 0:
        raise RuntimeError("espeak-ng produced silence")
    start = voiced[0] * frame_size
    end = (voiced[-1] + 1) * frame_size
    margin = int(round(SILENCE_MARGIN_S * sample_rate))
    speech = wave[max(0, start - margin) : min(len(wave), end + margin)]
    pad_before = max(0, margin - start)
    pad_after = max(0, end + margin - len(wave))
    shift = pad_before - max(0, start - margin)
    return np.pad(speech, (pad_before, pad_after)).astype(np.int16), shift


def write_wav(path, wave, target_rate, workdir):
    """Write int16 `wave` (at ESPEAK_SAMPLE_RATE) as mono 16-bit PCM at `target_rate`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if target_rate == ESPEAK_SAMPLE_RATE:
        sf.write(path, wave, target_rate, subtype="PCM_16")
        return
    source = Path(workdir) / "to_resample.wav"
    sf.write(source, wave, ESPEAK_SAMPLE_RATE, subtype="PCM_16")
    # -D: no dither, so the output is identical from run to run; -R: fixed seeds anyway;
    # -G: lower the gain rather than clip where resampling overshoots full scale.
    command = ["sox", "-D", "-R", "-G", str(source), "-b", "16", "-c", "1", str(path)]
    command += ["rate", "-h", str(target_rate)]
    subprocess.run(command, check=True, capture_output=True)


def ljspeech_id(index):
    chapter, position = divmod(index, LJSPEECH_UTTERANCES_PER_CHAPTER)
    return f"LJ{chapter + 1:03d}-{position + 1:04d}"


def make_ljspeech(outdir, workdir):
    root = outdir / "ljspeech"
    lines, word_lines = [], ["utt_id\tchar_offset\tword\tstart_seconds\n"]
    for index, sentence in enumerate(tqdm(LJSPEECH_SENTENCES, desc="ljspeech")):
        raw, normalized = raw_and_normalized(sentence)
        if "|" in raw or "|" in normalized:
            raise ValueError(f"LJSpeech sentence {index}: '|' separates metadata.csv fields; remove it")
        utt_id = ljspeech_id(index)
        spoken = synthesize(normalized, workdir=workdir, **LJSPEECH_VOICE)
        wave, shift = trim_silence(spoken, ESPEAK_SAMPLE_RATE)
        for offset, sample in word_starts(normalized, expected_wave=spoken, **LJSPEECH_VOICE):
            word = normalized[offset:].split(maxsplit=1)[0]
            word_lines.append(f"{utt_id}\t{offset}\t{word}\t{(sample + shift) / ESPEAK_SAMPLE_RATE:.4f}\n")
        duration = len(wave) / ESPEAK_SAMPLE_RATE
        if not LJSPEECH_MIN_S <= duration <= LJSPEECH_MAX_S:
            raise ValueError(
                f"LJSpeech {utt_id} ({normalized!r}) lasts {duration:.2f} s; "
                f"shorten or lengthen the sentence to fit {LJSPEECH_MIN_S}-{LJSPEECH_MAX_S} s"
            )
        write_wav(root / "wavs" / f"{utt_id}.wav", wave, LJSPEECH_SAMPLE_RATE, workdir)
        lines.append(f"{utt_id}|{raw}|{normalized}\n")
    (root / "metadata.csv").write_text("".join(lines), encoding="utf-8")
    # Not part of LJSpeech: where espeak-ng began each word, in seconds into wavs/<ID>.wav, so
    # alignments learnt from this corpus can be checked against the truth.
    (root / "word_starts.tsv").write_text("".join(word_lines), encoding="utf-8")
    return len(lines)


def baker_espeak_text(text, pinyin, label):
    """Pinyin for espeak-ng with the sentence's punctuation put back, so pauses fall where
    the Chinese text has them. Checks one syllable per Chinese character."""
    syllables = pinyin.split()
    characters = re.sub(r"#\d", "", text)
    hanzi = [character for character in characters if character not in BAKER_PAUSES]
    if len(hanzi) != len(syllables):
        raise ValueError(f"Baker {label}: {len(hanzi)} characters but {len(syllables)} pinyin syllables")
    words = []
    for character in characters:
        if character in BAKER_PAUSES:
            words[-1] += BAKER_PAUSES[character]
        else:
            words.append(syllables[len(words)])
    return " ".join(words)


def make_baker(outdir, workdir):
    root = outdir / "baker"
    entries = []
    for index, (text, pinyin) in enumerate(tqdm(BAKER_SENTENCES, desc="baker")):
        utt_id = f"{index + 1:06d}"
        espeak_text = baker_espeak_text(text, pinyin, utt_id)
        wave, _ = trim_silence(synthesize(espeak_text, workdir=workdir, **BAKER_VOICE), ESPEAK_SAMPLE_RATE)
        write_wav(root / "Wave" / f"{utt_id}.wav", wave, BAKER_SAMPLE_RATE, workdir)
        entries.append(f"{utt_id}\t{text}\n\t{pinyin}\n")
    label_path = root / "ProsodyLabeling" / "000001-010000.txt"
    label_path.parent.mkdir(parents=True, exist_ok=True)
    label_path.write_text("".join(entries), encoding="utf-8")
    return len(entries)


def make_libritts(outdir, workdir):
    root = outdir / "libritts"
    speaker_lines = [";ID  |SEX| SUBSET           |MINUTES| NAME\n"]
    count = 0
    for speaker in LIBRITTS_SPEAKERS:
        voice = {key: speaker[key] for key in ("voice", "speed", "pitch")}
        chapter_dir = root / LIBRITTS_SUBSET / speaker["speaker"] / speaker["chapter"]
        transcript = []
        total_samples = 0
        for index, sentence in enumerate(tqdm(speaker["sentences"], desc=f"libritts {speaker['speaker']}")):
            original, normalized = raw_and_normalized(sentence)
            paragraph, segment = divmod(index, 2)
            utt_id = f"{speaker['speaker']}_{speaker['chapter']}_{paragraph:06d}_{segment:06d}"
            wave, _ = trim_silence(synthesize(normalized, workdir=workdir, **voice), ESPEAK_SAMPLE_RATE)
            total_samples += len(wave)
            write_wav(chapter_dir / f"{utt_id}.wav", wave, LIBRITTS_SAMPLE_RATE, workdir)
            (chapter_dir / f"{utt_id}.original.txt").write_text(original, encoding="utf-8")
            (chapter_dir / f"{utt_id}.normalized.txt").write_text(normalized, encoding="utf-8")
            transcript.append(f"{utt_id}\t{original}\t{normalized}\n")
        trans_path = chapter_dir / f"{speaker['speaker']}_{speaker['chapter']}.trans.tsv"
        trans_path.write_text("".join(transcript), encoding="utf-8")
        minutes = total_samples / ESPEAK_SAMPLE_RATE / 60
        name = f"espeak-ng {speaker['voice']}"
        speaker_lines.append(
            f"{speaker['speaker']:<5}| {speaker['sex']} | {LIBRITTS_SUBSET:<17}| {minutes:5.2f} | {name}\n"
        )
        count += len(transcript)
    (root / "SPEAKERS.txt").write_text("".join(speaker_lines), encoding="utf-8")
    return count


def make_jsut(outdir, workdir):
    root = outdir / "jsut" / JSUT_SUBSET
    lines = []
    for index, (text, reading) in enumerate(tqdm(JSUT_SENTENCES, desc="jsut")):
        if ":" in text:
            raise ValueError(f"JSUT sentence {index}: ':' separates the id from the text; remove it")
        utt_id = f"BASIC5000_{index + 1:04d}"
        wave, _ = trim_silence(synthesize(reading, workdir=workdir, **JSUT_VOICE), ESPEAK_SAMPLE_RATE)
        write_wav(root / "wav" / f"{utt_id}.wav", wave, JSUT_SAMPLE_RATE, workdir)
        lines.append(f"{utt_id}:{text}\n")
    (root / "transcript_utf8.txt").write_text("".join(lines), encoding="utf-8")
    return len(lines)


def directory_size(path):
    return sum(file.stat().st_size for file in path.rglob("*") if file.is_file())


CORPORA = {"ljspeech": make_ljspeech, "baker": make_baker, "libritts": make_libritts, "jsut": make_jsut}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--outdir",
        type=Path,
        default=Path(__file__).resolve().parent / "corpus",
        help="where ljspeech/, baker/, libritts/ and jsut/ are (re)written (default: test/files/corpus)",
    )
    parser.add_argument(
        "--corpus", nargs="+", choices=list(CORPORA), default=list(CORPORA),
        help="regenerate only these corpora (default: all); the size budget counts them all",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    for program in ("espeak-ng", "sox"):
        if shutil.which(program) is None:
            parser.error(f"{program} is not on PATH; install it (e.g. apt-get install espeak-ng sox)")

    args.outdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as workdir:
        for name in args.corpus:
            # Start clean so a sentence removed from this script leaves no stale wav behind.
            shutil.rmtree(args.outdir / name, ignore_errors=True)
            count = CORPORA[name](args.outdir, workdir)
            logger.info("%s: %d utterances, %.2f MB", name, count, directory_size(args.outdir / name) / 1e6)
    total_bytes = sum(directory_size(args.outdir / name) for name in CORPORA if (args.outdir / name).is_dir())
    logger.info("total: %.2f MB in %s", total_bytes / 1e6, args.outdir)
    if total_bytes > SIZE_BUDGET_BYTES:
        raise SystemExit(
            f"the corpora take {total_bytes / 1e6:.2f} MB, over the {SIZE_BUDGET_BYTES / 1e6:.2f} MB budget; "
            "shorten or drop sentences"
        )


if __name__ == "__main__":
    main()
