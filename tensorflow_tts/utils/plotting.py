"""Figures for TensorBoard and prediction folders: mel spectrograms, alignments, waveforms.

Uses matplotlib's object API with the Agg canvas, so no pyplot state or display is touched.
"""

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure


def figure_to_array(figure):
    """Render a matplotlib Figure to an [H, W, 4] uint8 RGBA array."""
    canvas = figure.canvas if isinstance(figure.canvas, FigureCanvasAgg) else FigureCanvasAgg(figure)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba(), dtype=np.uint8).copy()


def _trim(array, length):
    return array if length is None else array[: int(length)]


def plot_mel_comparison(predicted, target=None, length=None, title=None):
    """Predicted (and target) mel spectrograms, each [frames, num_mels], one above the other."""
    panels = [("predicted", predicted)] + ([("target", target)] if target is not None else [])
    figure = Figure(figsize=(10, 3.2 * len(panels)))
    FigureCanvasAgg(figure)
    for index, (name, mel) in enumerate(panels, start=1):
        axis = figure.add_subplot(len(panels), 1, index)
        mel = _trim(np.asarray(mel, dtype=np.float32), length)
        image = axis.imshow(mel.T, origin="lower", aspect="auto", interpolation="none")
        axis.set_title(f"{title} {name}" if title else name)
        axis.set_xlabel("frame")
        axis.set_ylabel("mel bin")
        figure.colorbar(image, ax=axis)
    figure.tight_layout()
    return figure


def plot_alignment(alignment, title=None, input_length=None, output_length=None):
    """An attention alignment [decoder steps, encoder steps] (drawn encoder on the y axis)."""
    alignment = np.asarray(alignment, dtype=np.float32)
    if output_length is not None:
        alignment = alignment[: int(output_length)]
    if input_length is not None:
        alignment = alignment[:, : int(input_length)]
    figure = Figure(figsize=(8, 6))
    FigureCanvasAgg(figure)
    axis = figure.add_subplot(1, 1, 1)
    image = axis.imshow(alignment.T, origin="lower", aspect="auto", interpolation="none")
    axis.set_title(title or "alignment")
    axis.set_xlabel("decoder step")
    axis.set_ylabel("encoder step")
    figure.colorbar(image, ax=axis)
    figure.tight_layout()
    return figure


def plot_waveforms(predicted, target=None, title=None):
    """Predicted (and target) waveforms [samples] overlaid."""
    figure = Figure(figsize=(10, 3))
    FigureCanvasAgg(figure)
    axis = figure.add_subplot(1, 1, 1)
    if target is not None:
        axis.plot(np.asarray(target).reshape(-1), label="target", alpha=0.7, linewidth=0.5)
    axis.plot(np.asarray(predicted).reshape(-1), label="predicted", alpha=0.7, linewidth=0.5)
    axis.set_title(title or "waveform")
    axis.legend(loc="upper right")
    figure.tight_layout()
    return figure
