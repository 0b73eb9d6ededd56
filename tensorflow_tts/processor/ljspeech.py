"""LJSpeech: English characters after `english_cleaners`; text in `{}` is ARPAbet (`@PHONE` symbols)."""

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Dict, List, Tuple, Union

from tensorflow_tts.processor.base_processor import BaseProcessor
from tensorflow_tts.processor.text.cleaners import clean_text

_ARPABET_VOWELS = ["AA", "AE", "AH", "AO", "AW", "AY", "EH", "ER", "EY", "IH", "IY", "OW", "OY", "UH", "UW"]
_ARPABET_CONSONANTS = ["B", "CH", "D", "DH", "F", "G", "HH", "JH", "K", "L", "M", "N", "NG", "P", "R", "S",
                       "SH", "T", "TH", "V", "W", "Y", "Z", "ZH"]
# The CMU phone set, vowels with and without stress marks, in alphabetical order (84 phones).
ARPABET = sorted(
    [vowel + stress for vowel in _ARPABET_VOWELS for stress in ("", "0", "1", "2")] + _ARPABET_CONSONANTS
)

PAD = "pad"
EOS = "eos"
SPECIAL = "-"
PUNCTUATION = "!'(),.:;? "
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

LJSPEECH_SYMBOLS = [PAD, SPECIAL] + list(PUNCTUATION) + list(LETTERS) + ["@" + phone for phone in ARPABET] + [EOS]

_CURLY = re.compile(r"(.*?)\{(.+?)\}(.*)")


def split_arpabet(text: str) -> List[Tuple[str, bool]]:
    """[(segment, is_arpabet)]: "say {HH AH0 L OW1} now" -> plain, ARPAbet, plain."""
    segments = []
    while text:
        match = _CURLY.match(text)
        if match is None:
            segments.append((text, False))
            break
        segments += [(match.group(1), False), (match.group(2), True)]
        text = match.group(3)
    return segments


@dataclass
class LJSpeechProcessor(BaseProcessor):
    """Corpus layout: `metadata.csv` with `ID|raw text|normalized text`, audio in `wavs/ID.wav`."""

    symbols: List[str] = field(default_factory=lambda: list(LJSPEECH_SYMBOLS))
    cleaner_names: Union[str, List[str], None] = "english_cleaners"
    train_f_name: str = "metadata.csv"

    positions: ClassVar[Dict[str, int]] = {"wave_file": 0, "text": 1, "text_norm": 2}
    dataset_name: ClassVar[str] = "ljspeech"
    default_speaker: ClassVar[str] = "ljspeech"

    def create_items(self) -> None:
        for label, fields in self.read_delimited(Path(self.data_dir) / self.train_f_name, len(self.positions),
                                                 id_field=self.positions["wave_file"]):
            utt_id = fields[self.positions["wave_file"]].strip()
            wav_path = os.path.join(self.data_dir, "wavs", utt_id + self.f_extension)
            self.add_item(label, fields[self.positions["text_norm"]], wav_path, self.default_speaker, utt_id=utt_id)

    def setup_eos_token(self) -> str:
        return EOS

    def text_to_symbols(self, text: str) -> List[str]:
        symbols: List[str] = []
        for segment, is_arpabet in split_arpabet(text):
            if is_arpabet:
                symbols += ["@" + phone for phone in segment.split()]
            else:
                symbols += list(clean_text(segment, self.cleaner_names))
        return symbols
