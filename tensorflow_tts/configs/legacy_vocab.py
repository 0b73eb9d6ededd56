"""The `dataset` key of acoustic-model configs: TensorFlowTTS 1.8 took the vocabulary size from it."""

from tensorflow_tts.configs.base_config import ConfigError

# In 1.8 `vocab_size` was read only for `dataset: ljspeech`; any other corpus name replaced
# it with the length of that corpus' 1.8 symbol table. These are those lengths, so a 1.8
# YAML and its checkpoint keep their embedding shape. 1.8's Tacotron2Config accepted baker,
# kss, libritts and synpaflex, its FastSpeechConfig / FastSpeech2Config baker, kss and
# libritts; "ljspeechu" (LJSpeechUltimateProcessor) came to Tacotron2Config in the
# repository after the 1.8 release, and so did "jsut" (JSUTProcessor) to both. Both accept
# all of them here.
#
# Each size equals the table of our processor of that name, which reproduces the original's
# symbols and ids, so a dump made with `--dataset X` trains with `dataset: X`.
LEGACY_DATASET_VOCAB_SIZES = {
    "baker": 219,
    "jsut": 40,
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
