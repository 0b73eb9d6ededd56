"""The `dataset` key of acoustic-model configs: TensorFlowTTS 1.8 took the vocabulary size from it."""

from tensorflow_tts.configs.base_config import ConfigError

# In 1.8 `vocab_size` was read only for `dataset: ljspeech`; any other corpus name replaced
# it with the length of that corpus' 1.8 symbol table. These are those lengths, so a 1.8
# YAML and its checkpoint keep their embedding shape. Tacotron2Config accepted all of them,
# FastSpeechConfig / FastSpeech2Config only baker, kss and libritts; both accept all here.
#
# Only baker, kss and synpaflex match the tables of our processors. Our ljspeechu table has
# 97 symbols (it adds the word boundary " "); our libritts table is the ljspeechu one without
# EOS (96 symbols), not 1.8's g2p_en-based one. Training on a dump made by those two needs
# `dataset: ljspeech` with `vocab_size:` set to the symbol count of the dump's mapper.
LEGACY_DATASET_VOCAB_SIZES = {
    "baker": 219,
    "kss": 81,
    "libritts": 86,
    "ljspeechu": 96,
    "synpaflex": 84,
}


def legacy_vocab_size(dataset, vocab_size):
    """The vocabulary size a config with this `dataset` and `vocab_size` has (1.8's rule)."""
    if dataset == "ljspeech":
        return vocab_size
    if dataset not in LEGACY_DATASET_VOCAB_SIZES:
        raise ConfigError(
            f"dataset {dataset!r}: the vocabulary size is not known for it; use "
            f"dataset: ljspeech with vocab_size: <number of symbols of your processor> "
            f"(known datasets: ljspeech, {', '.join(sorted(LEGACY_DATASET_VOCAB_SIZES))})"
        )
    return LEGACY_DATASET_VOCAB_SIZES[dataset]
