"""Batches of a tf.data pipeline epoch after epoch, with no cold start at epoch boundaries."""

import concurrent.futures
import logging

logger = logging.getLogger(__name__)


class EpochBatches:
    """Iterates `dataset` (one epoch per pass) again and again, counting epochs.

    Each pass needs a new iterator, and a new iterator starts cold: making it (tens of ms
    for a distributed dataset), refilling its shuffle buffer and producing its first batch
    all used to happen while the training step waited, at every epoch boundary. On a small
    corpus, where an epoch is a handful of steps, that was a quarter of the training time
    (`input_wait_fraction`). So the next epoch's iterator is made in a background thread as
    soon as the current one starts; it prefetches while the current epoch trains.

    Iterators are made in the same order as before (one per epoch), so every epoch gets the
    same shuffle order and random crops as with plain `iter(dataset)` per epoch.

    Resuming at ``(start_epoch, start_batch)`` replays the input up to there: a seeded pipeline
    draws each epoch's shuffle and crop seeds when its iterator is made, so the iterators of
    the `start_epoch` epochs before are made and dropped (about 0.1 s each, nothing read), and
    the `start_batch` batches of the current epoch already trained on are read and dropped.
    """

    def __init__(self, dataset, start_epoch=0, start_batch=0):
        self._dataset = dataset
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="next_epoch")
        for _ in range(start_epoch):
            iter(dataset)
        self._current = iter(dataset)
        self._next = self._executor.submit(iter, dataset)
        self.epochs_finished = start_epoch  # passes that ran to their end
        self.epoch_batches = 0  # batches taken from the current pass
        for _ in range(start_batch):
            next(self)
        if self.epochs_finished != start_epoch:
            logger.warning(
                "the resumed position, batch %d of epoch %d, lies past the end of this dataset's epoch: "
                "the dataset is not the one the checkpoint was trained on; going on at batch %d of epoch %d",
                start_batch, start_epoch, self.epoch_batches, self.epochs_finished,
            )

    def __next__(self):
        try:
            batch = next(self._current)
        except StopIteration:
            finished = [self._current]
            self._current = self._next.result()
            self._next = self._executor.submit(self._release_and_make, finished)
            del finished
            self.epochs_finished += 1
            self.epoch_batches = 0
            try:
                batch = next(self._current)
            except StopIteration:
                raise ValueError("train_dataset yields no batch; check its size and batch_size") from None
        self.epoch_batches += 1
        return batch

    def _release_and_make(self, finished):
        """On the background thread: let go of the epoch that ended, then make the next epoch's iterator.

        Tearing down an exhausted iterator stops its prefetching threads, which can take a
        while (~1.2 s for a distributed dataset's), time the training thread need not wait.
        """
        finished.clear()
        return iter(self._dataset)

    def __iter__(self):
        return self

    def close(self):
        """Drop the prefetching iterator of the next epoch and its thread."""
        self._executor.shutdown(wait=True, cancel_futures=True)
        self._next = self._current = None
