"""Gradient checkpointing (`gradient_checkpointing: true`): a recomputed step has the plain step's gradients."""

import numpy as np
import pytest

import tensorflow_tts  # noqa: F401  (selects Keras 2 before tensorflow is imported)
import tensorflow as tf  # noqa: E402

from tensorflow_tts.models import TFTacotron2  # noqa: E402
from test_fastspeech import DURATIONS, INPUT_IDS, SPEAKERS, tiny_fastspeech2
from test_tacotron2 import padded_batch, tiny_config
from test_vocoders import NUM_MELS, tiny_generators


def set_checkpointing(model, enabled):
    """Returns how many layers of the model can recompute their blocks."""
    layers = [layer for layer in (model, *model.submodules) if hasattr(layer, "gradient_checkpointing")]
    for layer in layers:
        layer.gradient_checkpointing = enabled
    return len(layers)


def loss_and_gradients(model, loss_fn, checkpointing, seed=5, traced=False):
    """(loss, gradients) of one step, eager or in a fresh tf.function (traced with the setting)."""
    set_checkpointing(model, checkpointing)
    tf.keras.utils.set_random_seed(seed)  # the same dropout masks in both eager runs

    def step():
        with tf.GradientTape() as tape:
            loss = loss_fn()
        return loss, tape.gradient(loss, model.trainable_variables)

    loss, gradients = tf.function(step)() if traced else step()
    return float(loss), [tf.convert_to_tensor(gradient) for gradient in gradients]


def assert_same_gradients(plain, recomputed, atol=0.0):
    assert plain[0] == pytest.approx(recomputed[0], rel=1e-6)
    assert len(plain[1]) == len(recomputed[1])
    for expected, actual in zip(plain[1], recomputed[1]):
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=atol)


def test_fastspeech2_with_dropout_has_the_plain_gradients():
    model = tiny_fastspeech2()  # hidden and attention dropout on (0.2, 0.1)
    assert set_checkpointing(model, False) == 2  # the encoder and decoder FFT stacks
    f0 = tf.constant(np.random.default_rng(0).normal(size=INPUT_IDS.shape), tf.float32)

    def loss_fn():
        outputs = model(INPUT_IDS, SPEAKERS, DURATIONS, f0, f0, training=True)
        return tf.add_n([tf.reduce_mean(output**2) for output in outputs])

    plain = loss_and_gradients(model, loss_fn, False)
    assert_same_gradients(plain, loss_and_gradients(model, loss_fn, True))
    # The dropout is real: another seed draws other masks.
    assert loss_and_gradients(model, loss_fn, True, seed=6)[0] != pytest.approx(plain[0], rel=1e-6)


# In a tf.function, stateful dropout (the prenet's, the embeddings') draws other masks in each
# trace, so the traced comparison runs without dropout; the eager one with it.
@pytest.mark.parametrize("traced", [False, True])
def test_tacotron2_encoder_and_postnet_have_the_plain_gradients_and_batch_norm_updates(traced):
    dropout = dict(encoder_conv_dropout_rate=0.5, postnet_dropout_rate=0.5)
    if traced:
        dropout = dict(encoder_conv_dropout_rate=0.0, postnet_dropout_rate=0.0, prenet_dropout_rate=0.0,
                       embedding_dropout_prob=0.0)
    model = TFTacotron2(tiny_config(**dropout))
    batch = padded_batch()
    model(*batch, training=False)
    assert set_checkpointing(model, False) == 2  # the encoder and the postnet
    initial = model.get_weights()

    def loss_fn():
        decoder_output, mel_outputs, stop_tokens, _ = model(*batch, training=True)
        return tf.reduce_mean(mel_outputs**2) + tf.reduce_mean(decoder_output**2) + tf.reduce_mean(stop_tokens**2)

    plain = loss_and_gradients(model, loss_fn, False, traced=traced)
    plain_statistics = [variable.numpy() for variable in model.non_trainable_variables]
    model.set_weights(initial)
    recomputed = loss_and_gradients(model, loss_fn, True, traced=traced)
    # Traced, the two graphs are optimised apart, which reorders a few sums (~1e-6 here).
    assert_same_gradients(plain, recomputed, atol=1e-5 if traced else 1e-7)
    # The recomputation re-runs the batch norms in training mode; their moving statistics
    # still move once per step.
    assert plain_statistics and any(np.any(value != 0) for value in plain_statistics)
    for expected, variable in zip(plain_statistics, model.non_trainable_variables):
        np.testing.assert_allclose(variable.numpy(), expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["multiband_melgan", "hifigan"])
def test_vocoder_residual_stacks_have_the_plain_gradients_in_a_tf_function(name):
    tf.keras.utils.set_random_seed(2)
    generator = tiny_generators()[name]
    mels = tf.random.normal([2, 8, NUM_MELS])
    generator(mels)
    assert set_checkpointing(generator, False) == 1

    def loss_fn():
        return tf.reduce_mean(generator(mels, training=True) ** 2)

    plain = loss_and_gradients(generator, loss_fn, False, traced=True)
    assert_same_gradients(plain, loss_and_gradients(generator, loss_fn, True, traced=True), atol=1e-7)
