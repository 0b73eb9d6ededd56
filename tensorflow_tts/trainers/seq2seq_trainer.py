"""Seq2SeqBasedTrainer: one model, one optimizer (Tacotron 2, FastSpeech, FastSpeech 2)."""

import inspect
import logging

from tensorflow_tts.trainers.base_trainer import BaseTrainer
from tensorflow_tts.utils.precision import to_float32

logger = logging.getLogger(__name__)

_PREDICTED_MEL_KEYS = ("mel_outputs", "mel_after", "mels_after", "mel_before", "mels_before", "mels", "mel")
_TARGET_MEL_KEYS = ("mel_gts", "mels")
_ALIGNMENT_KEYS = ("alignment_history", "alignments", "alignment", "attention")


class Seq2SeqBasedTrainer(BaseTrainer):
    """Trains one model with one optimizer.

    A model's trainer implements `compute_per_example_losses(batch, outputs)` and, when the
    model does not take the batch dict directly, `call_model(batch, training)`.
    """

    def compile(self, model, optimizer):
        """Attach the (already built) model and its optimizer; call inside strategy.scope()."""
        self.model = model
        self.optimizer = self._register_group("model", {"model": model}, optimizer).optimizer

    def load_pretrained(self, path):
        """An .h5 (ours or TensorFlowTTS 1.8's) initialises `self.model` only, even when other
        models train beside it (FastSpeech2's aligner); a checkpoint initialises them all."""
        if str(path).endswith(".h5"):
            self.model.load_weights(str(path))
            logger.info("loaded pretrained model weights from %s", path)
            return
        super().load_pretrained(path)

    def call_model(self, batch, training):
        """Run the model on a batch dict; override to pick and order the inputs.

        By default as TensorFlowTTS 1.8 did, ``model(**batch)``, passing the entries the
        model's ``call`` names (1.8's models swallowed the others).
        """
        parameters = inspect.signature(self.model.call).parameters
        return self.model(**{key: value for key, value in batch.items() if key in parameters}, training=training)

    def compute_per_example_losses(self, batch, outputs):
        """{loss_name: [B]} (or (total [B], {loss_name: [B]})) from a batch and float32 outputs."""
        raise NotImplementedError(f"{type(self).__name__} must implement compute_per_example_losses(batch, outputs)")

    def compute_group_losses(self, group_name, batch, state, training):
        outputs = to_float32(self.call_model(batch, training=training))
        state["outputs"] = outputs
        return self.compute_per_example_losses(batch, outputs)

    def predict_for_summaries(self, batch):
        return self.call_model(batch, training=False)

    def intermediate_results(self, batch, outputs):
        """Predicted vs target mel and the alignment of the first utterance, when found by name."""
        from tensorflow_tts.utils.plotting import plot_alignment, plot_mel_comparison

        if not isinstance(outputs, dict):
            return {}
        images = {}
        predicted = next((outputs[key] for key in _PREDICTED_MEL_KEYS if key in outputs), None)
        target = next((batch[key] for key in _TARGET_MEL_KEYS if key in batch), None)
        length = batch["mel_lengths"][0] if "mel_lengths" in batch else None
        if predicted is not None and getattr(predicted, "ndim", 0) == 3:
            images["mel"] = plot_mel_comparison(
                predicted[0], None if target is None else target[0], length=length, title=f"step {self.steps}"
            )
        alignment = next((outputs[key] for key in _ALIGNMENT_KEYS if key in outputs), None)
        if alignment is not None and getattr(alignment, "ndim", 0) == 3:
            images["alignment"] = plot_alignment(alignment[0], title=f"alignment, step {self.steps}")
        return {"images": images}
