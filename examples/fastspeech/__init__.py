"""FastSpeech recipe: trains from durations in the dump (from extract_durations.py, a Tacotron2 teacher or TextGrids)."""
