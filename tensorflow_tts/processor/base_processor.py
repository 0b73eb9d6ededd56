"""The text front-end base class: symbol table, corpus items, speakers and the mapper JSON.

A processor is built either from a corpus (`Processor(data_dir=DIR)`, which reads the
corpus into `items`) or from a saved symbol table (`Processor(data_dir=None,
loaded_mapper_path=JSON)`), so a trained voice keeps reading text with the ids it learnt.
"""

import abc
import dataclasses
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

logger = logging.getLogger(__name__)

PROCESSOR_FILE_NAME = "processor.json"  # the mapper in a save_pretrained folder

Item = Tuple[str, str, str]  # (text, wav_path, speaker_name)


class DataProcessorError(Exception):
    """Bad processor input: an unknown mapper, an unreadable corpus, text with no known symbol."""


def read_corpus_lines(path: Path) -> Iterator[Tuple[int, str]]:
    """(line number, stripped line) for each non-blank line; a UTF-8 BOM and CRLF are ignored."""
    with open(path, encoding="utf-8-sig", newline=None) as lines:
        for number, line in enumerate(lines, start=1):
            line = line.strip()
            if line:
                yield number, line


def unsafe_utt_id_reason(utt_id: str) -> Optional[str]:
    """Why `utt_id` cannot name files in the dump (it is a file-name stem), or None if it can."""
    if not utt_id:
        return "empty utterance id"
    if "/" in utt_id or "\\" in utt_id or utt_id in (".", "..") or "\0" in utt_id:
        return f"utterance id {utt_id!r} is not a plain file name (it must not contain '/', '\\' or be '..')"
    return None


@dataclass
class BaseProcessor(abc.ABC):
    """Maps text to symbol ids for one corpus layout.

    Subclasses say how text becomes symbols (`text_to_symbols`), which symbol ends a
    sequence (`setup_eos_token`) and how their corpus is laid out (`create_items`). The
    default layout is `train.txt` with `path|text|speaker` lines, `path` relative to
    `data_dir` (".wav" appended when missing).
    """

    data_dir: Optional[str] = None
    symbols: List[str] = field(default_factory=list)
    speakers_map: Dict[str, int] = field(default_factory=dict)
    train_f_name: str = "train.txt"
    delimiter: str = "|"
    f_extension: str = ".wav"
    saved_mapper_path: Optional[str] = None
    loaded_mapper_path: Optional[str] = None
    items: List[Item] = field(default_factory=list)
    symbol_to_id: Dict[str, int] = field(default_factory=dict)
    id_to_symbol: Dict[int, str] = field(default_factory=dict)
    rejected: List[Dict[str, str]] = field(default_factory=list)

    positions: ClassVar[Dict[str, int]] = {"file": 0, "text": 1, "speaker_name": 2}
    dataset_name: ClassVar[str] = "custom"  # short name: mapper file is "<dataset_name>_mapper.json"
    default_speaker: ClassVar[Optional[str]] = None  # single-speaker corpora name their speaker

    def __post_init__(self):
        if self.loaded_mapper_path is not None:
            self._load_mapper(Path(self.loaded_mapper_path))
        else:
            if not self.symbols:
                raise DataProcessorError(
                    f"{type(self).__name__}: the symbol list is empty; pass symbols=[...] or loaded_mapper_path=JSON"
                )
            self.symbols = list(self.symbols)
            # A symbol listed twice keeps its last id (the original KSS table relies on this).
            self.symbol_to_id = {symbol: index for index, symbol in enumerate(self.symbols)}
            self.id_to_symbol = {index: symbol for index, symbol in enumerate(self.symbols)}
            if self.data_dir is not None:
                if not Path(self.data_dir).is_dir():
                    raise DataProcessorError(f"corpus folder {self.data_dir} does not exist")
                self.create_items()
            self.create_speaker_map()
        eos = self.setup_eos_token()
        self.eos_id: Optional[int] = None
        if eos is not None:
            self.add_symbol(eos)
            self.eos_id = self.symbol_to_id[eos]
        if self.saved_mapper_path is not None:
            self.save_mapper(self.saved_mapper_path)

    # --- what a subclass provides --------------------------------------------------------

    @abc.abstractmethod
    def setup_eos_token(self) -> Optional[str]:
        """The symbol appended to every sequence, or None for no end-of-sequence token."""

    def text_to_symbols(self, text: str) -> List[str]:
        """Text -> symbol strings (EOS not included). Unknown symbols are dropped later."""
        raise NotImplementedError(f"{type(self).__name__} must implement text_to_symbols or text_to_sequence")

    def create_items(self) -> None:
        """Read `train_f_name` (`path|text|speaker` lines) into `items`."""
        corpus_file = Path(self.data_dir) / self.train_f_name
        for label, fields in self.read_delimited(corpus_file, len(self.positions), id_field=self.positions["file"]):
            relative = fields[self.positions["file"]].strip()
            if Path(relative).is_absolute() or ".." in Path(relative).parts:
                self.reject(label, f"path {relative!r} must be relative to the corpus folder, without '..'")
                continue
            if not relative.endswith(self.f_extension):
                relative += self.f_extension
            wav_path = os.path.join(self.data_dir, relative)
            self.add_item(label, fields[self.positions["text"]], wav_path, fields[self.positions["speaker_name"]])

    # --- corpus reading helpers ----------------------------------------------------------

    def create_items_from_id_text(self, path: Path) -> None:
        """LJSpeech-like `ID|text[|normalized text]` lines, audio in `wavs/ID.wav`.

        The third (normalized) field is read when a line has one and it is not empty.
        """
        for label, fields in self.read_delimited(path, 2, id_field=0):
            utt_id = fields[0].strip()
            text = fields[2] if len(fields) > 2 and fields[2].strip() else fields[1]
            wav_path = os.path.join(self.data_dir, "wavs", utt_id + self.f_extension)
            self.add_item(label, text, wav_path, self.default_speaker, utt_id=utt_id)

    def reject(self, item: str, reason: str) -> None:
        """Skip one corpus entry, saying which and why; reading goes on."""
        logger.warning("%s: %s; skipped", item, reason)
        self.rejected.append({"item": item, "reason": reason})

    def read_delimited(self, path: Path, n_fields: int, id_field: Optional[int] = None) -> Iterator[Tuple[str, List[str]]]:
        """(label, fields) for each line of `path` with at least `n_fields` fields.

        The label is "<file> line <n>", followed by the utterance id in parentheses when
        field `id_field` (an id or an audio path) holds one, so a report names the utterance.
        """
        if not path.is_file():
            raise DataProcessorError(f"{type(self).__name__}: corpus file {path} not found")
        for number, line in read_corpus_lines(path):
            fields = line.split(self.delimiter)
            label = self.line_label(path, number, fields[id_field] if id_field is not None and id_field < len(fields) else "")
            if len(fields) < n_fields:
                self.reject(label, f"expected {n_fields} fields separated by {self.delimiter!r}, got {len(fields)}")
                continue
            yield label, fields

    def line_label(self, path: Path, number: int, id_field: str = "") -> str:
        """"metadata.csv line 15 (HB001-0015)": the line, and the utterance id that `id_field` names (if any)."""
        utt_id = self.utt_id_of(os.path.basename(id_field.strip()))
        named = utt_id and unsafe_utt_id_reason(utt_id) is None and ".." not in Path(id_field.strip()).parts
        return f"{path.name} line {number}" + (f" ({utt_id})" if named else "")

    def add_item(self, label: str, text: str, wav_path: str, speaker_name: str, utt_id: Optional[str] = None) -> bool:
        """Append `(text, wav_path, speaker_name)` unless the text is empty or the id unsafe.

        `utt_id` is the id as the corpus file spells it, when the layout has an id field.
        """
        text = text.strip()
        reason = unsafe_utt_id_reason(self.utt_id_of(wav_path) if utt_id is None else utt_id)
        if reason is None and not text:
            reason = "empty text"
        if reason is None and not speaker_name.strip():
            reason = "empty speaker name"
        if reason is not None:
            self.reject(label, reason)
            return False
        self.items.append((text, wav_path, speaker_name.strip()))
        return True

    def utt_id_of(self, wav_path: str) -> str:
        name = os.path.basename(wav_path)
        return name[: -len(self.f_extension)] if self.f_extension and name.endswith(self.f_extension) else name

    def create_speaker_map(self) -> None:
        """Speaker ids in order of first appearance; kept ids of a given map stay as they are."""
        names = [speaker for _, _, speaker in self.items]
        if not names and self.default_speaker is not None:
            names = [self.default_speaker]
        for name in names:
            if name not in self.speakers_map:
                self.speakers_map[name] = len(self.speakers_map)

    # --- symbols -------------------------------------------------------------------------

    def add_symbol(self, symbol) -> None:
        """Append a symbol (or a list of them) with the next free id; known symbols are kept."""
        if isinstance(symbol, (list, tuple)):
            for one in symbol:
                self.add_symbol(one)
            return
        if symbol in self.symbol_to_id:
            return
        new_id = max(self.id_to_symbol, default=-1) + 1
        self.symbols.append(symbol)
        self.symbol_to_id[symbol] = new_id
        self.id_to_symbol[new_id] = symbol

    def symbols_to_ids(self, symbols: Sequence[str]) -> Tuple[List[int], List[str]]:
        """(ids of the known symbols, unknown symbols in order of first appearance)."""
        ids, dropped = [], []
        for symbol in symbols:
            if symbol in self.symbol_to_id:
                ids.append(self.symbol_to_id[symbol])
            elif symbol not in dropped:
                dropped.append(symbol)
        return ids, dropped

    def encode(self, text: str, **kwargs) -> Tuple[List[int], List[str]]:
        """(ids with EOS appended, symbols dropped because the table lacks them)."""
        ids, dropped = self.symbols_to_ids(self.text_to_symbols(text, **kwargs))
        if self.eos_id is not None:
            ids.append(self.eos_id)
        return ids, dropped

    def text_to_sequence(self, text: str, **kwargs) -> List[int]:
        """Text -> ids (EOS included when the processor has one); unknown characters are dropped."""
        return self.encode(text, **kwargs)[0]

    def sequence_to_symbols(self, ids: Sequence[int]) -> List[str]:
        return [self.id_to_symbol[int(index)] for index in ids]

    @property
    def vocab_size(self) -> int:
        return max(self.id_to_symbol, default=-1) + 1

    # --- samples -------------------------------------------------------------------------

    def get_one_sample(self, item: Item) -> Dict[str, Any]:
        """One corpus item as the preprocessor stores it (see docs/dump_layout.md)."""
        text, wav_path, speaker_name = item
        utt_id = self.utt_id_of(wav_path)
        if type(self).text_to_symbols is BaseProcessor.text_to_symbols:
            ids, dropped = self.text_to_sequence(text), []  # a subclass that only overrides text_to_sequence
        else:
            ids, dropped = self.encode(text)
        if dropped:
            logger.warning("%s: dropped characters with no symbol: %s", utt_id, " ".join(map(repr, dropped)))
        n_body = len(ids) - (1 if self.eos_id is not None and ids and ids[-1] == self.eos_id else 0)
        if n_body <= 0:
            raise DataProcessorError(f"{utt_id}: no known symbols in text {text!r}; check the processor/language")
        return {
            "raw_text": text,
            "text_ids": np.asarray(ids, np.int32),
            "wav_path": wav_path,
            "utt_id": utt_id,
            "speaker_name": speaker_name,
            "dropped_symbols": dropped,
        }

    # --- mapper JSON ---------------------------------------------------------------------

    @property
    def processor_name(self) -> str:
        return type(self).__name__

    def mapper_extras(self) -> Dict[str, Any]:
        """Processor-specific keys saved next to the symbol table (Baker: `pinyin_dict`)."""
        return {}

    def to_mapper(self) -> Dict[str, Any]:
        mapper = {
            "symbol_to_id": dict(self.symbol_to_id),
            "id_to_symbol": {str(index): symbol for index, symbol in sorted(self.id_to_symbol.items())},
            "speakers_map": dict(self.speakers_map),
            "processor_name": self.processor_name,
        }
        mapper.update(self.mapper_extras())
        return mapper

    def save_mapper(self, path, extra_attrs_to_save: Optional[Dict[str, Any]] = None) -> str:
        """Write the mapper JSON to the file `path`."""
        mapper = self.to_mapper()
        mapper.update(extra_attrs_to_save or {})
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(mapper, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        return str(path)

    @classmethod
    def mapper_file_name(cls) -> str:
        """The mapper's name in a dump folder: ``<dataset_name>_mapper.json``."""
        return f"{cls.dataset_name}_mapper.json"

    def save_pretrained(self, saved_dir) -> str:
        """Write `<saved_dir>/processor.json` (as TensorFlowTTS 1.8 did) and return its path."""
        return self.save_mapper(Path(saved_dir) / PROCESSOR_FILE_NAME)

    @classmethod
    def from_pretrained(cls, path) -> "BaseProcessor":
        """Load a mapper JSON, or the single `*_mapper.json` / `processor.json` in a folder."""
        return cls(data_dir=None, loaded_mapper_path=str(find_mapper_file(path)))

    def _load_mapper(self, path: Path) -> None:
        try:
            mapper = json.loads(Path(path).read_text(encoding="utf-8-sig"))
        except (OSError, ValueError) as error:
            raise DataProcessorError(f"cannot read mapper {path}: {error}") from error
        missing = [key for key in ("symbol_to_id", "id_to_symbol") if key not in mapper]
        if missing:
            raise DataProcessorError(f"mapper {path} lacks {', '.join(missing)}; is it a processor mapper JSON?")
        name = mapper.get("processor_name")
        if name is not None and name != self.processor_name:
            logger.warning("mapper %s was written by %s, loading it into %s", path, name, self.processor_name)
        self.symbol_to_id = {str(symbol): int(index) for symbol, index in mapper["symbol_to_id"].items()}
        self.id_to_symbol = {int(index): symbol for index, symbol in mapper["id_to_symbol"].items()}
        self.symbols = [self.id_to_symbol[index] for index in sorted(self.id_to_symbol)]
        self.speakers_map = dict(mapper.get("speakers_map", {}))
        # Subclass settings saved with the table (Baker's pinyin_dict) come back; nothing else.
        own_fields = {f.name for f in dataclasses.fields(self)} - {f.name for f in dataclasses.fields(BaseProcessor)}
        for key, value in mapper.items():
            if key in own_fields:
                setattr(self, key, value)


def find_mapper_file(path) -> Path:
    """`path` itself if it is a file; else the one mapper JSON inside the folder `path`."""
    path = Path(path)
    if path.is_file():
        return path
    if not path.is_dir():
        raise DataProcessorError(f"mapper {path} not found")
    candidates = sorted(path.glob("*_mapper.json")) or sorted(path.glob("processor.json"))
    if len(candidates) != 1:
        found = ", ".join(c.name for c in candidates) or "none"
        raise DataProcessorError(f"expected one *_mapper.json in {path}, found {found}; pass the file itself")
    return candidates[0]
