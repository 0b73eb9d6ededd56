"""Thorsten (German): characters, umlauts and ß included, after `german_cleaners`."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, List, Union

from tensorflow_tts.processor.base_processor import BaseProcessor
from tensorflow_tts.processor.text.cleaners import clean_text

PAD = "pad"
EOS = "eos"
SPECIAL = "-"
PUNCTUATION = "!'(),.:;? "
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyzäöüß"

THORSTEN_SYMBOLS = [PAD, SPECIAL] + list(PUNCTUATION) + list(LETTERS) + [EOS]


@dataclass
class ThorstenProcessor(BaseProcessor):
    """Corpus layout: `metadata.csv` with `ID|text` (or `ID|text|normalized`), audio in `wavs/ID.wav`."""

    symbols: List[str] = field(default_factory=lambda: list(THORSTEN_SYMBOLS))
    cleaner_names: Union[str, List[str], None] = "german_cleaners"
    train_f_name: str = "metadata.csv"

    dataset_name: ClassVar[str] = "thorsten"
    default_speaker: ClassVar[str] = "thorsten"

    def create_items(self) -> None:
        self.create_items_from_id_text(Path(self.data_dir) / self.train_f_name)

    def setup_eos_token(self) -> str:
        return EOS

    def text_to_symbols(self, text: str) -> List[str]:
        return list(clean_text(text, self.cleaner_names))
