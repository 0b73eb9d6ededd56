"""LJSpeech "ultimate": ARPAbet phonemes (offline G2P) instead of characters; `{}` still passes phones through.

The table and the text rules are those of TensorFlowTTS' LJSpeechUltimateProcessor, which the
repository gained after the 1.8 release (the 1.8 wheel has no such processor).
"""

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, List, Union

from tensorflow_tts.processor.base_processor import BaseProcessor
from tensorflow_tts.processor.ljspeech import ARPABET, EOS, PAD, SPECIAL, split_arpabet
from tensorflow_tts.processor.text.cleaners import clean_text

# No space: the original left word boundaries out of the phone sequence on purpose, as
# they made attention learn badly on phone input.
LJSPEECH_U_PUNCTUATION = "!'(),.:;?"
LJSPEECH_U_SYMBOLS = [PAD, SPECIAL] + list(LJSPEECH_U_PUNCTUATION) + ["@" + phone for phone in ARPABET] + [EOS]

# g2p-en deletes ";" and ":" before it tokenizes, so the original front ends never got them
# from G2P; our G2P keeps them as tokens.
_DELETED_BY_G2P_EN = {";", ":"}
_WORD_CHARACTER = re.compile(r"[^\W_]")


def g2p_tokens(text: str) -> List[str]:
    """Phones and the punctuation g2p-en keeps (. , ? !), word breaks dropped: the original's G2P output.

    "Hello, world." -> HH AH0 L OW1 , W ER1 L D .
    """
    from tensorflow_tts.processor.text.g2p import get_g2p

    return [token for token in get_g2p()(text) if token != " " and token not in _DELETED_BY_G2P_EN]


def has_words(text: str) -> bool:
    """Whether `text` has a letter or digit, i.e. anything for G2P to read."""
    return _WORD_CHARACTER.search(text) is not None


@dataclass
class LJSpeechUltimateProcessor(BaseProcessor):
    """Corpus layout: `metadata.csv` like LJSpeech (normalized text converted with G2P), or the
    original's `filelist.txt` with `wavs/ID.wav|text` lines when present (text may be ARPAbet in `{}`)."""

    symbols: List[str] = field(default_factory=lambda: list(LJSPEECH_U_SYMBOLS))
    # Run on text before G2P. The original ran none: g2p-en spells out numbers itself, and
    # "Mr." reads as M IH1 S T ER0 followed by ".". "english_cleaners" expands abbreviations.
    cleaner_names: Union[str, List[str], None] = None
    train_f_name: str = "metadata.csv"

    dataset_name: ClassVar[str] = "ljspeechu"
    default_speaker: ClassVar[str] = "ljspeech"

    def create_items(self) -> None:
        if (Path(self.data_dir) / "filelist.txt").is_file():
            self.train_f_name = "filelist.txt"
            # The original read `path|text` and named every item's speaker "ljspeech".
            for label, fields in self.read_delimited(Path(self.data_dir) / self.train_f_name, 2, id_field=0):
                relative = fields[0].strip()
                if Path(relative).is_absolute() or ".." in Path(relative).parts:
                    self.reject(label, f"path {relative!r} must be relative to the corpus folder, without '..'")
                    continue
                if not relative.endswith(self.f_extension):
                    relative += self.f_extension
                self.add_item(label, fields[1], os.path.join(self.data_dir, relative), self.default_speaker)
            return
        for label, fields in self.read_delimited(Path(self.data_dir) / self.train_f_name, 3, id_field=0):
            utt_id = fields[0].strip()
            wav_path = os.path.join(self.data_dir, "wavs", utt_id + self.f_extension)
            self.add_item(label, fields[2], wav_path, self.default_speaker, utt_id=utt_id)

    def setup_eos_token(self) -> str:
        return EOS

    def text_to_symbols(self, text: str, inference: bool = False) -> List[str]:
        """"Hello, {W ER1 L D}!" -> @HH @AH0 @L @OW1 , @W @ER1 @L @D !  (no word boundaries).

        Text outside `{}` goes through G2P, as in the original. A segment with no letters or
        digits (punctuation between `{}` blocks) is mapped character by character, spaces
        dropped, as the original did. Words next to `{}` blocks are read with G2P too, where
        the original dropped them. `inference` is accepted for the old signature.
        """
        symbols: List[str] = []
        for segment, is_arpabet in split_arpabet(text):
            if is_arpabet:
                symbols += ["@" + phone for phone in segment.split()]
            elif has_words(segment):
                symbols += [
                    token if token in LJSPEECH_U_PUNCTUATION else "@" + token
                    for token in g2p_tokens(clean_text(segment, self.cleaner_names))
                ]
            else:  # punctuation between {} blocks: cleaned and mapped as the original did
                symbols += [char for char in clean_text(segment, "english_cleaners") if not char.isspace()]
        return symbols

    def text_to_sequence(self, text: str, inference: bool = False) -> List[int]:
        return self.encode(text)[0]
