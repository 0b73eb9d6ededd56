"""Stepwise monotonic attention: a distribution over the valid tokens that starts on token 0,
stays or moves on by one token per step, and never leaves the last token."""

import numpy as np
import pytest

import tensorflow_tts  # noqa: F401  (selects Keras 2 before tensorflow is imported)
import tensorflow as tf  # noqa: E402

from tensorflow_tts.configs import ConfigError, Tacotron2Config  # noqa: E402
from tensorflow_tts.layers.stepwise_monotonic_attention import StepwiseMonotonicAttention  # noqa: E402

LENGTHS = (7, 4)


def attention_inputs(seed=0):
    rng = np.random.default_rng(seed)
    memory = tf.constant(rng.normal(size=[len(LENGTHS), max(LENGTHS), 6]), tf.float32)
    mask = tf.sequence_mask(LENGTHS, max(LENGTHS))
    queries = tf.constant(rng.normal(size=[12, len(LENGTHS), 5]), tf.float32)
    return memory, mask, queries


def run(attention, steps=12, training=False, seed=0, hard=False):
    """The alignments (steps, B, T) of `steps` steps from token 0, as the decoder runs them."""
    memory, mask, queries = attention_inputs(seed)
    keys, values = attention.process_memory(memory, mask)
    previous = tf.one_hot([0] * len(LENGTHS), max(LENGTHS))
    cumulative = tf.zeros_like(previous)
    history = []
    for step in range(steps):
        _, previous = attention(queries[step], previous, cumulative, keys, values, mask, training=training, hard=hard)
        cumulative += previous
        history.append(previous.numpy())
    return np.stack(history)


@pytest.fixture
def attention():
    tf.keras.utils.set_random_seed(1)
    layer = StepwiseMonotonicAttention(8, 3, 5, noise_std=1.0)
    layer.build(([None, 5], [None, None, 6]))
    return layer


@pytest.mark.parametrize("training", [False, True])
def test_alignments_stay_on_the_valid_tokens_and_move_at_most_one_token_a_step(attention, training):
    history = run(attention, training=training)
    np.testing.assert_allclose(history.sum(axis=-1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(history[:, 1, LENGTHS[1]:], 0.0)
    positions = np.arange(max(LENGTHS))
    for step, alignments in enumerate(history):
        # After step `step` the attention can have moved at most step + 1 tokens from token 0.
        assert not np.any(alignments[:, positions > step + 1]), step
    expected_positions = (history * positions).sum(axis=-1)
    assert np.all(np.diff(expected_positions, axis=0) >= -1e-6)


@pytest.mark.parametrize("bias, expected", [(50.0, [0] * 12), (-50.0, [1, 2, 3, 4, 5, 6, 6, 6, 6, 6, 6, 6])])
def test_certain_decisions_give_a_hard_path_that_parks_on_the_last_token(attention, bias, expected):
    attention.scores.kernel.assign(tf.zeros_like(attention.scores.kernel))
    attention.scores.bias.assign([bias])  # sigmoid(+50): always stay; sigmoid(-50): always move on
    history = run(attention)
    np.testing.assert_allclose(history[:, 0], np.eye(max(LENGTHS))[expected], atol=1e-6)
    np.testing.assert_allclose(history[:, 1, LENGTHS[1] - 1], [0, 0] + [1] * 10 if bias < 0 else 0.0, atol=1e-6)


def test_hard_decisions_keep_the_alignment_one_hot_and_follow_the_soft_probabilities(attention):
    hard = run(attention, hard=True)
    assert np.all(np.isin(hard, [0.0, 1.0])) and np.all(hard.sum(axis=-1) == 1.0)
    peaks = hard.argmax(axis=-1)
    assert np.all(np.isin(np.diff(peaks, axis=0), [0, 1]))
    # The first step decides from token 0 exactly as the soft attention does: move when p < 0.5.
    soft_first = run(attention, steps=1)[0]
    np.testing.assert_array_equal(peaks[0], (soft_first[:, 1] > 0.5).astype(int))


def test_noise_is_added_only_while_training(attention):
    np.testing.assert_array_equal(run(attention, steps=4), run(attention, steps=4))
    assert not np.allclose(run(attention, steps=4, training=True), run(attention, steps=4))


def test_attention_type_is_checked():
    assert Tacotron2Config.from_dict({"attention_type": "sma"}).attention_type == "sma"
    with pytest.raises(ConfigError, match="stepwise monotonic"):
        Tacotron2Config.from_dict({"attention_type": "gmm"})
    with pytest.raises(ConfigError, match="attention_noise_std"):
        Tacotron2Config.from_dict({"attention_type": "sma", "attention_noise_std": -1.0})
