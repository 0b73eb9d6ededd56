"""Alignments and durations: monotonic alignment search, Tacotron2 attention to durations, duration fixing, TextGrids."""
