"""LJSpeech "ultimate": ARPAbet phonemes (offline G2P) instead of characters; `{}` still passes phones through."""

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, List, Union

from tensorflow_tts.processor.base_processor import BaseProcessor
from tensorflow_tts.processor.ljspeech import ARPABET, EOS, PAD, PUNCTUATION, SPECIAL, split_arpabet
from tensorflow_tts.utils.cleaners import clean_text

# Phones, word boundaries (" ") and punctuation; no letters.
ARPABET_SYMBOLS = [PAD, SPECIAL] + list(PUNCTUATION) + ["@" + phone for phone in ARPABET]
LJSPEECH_U_SYMBOLS = ARPABET_SYMBOLS + [EOS]


def english_to_arpabet_symbols(text: str, cleaner_names: Union[str, List[str], None]) -> List[str]:
    """"Hello, {W ER1 L D}!" -> @HH @AH0 @L @OW1 , " " @W @ER1 @L @D !  (cleaned first, then G2P)."""
    from tensorflow_tts.utils.g2p import get_g2p

    symbols: List[str] = []
    for segment, is_arpabet in split_arpabet(text):
        if is_arpabet:
            symbols += ["@" + phone for phone in segment.split()]
            continue
        # Keep the boundary spaces a segment had around a {} block; G2P strips them.
        cleaned = clean_text(segment, cleaner_names)
        if cleaned[:1].isspace() and symbols and symbols[-1] != " ":
            symbols.append(" ")
        for token in get_g2p()(cleaned):
            symbols.append(token if token in PUNCTUATION else "@" + token)
        if cleaned[-1:].isspace() and symbols and symbols[-1] != " ":
            symbols.append(" ")
    return symbols


@dataclass
class LJSpeechUltimateProcessor(BaseProcessor):
    """Corpus layout: `metadata.csv` like LJSpeech (normalized text converted with G2P),
    or `filelist.txt` with `wavs/ID.wav|text|speaker` lines when present."""

    symbols: List[str] = field(default_factory=lambda: list(LJSPEECH_U_SYMBOLS))
    cleaner_names: Union[str, List[str], None] = "english_cleaners"
    train_f_name: str = "metadata.csv"

    dataset_name: ClassVar[str] = "ljspeechu"
    default_speaker: ClassVar[str] = "ljspeech"

    def create_items(self) -> None:
        if (Path(self.data_dir) / "filelist.txt").is_file():
            self.train_f_name = "filelist.txt"
            return super().create_items()
        for label, fields in self.read_delimited(Path(self.data_dir) / self.train_f_name, 3):
            utt_id = fields[0].strip()
            wav_path = os.path.join(self.data_dir, "wavs", utt_id + self.f_extension)
            self.add_item(label, fields[2], wav_path, self.default_speaker, utt_id=utt_id)

    def setup_eos_token(self) -> str:
        return EOS

    def text_to_symbols(self, text: str, inference: bool = False) -> List[str]:
        """Always phonemes; `inference` is accepted for the old call signature."""
        return english_to_arpabet_symbols(text, self.cleaner_names)

    def text_to_sequence(self, text: str, inference: bool = False) -> List[int]:
        return self.encode(text)[0]
