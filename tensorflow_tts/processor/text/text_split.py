"""Cutting long text into sentence-sized pieces, so each fits an acoustic model's position table."""

import re

# End of a sentence: . ! ? (and their CJK forms) followed by space, or a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])\s*|\s*\n\s*")
_CLAUSE_END = re.compile(r"(?<=[,:;])\s+|(?<=[，、：；])\s*")


def _pack(parts, max_chars, joiner):
    """Greedily join consecutive parts while the result stays within max_chars."""
    pieces, current = [], ""
    for part in parts:
        candidate = f"{current}{joiner}{part}" if current else part
        if len(candidate) <= max_chars or not current:
            current = candidate
        else:
            pieces.append(current)
            current = part
    if current:
        pieces.append(current)
    return pieces


def _split_long(sentence, max_chars):
    """A sentence longer than max_chars -> pieces at clause marks, then spaces, then anywhere."""
    pieces = []
    for clause in _pack(_CLAUSE_END.split(sentence), max_chars, " "):
        if len(clause) <= max_chars:
            pieces.append(clause)
            continue
        for chunk in _pack(clause.split(), max_chars, " "):
            pieces.extend(chunk[i : i + max_chars] for i in range(0, len(chunk), max_chars))
    return pieces


def split_sentences(text, max_chars=300):
    """Sentences of `text`, none longer than `max_chars` characters (longer ones are cut at
    commas, then spaces). Whitespace runs become one space; empty pieces are dropped.

        split_sentences("Hello there. How are you?")  ->  ["Hello there.", "How are you?"]
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, got {max_chars}")
    pieces = []
    for sentence in _SENTENCE_END.split(text):
        sentence = " ".join(sentence.split())
        if not sentence:
            continue
        pieces.extend([sentence] if len(sentence) <= max_chars else _split_long(sentence, max_chars))
    return pieces


def split_in_half(piece):
    """Two halves of a piece, cut at the space nearest its middle (or at the middle): used
    when a piece still makes more frames than the model can position."""
    middle = len(piece) // 2
    spaces = [index for index, char in enumerate(piece) if char == " "]
    cut = min(spaces, key=lambda index: abs(index - middle)) if spaces else middle
    left, right = piece[:cut].strip(), piece[cut:].strip()
    return [part for part in (left, right) if part]
