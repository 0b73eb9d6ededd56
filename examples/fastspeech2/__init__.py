"""FastSpeech2 recipe: train (with the built-in aligner when the dump has no durations), decode, extract durations."""
