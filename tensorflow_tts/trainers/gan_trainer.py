"""GanBasedTrainer: generator + discriminator, each with its optimizer (MelGAN, MB-MelGAN, HiFi-GAN)."""

import inspect

import tensorflow as tf

from tensorflow_tts.trainers.base_trainer import BaseTrainer
from tensorflow_tts.utils.precision import to_float32


class GanBasedTrainer(BaseTrainer):
    """Each step updates the generator, then (from `discriminator_train_start_steps`) the
    discriminator on the generator's outputs of the same batch.

    A model's trainer implements `generate(batch, training)`,
    `compute_per_example_generator_losses(batch, outputs, adversarial)` and
    `compute_per_example_discriminator_losses(batch, outputs)`. A TensorFlowTTS 1.8 subclass's
    `compute_per_example_generator_losses(batch, outputs)`, without `adversarial`, is called
    as it is.
    """

    sampling_rate = 22050  # for audio summaries; set from the model config in a subclass

    def __init__(self, config, strategy=None, steps=0, epochs=0, is_mixed_precision=False,
                 is_generator_mixed_precision=False, is_discriminator_mixed_precision=False):
        """As BaseTrainer; 1.8's ``is_generator_mixed_precision`` and
        ``is_discriminator_mixed_precision`` are accepted, either one turning mixed precision
        on for both (it is one global Keras policy)."""
        super().__init__(
            config, strategy, steps, epochs,
            is_mixed_precision or is_generator_mixed_precision or is_discriminator_mixed_precision,
        )

    def compile(self, gen_model, dis_model, gen_optimizer, dis_optimizer):
        """Attach the (already built) models and their optimizers; call inside strategy.scope()."""
        # A 1.8 subclass's generator losses take (batch, outputs) and decide on the
        # adversarial terms themselves.
        self._generator_losses_take_adversarial = (
            "adversarial" in inspect.signature(self.compute_per_example_generator_losses).parameters
        )
        self._generator = gen_model
        self._discriminator = dis_model
        self._gen_optimizer = self._register_group(
            "generator", {"generator": gen_model}, gen_optimizer, total_loss_name="gen_loss"
        ).optimizer
        self._dis_optimizer = self._register_group(
            "discriminator",
            {"discriminator": dis_model},
            dis_optimizer,
            start_step=self.config.discriminator_train_start_steps,
            total_loss_name="dis_loss",
        ).optimizer

    def generate(self, batch, training):
        """Generator outputs for a batch; by default ``generator(batch["mels"])``."""
        return self._generator(batch["mels"], training=training)

    def compute_per_example_generator_losses(self, batch, outputs, adversarial):
        """{loss_name: [B]}; include adversarial terms only when `adversarial` (discriminator trained)."""
        raise NotImplementedError

    def compute_per_example_discriminator_losses(self, batch, outputs):
        """{loss_name: [B]} for the discriminator, `outputs` being the generator's (no gradient)."""
        raise NotImplementedError

    def compute_group_losses(self, group_name, batch, state, training):
        adversarial = "discriminator" in state["active_groups"]
        if group_name == "generator":
            outputs = to_float32(self.generate(batch, training=training))
            state["outputs"] = outputs
            if not self._generator_losses_take_adversarial:
                return self.compute_per_example_generator_losses(batch, outputs)
            return self.compute_per_example_generator_losses(batch, outputs, adversarial=adversarial)
        outputs = state.get("outputs")
        if outputs is None:  # generator frozen (var_train_expr), in evaluation order, or under jit_compile
            outputs = to_float32(self.generate(batch, training=training))
        outputs = tf.nest.map_structure(tf.stop_gradient, outputs)
        return self.compute_per_example_discriminator_losses(batch, outputs)

    def predict_for_summaries(self, batch):
        return self.generate(batch, training=False)

    def intermediate_results(self, batch, outputs):
        """Predicted and target audio of the first utterance, with a waveform plot."""
        from tensorflow_tts.utils.plotting import plot_waveforms

        predicted = outputs.get("audios") if isinstance(outputs, dict) else outputs
        if not hasattr(predicted, "ndim") or predicted.ndim not in (2, 3):
            return {}
        predicted = predicted[0].reshape(-1)
        target = batch["audios"][0].reshape(-1) if "audios" in batch else None
        audios = {"predicted": (predicted, self.sampling_rate)}
        if target is not None:
            audios["target"] = (target, self.sampling_rate)
        return {"audios": audios, "images": {"waveform": plot_waveforms(predicted, target, title=f"step {self.steps}")}}
