"""LibriTTS (multi-speaker English): ARPAbet phonemes via the offline G2P; no end-of-sequence token."""

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, List, Union

from tensorflow_tts.processor.base_processor import BaseProcessor, read_corpus_lines
from tensorflow_tts.processor.ljspeechu import ARPABET_SYMBOLS, english_to_arpabet_symbols


@dataclass
class LibriTTSProcessor(BaseProcessor):
    """Corpus layout: `train.txt` (`path|text|speaker`) when present; otherwise the native tree
    `[<subset>/]<speaker>/<chapter>/<utt>.wav` with `<utt>.normalized.txt`, read recursively."""

    symbols: List[str] = field(default_factory=lambda: list(ARPABET_SYMBOLS))
    cleaner_names: Union[str, List[str], None] = "english_cleaners"

    dataset_name: ClassVar[str] = "libritts"

    def create_items(self) -> None:
        if (Path(self.data_dir) / self.train_f_name).is_file():
            return super().create_items()
        root = Path(self.data_dir)
        transcripts = sorted(root.rglob("*.normalized.txt"))
        if not transcripts:
            self.reject(str(root), f"neither {self.train_f_name} nor any *.normalized.txt found")
        for transcript in transcripts:
            label = str(transcript.relative_to(root))
            lines = [line for _, line in read_corpus_lines(transcript)]
            utt_id = transcript.name[: -len(".normalized.txt")]
            wav_path = os.path.join(transcript.parent, utt_id + self.f_extension)
            speaker = transcript.parent.parent.name if transcript.parent != root else utt_id.split("_")[0]
            self.add_item(label, " ".join(lines), wav_path, speaker, utt_id=utt_id)

    def setup_eos_token(self) -> None:
        # The original LibriTTS table has no EOS; adding one would give old voices an id
        # outside their embedding.
        return None

    def text_to_symbols(self, text: str) -> List[str]:
        return english_to_arpabet_symbols(text, self.cleaner_names)
