"""Multi-speaker FastSpeech2 on LibriTTS (1.8's fastspeech2_libritts): the FastSpeech2 recipe, sized from the dump's speakers."""
