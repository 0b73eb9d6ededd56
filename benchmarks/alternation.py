"""Timing forms of the same work in turn, and the ratios of their paired times.

Free of TensorFlow, so the timing children that must not load it (`int8_pointwise.py`'s,
which time shipped files as a voice runs them) use it too.
"""

import statistics
import time


def alternated_times(calls, pairs):
    """{name: seconds of each of ``pairs`` calls of ``calls[name]()``}, the calls taken in turn (the
    order reversed every other pair, so neither form always runs after the other)."""
    times = {name: [] for name in calls}
    order = list(calls.items())
    for pair in range(pairs):
        for name, call in order if pair % 2 == 0 else order[::-1]:
            start = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - start)
    return times


def paired_ratios(baseline, candidate):
    """(median, first quartile, third quartile) of ``candidate[i] / baseline[i]`` over the pairs."""
    ratios = [new / old for old, new in zip(baseline, candidate)]
    first, _, third = statistics.quantiles(ratios, n=4)
    return statistics.median(ratios), first, third
