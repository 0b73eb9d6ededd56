"""JSUT (Japanese, one female speaker): OpenJTalk phonemes with TensorFlowTTS 1.8's table."""

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, List

import yaml

from tensorflow_tts.processor.base_processor import BaseProcessor, DataProcessorError, read_corpus_lines
from tensorflow_tts.processor.text.japanese import DEVOICED_VOWELS, load_openjtalk, openjtalk_phonemes

PAD, SILENCE, EOS = "pad", "sil", "eos"
# 1.8's table (processor/jsut.py, pretrained/jsut_mapper.json): pad, sil, OpenJTalk's
# phonemes in alphabetical order ("pau" is a pause inside the sentence), eos.
JSUT_PHONEMES = [
    "N", "a", "b", "by", "ch", "cl", "d", "dy", "e", "f", "g", "gy", "h", "hy", "i", "j", "k", "ky",
    "m", "my", "n", "ny", "o", "p", "pau", "py", "r", "ry", "s", "sh", "t", "ts", "u", "v", "w", "y", "z",
]
JSUT_SYMBOLS = [PAD, SILENCE] + JSUT_PHONEMES + [EOS]

TRANSCRIPT_NAME = "transcript_utf8.txt"  # JSUT's own transcripts: "BASIC5000_0001:text" lines
_PHONE_TOKENS = frozenset(JSUT_PHONEMES) | {SILENCE} | set(DEVOICED_VOWELS)


def is_phone_string(text: str) -> bool:
    """"sil m i z u o k a u sil" -> True; "水を買う。" -> False."""
    tokens = text.split()
    return bool(tokens) and all(token in _PHONE_TOKENS for token in tokens)


@dataclass
class JSUTProcessor(BaseProcessor):
    """Two corpus layouts, both with audio in `<folder>/wav/<ID>.wav`:

    * JSUT as published: `transcript_utf8.txt` (`ID:Japanese text` lines) in `data_dir`
      (e.g. `jsut_ver1.1/basic5000`) or in each subset folder of it (`jsut_ver1.1`);
      the text is read with OpenJTalk.
    * 1.8's: `text_kana/basic5000.yaml` from jsut-label in `data_dir`, whose `phone_level3`
      entries ("m-i-z-u-...") are the phonemes. Used when the file is there.

    Every utterance is framed by "sil" as 1.8 trained its voices: Japanese text reads
    "sil <OpenJTalk phonemes> sil eos", at training and at inference alike (1.8's
    inference left the two "sil" out). A phone string ("sil m i z u sil") maps token by token.
    """

    symbols: List[str] = field(default_factory=lambda: list(JSUT_SYMBOLS))
    train_f_name: str = "text_kana/basic5000.yaml"

    dataset_name: ClassVar[str] = "jsut"
    default_speaker: ClassVar[str] = "jsut"

    def create_items(self) -> None:
        root = Path(self.data_dir)
        if (root / self.train_f_name).is_file():
            return self._read_phone_labels(root / self.train_f_name)
        transcripts = [root / TRANSCRIPT_NAME] if (root / TRANSCRIPT_NAME).is_file() else sorted(
            root.glob(f"*/{TRANSCRIPT_NAME}")
        )
        if not transcripts:
            raise DataProcessorError(
                f"JSUTProcessor: {root} has neither {TRANSCRIPT_NAME} (nor */{TRANSCRIPT_NAME}) nor {self.train_f_name}"
            )
        load_openjtalk()  # the transcripts are text: stop now, not at every utterance, if G2P cannot run
        for transcript in transcripts:
            for number, line in read_corpus_lines(transcript):
                label = f"{transcript.relative_to(root)} line {number}"
                utt_id, colon, text = line.partition(":")
                if not colon:
                    self.reject(label, "expected 'ID:text'")
                    continue
                wav_path = os.path.join(transcript.parent, "wav", utt_id.strip() + self.f_extension)
                self.add_item(label, text, wav_path, self.default_speaker, utt_id=utt_id.strip())

    def _read_phone_labels(self, path: Path) -> None:
        """jsut-label's `{ID: {phone_level3: "m-i-z-u-...", ...}}`; audio in `data_dir/wav/`."""
        try:
            labels = yaml.safe_load(path.read_text(encoding="utf-8-sig"))
        except (OSError, yaml.YAMLError) as error:
            raise DataProcessorError(f"JSUTProcessor: cannot read {path}: {error}") from error
        if not isinstance(labels, dict):
            raise DataProcessorError(f"JSUTProcessor: {path} is not a mapping of utterance ids to labels")
        for utt_id, entry in labels.items():
            label = f"{path.name} {utt_id}"
            phones = entry.get("phone_level3") if isinstance(entry, dict) else None
            if not isinstance(phones, str) or not phones.strip():
                self.reject(label, "no phone_level3 entry")
                continue
            text = " ".join([SILENCE] + phones.strip().split("-") + [SILENCE])
            wav_path = os.path.join(self.data_dir, "wav", f"{utt_id}{self.f_extension}")
            self.add_item(label, text, wav_path, self.default_speaker, utt_id=str(utt_id))

    def setup_eos_token(self) -> str:
        return EOS

    def text_to_symbols(self, text: str, inference: bool = False) -> List[str]:
        """Phonemes of `text`; `inference=True` (1.8's flag) reads even a phone-like text as Japanese."""
        if not inference and is_phone_string(text):
            return [DEVOICED_VOWELS.get(token, token) for token in text.split()]
        phonemes = openjtalk_phonemes(text)
        return [SILENCE] + phonemes + [SILENCE] if phonemes else []

    def text_to_sequence(self, text: str, inference: bool = False) -> List[int]:
        return self.encode(text, inference=inference)[0]
