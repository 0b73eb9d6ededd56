"""Example recipes (train/decode scripts and configs); importable for tests: `from examples.fastspeech2.train_fastspeech2 import FastSpeech2Trainer`."""
