"""Small helpers that import no other package folder: strategy selection, plotting, logging set-up, checkpoint loading.

The names TensorFlowTTS 1.8 exported here (`return_strategy`, `find_files`, `TFGriffinLim`,
`english_cleaners`, `calculate_2d_loss`, `WeightNormalization`, ...) still import from
`tensorflow_tts.utils`: `tensorflow_tts.moved.MOVED_NAMES` maps each to its home, imported
on first use, so importing this package imports neither TensorFlow nor another folder.
"""
