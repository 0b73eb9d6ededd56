"""`grad_norm` (the trainer YAML key; TensorFlowTTS 1.8 had none: its AdamWeightDecay clipped
to a fixed global norm) bounds the update the optimizer applies."""

import tensorflow_tts  # noqa: F401

import numpy as np
import tensorflow as tf

from helpers.tiny import TinyTrainer, build_regressor, make_dataset, trainer_config

LEARNING_RATE = 10.0  # huge, so that an unclipped step is far larger than the bound
CLIP = 0.01


def weight_change_of_one_sgd_step(outdir, grad_norm):
    """Global norm of (weights after - weights before) one plain-SGD update of the tiny regressor."""
    trainer = TinyTrainer(config=trainer_config(outdir, train_max_steps=1, grad_norm=grad_norm))
    model = build_regressor()
    trainer.compile(model, tf.keras.optimizers.SGD(LEARNING_RATE, jit_compile=False))
    before = model.get_weights()
    trainer.fit(make_dataset(8))
    return np.sqrt(sum(np.sum((after - start) ** 2) for after, start in zip(model.get_weights(), before, strict=True)))


def test_grad_norm_bounds_the_applied_update(tmp_path):
    unclipped = weight_change_of_one_sgd_step(tmp_path / "unclipped", grad_norm=0.0)
    clipped = weight_change_of_one_sgd_step(tmp_path / "clipped", grad_norm=CLIP)
    # The gradient's norm is well above the clip, so without clipping the bound would fail.
    assert unclipped > 10 * LEARNING_RATE * CLIP
    assert clipped <= LEARNING_RATE * CLIP * (1 + 1e-5)
    # Clipping rescales the gradient, it does not drop it.
    np.testing.assert_allclose(clipped, LEARNING_RATE * CLIP, rtol=1e-4)
