"""LibriTTS (multi-speaker English): ARPAbet phonemes, TensorFlowTTS 1.8's table and rules; no end-of-sequence token."""

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, List, Union

from tensorflow_tts.processor.base_processor import BaseProcessor, read_corpus_lines
from tensorflow_tts.processor.ljspeech import ARPABET, split_arpabet
from tensorflow_tts.processor.ljspeechu import g2p_tokens
from tensorflow_tts.processor.text.cleaners import clean_text
from tensorflow_tts.processor.text.g2p import ARPABET_WITH_STRESS

# 1.8's table: g2p-en's decoder vocabulary (its 4 specials, then its 70 phones), the silence
# and end marks of aligned transcripts, all with "@"; then punctuation and space without.
_G2P_EN_SPECIALS = ["<pad>", "<unk>", "<s>", "</s>"]
SILENCE, END = "@SIL", "@END"
LIBRITTS_PUNCTUATION = "!'(),.:;? "
LIBRITTS_SYMBOLS = ["@" + name for name in _G2P_EN_SPECIALS + ARPABET_WITH_STRESS + ["SIL", "END"]] + list(
    LIBRITTS_PUNCTUATION
)

# What a 1.8 training transcript holds: examples/mfa_extraction wrote the aligned phones of
# each utterance, silences as SIL and the closing interval as END, separated by spaces.
_PHONE_NAMES = frozenset(ARPABET) | {"SIL", "END"}


def is_phone_string(text: str) -> bool:
    """"HH AH0 L OW1 SIL END" -> True; "Hello." -> False."""
    tokens = text.split()
    return bool(tokens) and all(token in _PHONE_NAMES for token in tokens)


@dataclass
class LibriTTSProcessor(BaseProcessor):
    """Corpus layout: `train.txt` (`path|text|speaker`) when present; otherwise the native tree
    `[<subset>/]<speaker>/<chapter>/<utt>.wav` with `<utt>.normalized.txt`, read recursively.

    Text is either a phone string, as 1.8's `train.txt` held ("HH AH0 L OW1 SIL W ER1 L D END"),
    or English, read with G2P.
    """

    symbols: List[str] = field(default_factory=lambda: list(LIBRITTS_SYMBOLS))
    # Run on English text before G2P; 1.8 ran none (g2p-en spells out numbers itself).
    cleaner_names: Union[str, List[str], None] = None

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
        """Phones with "@"; a closing SIL becomes END, as in 1.8.

        A phone string maps token by token (1.8's training input). English goes through G2P
        without word boundaries (1.8's inference); `{}` passes phones through. 1.8 failed on
        punctuation in English text (it looked up "@."), and its voices learnt pauses only
        as SIL, so here . , ? ! read as one SIL and a closing one as END; ; and : are dropped,
        as g2p-en dropped them.
        """
        if is_phone_string(text):
            symbols = ["@" + phone for phone in text.split()]
        else:
            symbols = []
            for segment, is_arpabet in split_arpabet(text):
                if is_arpabet:
                    symbols += ["@" + phone for phone in segment.split()]
                    continue
                for token in g2p_tokens(clean_text(segment, self.cleaner_names)):
                    if token not in LIBRITTS_PUNCTUATION:
                        symbols.append("@" + token)
                    elif symbols and symbols[-1] != SILENCE:
                        symbols.append(SILENCE)
        if symbols and symbols[-1] == SILENCE:
            symbols[-1] = END
        return symbols
