"""SynPaFlex (French): characters with French accents, after `french_cleaners`."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, List, Union

from tensorflow_tts.processor.base_processor import BaseProcessor, DataProcessorError
from tensorflow_tts.processor.text.cleaners import clean_text

PAD = "pad"
EOS = "eos"
PUNCTUATION = "!/'(),-.:;? "
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyzéèàùâêîôûçäëïöüÿœæ"

SYNPAFLEX_SYMBOLS = [PAD] + list(PUNCTUATION) + list(LETTERS) + [EOS]


@dataclass
class SynpaflexProcessor(BaseProcessor):
    """Corpus layout: `synpaflex.txt` with `ID|text` lines, or an LJSpeech-like `metadata.csv`;
    audio in `wavs/ID.wav`."""

    symbols: List[str] = field(default_factory=lambda: list(SYNPAFLEX_SYMBOLS))
    cleaner_names: Union[str, List[str], None] = "french_cleaners"
    train_f_name: str = "synpaflex.txt"

    dataset_name: ClassVar[str] = "synpaflex"
    default_speaker: ClassVar[str] = "synpaflex"

    def create_items(self) -> None:
        for name in (self.train_f_name, "metadata.csv"):
            if (Path(self.data_dir) / name).is_file():
                return self.create_items_from_id_text(Path(self.data_dir) / name)
        raise DataProcessorError(f"SynpaflexProcessor: neither {self.train_f_name} nor metadata.csv in {self.data_dir}")

    def setup_eos_token(self) -> str:
        return EOS

    def text_to_symbols(self, text: str) -> List[str]:
        return list(clean_text(text, self.cleaner_names))
