"""The speech server: voices loaded once, an HTTP API (batched, streaming), metrics and a web page.

    tensorflow-tts-serve --acoustic fastspeech2/ --vocoder mb_melgan/ --port 8000
    tensorflow-tts-serve --config voices.yaml
"""
