"""Regenerate `test/files/corpus/broken/`: an LJSpeech-layout corpus full of bad input.

Every item exercises one way a real corpus goes wrong (see ITEMS); test/test_preprocess.py
asserts what preprocessing does with each. The audio is synthesised here (harmonic tones
under a syllable-like envelope), with no randomness, so the output is the same on every run.

    python test/files/make_broken_corpus.py [--outdir test/files/corpus/broken]
"""

import argparse
import logging
import shutil
import struct
from pathlib import Path

import numpy as np
import soundfile as sf

logger = logging.getLogger("make_broken_corpus")

SAMPLE_RATE = 22050
SENTENCE = "The quick brown fox jumps over the lazy dog."
LONG_SECONDS = 2.0  # the preprocessing test limits utterances to 1.5 s
SHORT_SECONDS = 0.7


def voice_like(seconds, sample_rate=SAMPLE_RATE, base_f0=140.0):
    """A gliding harmonic tone in three 'syllables', with 0.1 s of silence on each side."""
    margin = int(0.1 * sample_rate)
    length = int(seconds * sample_rate) - 2 * margin
    time = np.arange(length) / sample_rate
    f0 = base_f0 * (1.0 + 0.2 * np.sin(2 * np.pi * 0.8 * time))
    phase = 2 * np.pi * np.cumsum(f0) / sample_rate
    tone = sum(np.sin(k * phase) / k for k in range(1, 12))
    syllables = np.sin(np.pi * 3 * np.arange(length) / length) ** 2
    signal = 0.3 * tone * syllables / np.max(np.abs(tone))
    return np.pad(signal, (margin, margin)).astype(np.float32)


def write_wav(path, audio, sample_rate=SAMPLE_RATE, subtype="PCM_16"):
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), audio, sample_rate, subtype=subtype, format="WAV")


def write_float_wav(path, audio, sample_rate=SAMPLE_RATE):
    """32-bit float mono WAV, written by hand: libsndfile adds a PEAK chunk with a timestamp."""
    data = np.asarray(audio, dtype="<f4").tobytes()
    fmt = struct.pack("<HHIIHH", 3, 1, sample_rate, 4 * sample_rate, 4, 32)  # 3: IEEE float
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(data)) + data
    path.write_bytes(b"RIFF" + struct.pack("<I", len(body)) + body)


def build(outdir):
    """Write the corpus into `outdir` (replacing it); returns the metadata lines."""
    shutil.rmtree(outdir, ignore_errors=True)
    wavs = outdir / "wavs"
    wavs.mkdir(parents=True)
    lines = []

    def item(utt_id, text=SENTENCE, fields=None):
        lines.append("|".join(fields) if fields is not None else f"{utt_id}|{text}|{text}")

    # Good items, each with a different pitch so they are distinct utterances.
    for number, base_f0 in enumerate((110.0, 130.0, 150.0, 170.0, 190.0, 210.0), start=1):
        write_wav(wavs / f"good-{number:02d}.wav", voice_like(SHORT_SECONDS, base_f0=base_f0))
        item(f"good-{number:02d}")

    # Files that cannot be read.
    item("missing-wav")  # no wavs/missing-wav.wav
    write_wav(wavs / "zero-length.wav", np.zeros(0, dtype=np.float32))
    item("zero-length")
    write_wav(wavs / "truncated-header.wav", voice_like(SHORT_SECONDS))
    header = (wavs / "truncated-header.wav").read_bytes()[:20]
    (wavs / "truncated-header.wav").write_bytes(header)
    item("truncated-header")
    (wavs / "unreadable.wav").write_bytes(b"This is a text file that was saved with a .wav name.\n")
    item("unreadable")

    # Metadata lines the processor must reject.
    write_wav(wavs / "empty-text.wav", voice_like(SHORT_SECONDS))
    item("empty-text", fields=["empty-text", "", ""])
    write_wav(wavs / "few-fields.wav", voice_like(SHORT_SECONDS))
    item("few-fields", fields=["few-fields"])
    # wavs/../x.wav exists, so only the id itself can stop it.
    write_wav(outdir / "x.wav", voice_like(SHORT_SECONDS))
    item("../x")

    # Text with characters no symbol stands for: dropped (converted); nothing left: skipped.
    write_wav(wavs / "unknown-symbols.wav", voice_like(SHORT_SECONDS))
    item("unknown-symbols", text="The quick brown fox ~ jumps # over the lazy dog.")
    write_wav(wavs / "no-known-symbols.wav", voice_like(SHORT_SECONDS))
    item("no-known-symbols", text="#~^*")

    # Audio that is unusable as speech.
    write_wav(wavs / "too-long.wav", voice_like(LONG_SECONDS))
    item("too-long")
    write_wav(wavs / "silence.wav", np.zeros(int(SHORT_SECONDS * SAMPLE_RATE), dtype=np.float32))
    item("silence")

    # Audio that is converted: stereo, another rate, 8-bit, float.
    mono = voice_like(SHORT_SECONDS, base_f0=160.0)
    write_wav(wavs / "stereo.wav", np.stack([mono, 0.5 * mono], axis=1))
    item("stereo")
    write_wav(wavs / "rate-44100.wav", voice_like(SHORT_SECONDS, sample_rate=44100, base_f0=160.0), sample_rate=44100)
    item("rate-44100")
    write_wav(wavs / "pcm-u8.wav", mono, subtype="PCM_U8")
    item("pcm-u8")
    write_float_wav(wavs / "float32.wav", mono)
    item("float32")

    # A UTF-8 byte-order mark before the first line and Windows (CRLF) line endings,
    # except for the last two lines, which end in a bare LF.
    text = "\ufeff" + "\r\n".join(lines[:-2]) + "\r\n" + "\n".join(lines[-2:]) + "\n"
    (outdir / "metadata.csv").write_bytes(text.encode("utf-8"))
    # Keep git from normalising those line endings (or anything else here) on commit or checkout.
    (outdir / ".gitattributes").write_text("* -text\n", encoding="utf-8")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outdir", type=Path, default=Path(__file__).parent / "corpus" / "broken")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    lines = build(args.outdir)
    size = sum(path.stat().st_size for path in args.outdir.rglob("*") if path.is_file())
    logger.info("wrote %d metadata lines and %.0f kB to %s", len(lines), size / 1024, args.outdir)


if __name__ == "__main__":
    main()
