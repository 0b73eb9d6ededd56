"""Baker (Mandarin): pinyin initials and tonal finals with prosody marks, from the corpus labels or pypinyin."""

import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Dict, List, Optional, Sequence, Tuple

from tensorflow_tts.processor.base_processor import BaseProcessor, DataProcessorError, read_corpus_lines

PAD = "pad"
EOS = "eos"
PAUSES = ["sil", "#0", "#1", "#2", "#3"]  # sil: silence at the ends; #0 between syllables; #1-#3 prosodic breaks
INITIALS = ["^", "b", "c", "ch", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "q", "r", "s", "sh", "t", "x", "z", "zh"]
FINALS = ["a", "ai", "an", "ang", "ao", "e", "ei", "en", "eng", "er", "i", "ia", "ian", "iang", "iao", "ie", "ii",
          "iii", "in", "ing", "iong", "iou", "o", "ong", "ou", "u", "ua", "uai", "uan", "uang", "uei", "uen", "ueng",
          "uo", "v", "van", "ve", "vn"]
TONES = ["1", "2", "3", "4", "5"]  # 5 is the neutral tone

BAKER_SYMBOLS = [PAD] + PAUSES + INITIALS + [final + tone for final in FINALS for tone in TONES] + [EOS]

# Every Mandarin syllable (toneless pinyin, ü written v) the table knows, by spelled initial.
_SYLLABLES_BY_INITIAL = {
    "": "a ai an ang ao e ei en eng er ng o ou",
    "b": "a ai an ang ao e ei en eng i ian iao ie in ing o u",
    "c": "a ai an ang ao e en eng i ong ou u uan ui un uo",
    "ch": "a ai an ang ao e en eng i ong ou u ua uai uan uang ui un uo",
    "d": "a ai an ang ao e ei en eng i ia ian iao ie ing iu ong ou u uan ui un uo",
    "f": "a an ang ei en eng o ou u",
    "g": "a ai an ang ao e ei en eng ong ou u ua uai uan uang ui un uo",
    "h": "a ai an ang ao e ei en eng ong ou u ua uai uan uang ui un uo",
    "j": "i ia ian iang iao ie in ing iong iu u uan ue un",
    "k": "a ai an ang ao e ei en eng ong ou u ua uai uan uang ui un uo",
    "l": "a ai an ang ao e ei eng i ia ian iang iao ie in ing iu o ong ou u uan ue un uo v ve",
    "m": "a ai an ang ao e ei en eng i ian iao ie in ing iu o ou u",
    "n": "a ai an ang ao e ei en eng i ia ian iang iao ie in ing iu ong ou u uan ue uo v ve",
    "p": "a ai an ang ao e ei en eng i ian iao ie in ing o ou u",
    "q": "i ia ian iang iao ie in ing iong iu u uan ue un",
    "r": "an ang ao e en eng i ong ou u ua uan ui un uo",
    "s": "a ai an ang ao e en eng i ong ou u uan ui un uo",
    "sh": "a ai an ang ao e ei en eng i ou u ua uai uan uang ui un uo",
    "t": "a ai an ang ao e ei eng i ian iao ie ing ong ou u uan ui un uo",
    "w": "a ai an ang ei en eng o u",
    "x": "i ia ian iang iao ie in ing iong iu u uan ue un",
    "y": "a an ang ao e i in ing o ong ou u uan ue un",
    "z": "a ai an ang ao e ei en eng i ong ou u uan ui un uo",
    "zh": "a ai an ang ao e ei en eng i ong ou u ua uai uan uang ui un uo",
}
_SPELLED_INITIALS = sorted((i for i in _SYLLABLES_BY_INITIAL if i not in ("", "y", "w")), key=len, reverse=True)
# Written abbreviations of the finals: "jiu" is j+iou, "gui" g+uei, "lun" l+uen, "ju" j+v.
_ABBREVIATED_FINALS = {"iu": "iou", "ui": "uei", "un": "uen"}


def split_syllable(syllable: str) -> Tuple[str, str]:
    """Toneless pinyin -> (initial, final) in the Baker phone set: "shi" -> ("sh", "iii"), "yuan" -> ("^", "van")."""
    if syllable == "ng":  # the interjection 嗯 is read as a bare nasal
        return "^", "en"
    if syllable[0] in "yw":
        rest = syllable[1:]
        if syllable[0] == "w":
            return "^", "u" if rest == "u" else "u" + rest
        if rest.startswith("u"):  # yu, yuan, yue, yun: ü
            return "^", "v" + rest[1:]
        if rest.startswith("i"):
            return "^", rest
        if rest in ("o", "ou"):
            return "^", "iou"
        return "^", "i" + rest
    initial = next((i for i in _SPELLED_INITIALS if syllable.startswith(i)), "")
    final = syllable[len(initial):]
    if not initial:
        return "^", final
    if initial in ("j", "q", "x") and final.startswith("u"):  # ü written u after j, q, x
        final = "v" + final[1:]
    elif final == "i" and initial in ("z", "c", "s"):
        final = "ii"
    elif final == "i" and initial in ("zh", "ch", "sh", "r"):
        final = "iii"
    elif final == "ue":
        final = "ve"
    final = _ABBREVIATED_FINALS.get(final, final)
    if final == "vn" and initial not in ("j", "q", "x"):
        final = "uen"
    return initial, final


def default_pinyin_dict() -> Dict[str, List[str]]:
    syllables = [initial + final for initial, finals in _SYLLABLES_BY_INITIAL.items() for final in finals.split()]
    return {syllable: list(split_syllable(syllable)) for syllable in sorted(syllables)}


_HANZI = re.compile("[\u4e00-\u9fa5]")


def is_zh(char: str) -> bool:
    return _HANZI.search(char) is not None


@functools.lru_cache(maxsize=1)
def _pypinyin():
    import pypinyin

    return pypinyin


def hanzi_to_pinyin(text: str) -> List[str]:
    """Pinyin with tone numbers (neutral tone 5) for each hanzi; everything else is skipped."""
    pypinyin = _pypinyin()
    syllables = pypinyin.pinyin(text, style=pypinyin.Style.TONE3, neutral_tone_with_five=True, errors="ignore")
    return [s for s in ("".join(group) for group in syllables) if "#" not in s]


@dataclass
class BakerProcessor(BaseProcessor):
    """Corpus layout: `ProsodyLabeling/000001-010000.txt` (a line `ID<TAB>文本#1标注` then a line
    `<TAB>pinyin with tones`), audio in `Wave/ID.wav`. The items' text is the phone string."""

    symbols: List[str] = field(default_factory=lambda: list(BAKER_SYMBOLS))
    pinyin_dict: Dict[str, Sequence[str]] = field(default_factory=default_pinyin_dict)
    cleaner_names: Optional[str] = None  # Baker text is labelled pinyin; nothing to clean
    train_f_name: str = "ProsodyLabeling/000001-010000.txt"

    dataset_name: ClassVar[str] = "baker"
    default_speaker: ClassVar[str] = "baker"
    _LABEL: ClassVar[re.Pattern] = re.compile(r"^(\d+)\s+(\S.*)$")

    def setup_eos_token(self) -> str:
        return EOS

    def mapper_extras(self) -> Dict[str, Dict[str, List[str]]]:
        return {"pinyin_dict": {syllable: list(parts) for syllable, parts in self.pinyin_dict.items()}}

    def create_items(self) -> None:
        path = Path(self.data_dir) / self.train_f_name
        if not path.is_file():
            raise DataProcessorError(f"BakerProcessor: label file {path} not found")
        lines = list(read_corpus_lines(path))
        index = 0
        while index < len(lines):
            number, line = lines[index]
            match = self._LABEL.match(line)
            label = self.line_label(path, number, match.group(1) if match else "")
            if match is None:
                self.reject(label, "expected '<utterance id><TAB><text>' followed by a pinyin line")
                index += 1
                continue
            if index + 1 >= len(lines) or self._LABEL.match(lines[index + 1][1]):
                self.reject(label, "the pinyin line after it is missing")
                index += 1
                continue
            pinyin = lines[index + 1][1].split()
            index += 2
            utt_id, chars = match.group(1), match.group(2)
            try:
                phones = self.get_phoneme_from_char_and_pinyin(chars, pinyin, strict=True)
            except DataProcessorError as error:
                self.reject(label, str(error))
                continue
            wav_path = os.path.join(self.data_dir, "Wave", utt_id + self.f_extension)
            self.add_item(label, " ".join(phones), wav_path, self.default_speaker, utt_id=utt_id)

    def get_phoneme_from_char_and_pinyin(self, chn_char: str, pinyin: Sequence[str], strict: bool = False) -> List[str]:
        """Align hanzi with their pinyin: "你好" + [ni3, hao3] -> sil n i3 #0 h ao3 sil.

        `#k` marks in the text become pause symbols (`#4`, the sentence end, is dropped);
        punctuation and other characters are skipped. With `strict`, an unknown syllable or a
        hanzi/pinyin count mismatch raises; otherwise the unknown syllable is passed through
        (and later dropped as an unknown symbol).
        """
        chn_char = chn_char.replace("#4", "")
        result = ["sil"]
        i = j = 0
        while i < len(chn_char):
            char = chn_char[i]
            if char == "#":
                result.append(chn_char[i : i + 2])
                i += 2
                continue
            if not is_zh(char):
                i += 1
                continue
            if j >= len(pinyin):
                if strict:
                    raise DataProcessorError(f"more hanzi than pinyin syllables ({len(pinyin)}) in {chn_char!r}")
                break
            syllable, tone = pinyin[j][:-1], pinyin[j][-1]
            consumed = 1
            if syllable in self.pinyin_dict:
                initial, final = self.pinyin_dict[syllable]
                phones = [initial, final + tone]
            elif syllable.endswith("r") and syllable[:-1] in self.pinyin_dict and chn_char[i + 1 : i + 2] == "儿":
                # Erhua written as one syllable ("huar1") over two characters (花儿).
                initial, final = self.pinyin_dict[syllable[:-1]]
                phones = [initial, final + tone, "er5"]
                consumed = 2
            elif strict:
                raise DataProcessorError(f"pinyin {pinyin[j]!r} (for {char!r}) is not in the pinyin table")
            else:
                phones = [pinyin[j]]
            result += phones
            i += consumed
            j += 1
            if i < len(chn_char) and chn_char[i] != "#":
                result.append("#0")
        if strict and j != len(pinyin):
            raise DataProcessorError(f"{len(pinyin)} pinyin syllables for {j} hanzi in {chn_char!r}")
        if result[-1] == "#0":
            result.pop()
        result.append("sil")
        return result

    def text_to_symbols(self, text: str, inference: bool = False) -> List[str]:
        """`inference=True`: Chinese text through pypinyin; otherwise `text` is a phone string."""
        if inference:
            return self.get_phoneme_from_char_and_pinyin(text, hanzi_to_pinyin(text))
        return text.split()

    def text_to_sequence(self, text: str, inference: bool = False) -> List[int]:
        return self.encode(text, inference=inference)[0]
