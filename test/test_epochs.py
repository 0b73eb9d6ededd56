"""EpochBatches: epoch after epoch of a tf.data pipeline, the next epoch's iterator made ahead."""

import tensorflow_tts  # noqa: F401

import pytest
import tensorflow as tf

from tensorflow_tts.trainers.epochs import EpochBatches


def shuffled_batches():
    # Reshuffled every epoch and randomly perturbed every epoch, as the real pipelines are.
    numbers = tf.data.Dataset.range(10).shuffle(10, seed=3, reshuffle_each_iteration=True)
    noise = tf.data.Dataset.random(seed=5, rerandomize_each_iteration=True)
    return tf.data.Dataset.zip((numbers, noise)).map(lambda n, r: n * 1000 + r % 1000).batch(4, drop_remainder=True)


def test_batches_and_epochs_equal_one_plain_iterator_per_epoch():
    plain = shuffled_batches()
    expected = [[batch.numpy().tolist() for batch in plain] for _ in range(3)]
    batches = EpochBatches(shuffled_batches())
    seen, epochs = [], []
    for _ in range(6):
        seen.append(next(batches).numpy().tolist())
        epochs.append((batches.epochs_finished, batches.epoch_batches))
    batches.close()
    assert seen == [batch for epoch in expected for batch in epoch]
    assert expected[0] != expected[1]  # the comparison is meaningful: epochs differ
    assert epochs == [(0, 1), (0, 2), (1, 1), (1, 2), (2, 1), (2, 2)]


def test_the_next_epoch_is_ready_before_the_current_one_ends():
    batches = EpochBatches(shuffled_batches())
    next(batches)
    upcoming = batches._next.result(timeout=30)  # made in the background, while epoch 0 runs
    next(batches)
    next(batches)  # crosses into epoch 1
    assert batches._current is upcoming and batches.epochs_finished == 1
    batches.close()


def test_an_empty_dataset_is_a_clear_error():
    batches = EpochBatches(tf.data.Dataset.range(3).batch(4, drop_remainder=True))
    with pytest.raises(ValueError, match="yields no batch"):
        next(batches)
    batches.close()
