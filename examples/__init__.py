"""Example recipes: thin train/decode scripts over `tensorflow_tts.recipes`, and their configs."""
