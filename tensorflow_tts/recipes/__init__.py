"""Recipes: one module per model family (its trainer subclass, training config, loss wiring, train/decode mains), plus what they share.

`examples/<model>/*.py` are thin wrappers over these modules; tests and benchmarks import them here.
"""
