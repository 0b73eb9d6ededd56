"""Tacotron 2 recipe: train, decode, extract durations (for FastSpeech/FastSpeech2) and postnet mels."""
