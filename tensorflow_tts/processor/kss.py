"""KSS (Korean): one symbol per jamo after Korean normalisation (numbers, Latin letters)."""

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Dict, List, Union

from tensorflow_tts.processor.base_processor import BaseProcessor
from tensorflow_tts.processor.text.cleaners import clean_text
from tensorflow_tts.processor.text.korean import JAMO_LEADS, JAMO_TAILS, JAMO_VOWELS

PAD = "pad"
EOS = "eos"
SPECIAL = "-"
PUNCTUATION = "!'(),-.:;? "

# "-" is listed twice (as special and as punctuation), as in the original table: it maps
# to the second position (7) and id 1 is never produced. Kept so old KSS voices load.
KSS_SYMBOLS = [PAD, SPECIAL] + list(PUNCTUATION) + JAMO_LEADS + JAMO_VOWELS + JAMO_TAILS + [EOS]


@dataclass
class KSSProcessor(BaseProcessor):
    """Corpus layout: `transcript.v.1.x.txt` with `path|original|expanded|decomposed|seconds|english`
    lines (the expanded script is read), audio in `kss/<path>` (or `<path>`)."""

    symbols: List[str] = field(default_factory=lambda: list(KSS_SYMBOLS))
    cleaner_names: Union[str, List[str], None] = "korean_cleaners"
    train_f_name: str = "transcript.v.1.4.txt"

    positions: ClassVar[Dict[str, int]] = {"file": 0, "text": 2}
    dataset_name: ClassVar[str] = "kss"
    default_speaker: ClassVar[str] = "kss"

    def create_items(self) -> None:
        transcript = Path(self.data_dir) / self.train_f_name
        if not transcript.is_file():
            found = sorted(Path(self.data_dir).glob("transcript.v.1.*.txt"))
            transcript = found[-1] if found else transcript
        # The download unpacks audio under kss/; a flat copy next to the transcript works too.
        audio_root = Path(self.data_dir) / "kss"
        audio_root = audio_root if audio_root.is_dir() else Path(self.data_dir)
        for label, fields in self.read_delimited(transcript, len(self.positions) + 1, id_field=self.positions["file"]):
            relative = fields[self.positions["file"]].strip()
            if Path(relative).is_absolute() or ".." in Path(relative).parts:
                self.reject(label, f"path {relative!r} must be relative to the corpus folder, without '..'")
                continue
            if not relative.endswith(self.f_extension):
                relative += self.f_extension
            wav_path = os.path.join(audio_root, relative)
            self.add_item(label, fields[self.positions["text"]], wav_path, self.default_speaker)

    def setup_eos_token(self) -> str:
        return EOS

    def text_to_symbols(self, text: str) -> List[str]:
        return list(clean_text(text, self.cleaner_names))
