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


def test_a_resumed_position_continues_with_the_batches_of_the_uninterrupted_run():
    plain = shuffled_batches()
    expected = [batch.numpy().tolist() for _ in range(3) for batch in plain]
    batches = EpochBatches(shuffled_batches(), start_epoch=1, start_batch=1)  # a fresh pipeline, as in a new process
    assert (batches.epochs_finished, batches.epoch_batches) == (1, 1)
    resumed = [next(batches).numpy().tolist() for _ in range(3)]
    batches.close()
    assert resumed == expected[3:]  # batch 2 of epoch 1, then epoch 2 with its own shuffle
    assert expected[2:4] != expected[0:2]  # epoch 1 is shuffled otherwise than epoch 0: the replay matters


def test_a_position_past_the_end_of_the_epoch_goes_on_in_the_next_one_with_a_warning(caplog):
    batches = EpochBatches(shuffled_batches(), start_epoch=0, start_batch=3)  # an epoch has 2 batches
    assert (batches.epochs_finished, batches.epoch_batches) == (1, 1)
    batches.close()
    assert "lies past the end of this dataset's epoch" in caplog.text


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
