"""Request batching: requests for one voice that arrive within a few milliseconds run as one batch.

The first request of a batch waits up to `wait_s` for more (at most `max_batch_size`); the
batch then runs on the voice's worker thread while the next one gathers. A request whose
caller gave up (its time limit passed) before its batch started is dropped, not run; a
running batch is told through `cancelled()` once all its callers gave up, and stops.
"""

import asyncio
import logging
import time

logger = logging.getLogger(__name__)


class QueueFull(Exception):
    """More requests are waiting than the server accepts."""


class Batcher:
    """Gathers items and runs them in batches through `run_batch(items, cancelled) -> results` on `executor`.

    A result that is an Exception is raised to that item's caller. `cancelled()` (safe to
    call from the worker thread) is True once every caller of the batch has gone. `on_batch(size)`
    is told the size of every batch run.
    """

    def __init__(self, run_batch, executor, max_batch_size, wait_s, max_queue, on_batch=None):
        self.run_batch, self.executor = run_batch, executor
        self.max_batch_size, self.wait_s, self.max_queue = max_batch_size, wait_s, max_queue
        self.on_batch = on_batch or (lambda size: None)
        self._queue = None
        self._worker = None

    async def submit(self, item):
        """Wait for `item`'s result; raises QueueFull when too many requests wait."""
        if self._worker is None:  # created in the running event loop, on first use
            self._queue = asyncio.Queue()
            self._worker = asyncio.get_running_loop().create_task(self._work())
        if self._queue.qsize() >= self.max_queue:
            raise QueueFull(f"{self._queue.qsize()} requests are waiting")
        future = asyncio.get_running_loop().create_future()
        await self._queue.put((item, future))
        return await future

    async def _gather(self):
        jobs = [await self._queue.get()]
        deadline = time.monotonic() + self.wait_s
        while len(jobs) < self.max_batch_size:
            remaining = deadline - time.monotonic()
            if remaining <= 0 and self._queue.empty():
                break
            try:
                jobs.append(await asyncio.wait_for(self._queue.get(), max(remaining, 0)) if remaining > 0
                            else self._queue.get_nowait())
            except (asyncio.TimeoutError, asyncio.QueueEmpty):
                break
        return [(item, future) for item, future in jobs if not future.done()]

    async def _work(self):
        loop = asyncio.get_running_loop()
        while True:
            jobs = await self._gather()
            if not jobs:
                continue
            self.on_batch(len(jobs))
            futures = [future for _, future in jobs]

            def cancelled():
                return all(future.done() for future in futures)

            try:
                results = await loop.run_in_executor(self.executor, self.run_batch, [item for item, _ in jobs], cancelled)
            except Exception as error:  # noqa: BLE001  (reported to every caller of the batch)
                logger.exception("a batch of %d requests failed", len(jobs))
                results = [error] * len(jobs)
            for (_, future), result in zip(jobs, results):
                if future.done():
                    continue
                if isinstance(result, BaseException):
                    future.set_exception(result)
                else:
                    future.set_result(result)

    async def close(self):
        if self._worker is not None:
            self._worker.cancel()
