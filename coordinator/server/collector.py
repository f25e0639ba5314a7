"""Keeping the cyclic garbage collector's full collections short.

A server's heap is mostly long-lived state (groups, members, committed offsets) that
changes by replacement: every commit leaves a new value behind in the oldest generation.
CPython runs a full collection once those survivors reach a quarter of the oldest
generation, and a full collection walks all of it: 100-166 ms paused under a 1,000-group
fleet, 220-600 ms with 10^6 committed offsets, nearly all of them freeing nothing.

So after every full collection the survivors are frozen (``gc.freeze``: moved to the
permanent generation, which collections skip): the next full collection walks only what
survived since. Frozen objects that later become cyclic garbage are not reclaimed while
frozen, so once the process's resident memory has grown ``growth`` times since the last
collection over everything, the heap is unfrozen and the next full collection walks (and
reclaims) it all: a long pause as rare as doubling the heap, the way Go paces its
collector (GOGC=100).
``CollectorPauses`` counts the pauses, for tests and benchmarks.
"""

from __future__ import annotations

import gc
import os
import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["CollectorPauses", "frozen_survivors"]

_OLDEST = 2
#: Collections of the middle generation between full ones (CPython's default: 10). With the
#: survivors frozen, a full collection walks only what the middle generation promoted since
#: the last one: more often, each shorter (about 26,000 objects against 132,000 with 10
#: in tests/benchmarks/bench_collector.py's commits), the same work in all.
FULL_EVERY = 2


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _rss() -> int:
    """The process's resident memory in bytes (a read of ``/proc/self/statm``, else the
    peak from ``getrusage``): ``gc.get_freeze_count`` would walk every frozen object."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class _FreezePolicy:
    def __init__(self, growth: float) -> None:
        self.growth = growth
        self.swept = _rss()
        self.sweeping = False

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase != "stop" or info["generation"] != _OLDEST:
            return
        if self.sweeping:  # that one walked everything: start counting again
            self.sweeping = False
            gc.freeze()
            self.swept = _rss()
        elif _rss() > self.growth * self.swept:
            gc.unfreeze()
            self.sweeping = True
        else:
            gc.freeze()


@contextmanager
def frozen_survivors(growth: float = 2.0) -> Iterator[None]:
    """Freeze what is alive now (the loaded state) and the survivors of every full
    collection while inside (see the module docstring); unfrozen on exit."""
    gc.freeze()
    # Nothing left to walk: this sets the collector's count of long-lived objects, which
    # paces the next full collection, to what is not frozen (else the first one would wait
    # for, and walk, a quarter of the whole heap).
    gc.collect()
    policy = _FreezePolicy(growth)
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], FULL_EVERY)
    gc.callbacks.append(policy)
    try:
        yield
    finally:
        gc.callbacks.remove(policy)
        gc.set_threshold(*thresholds)
        gc.unfreeze()


class CollectorPauses:
    """Every collection's pause, by generation, while registered (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.pauses: list[tuple[int, float]] = []  # (generation, seconds)
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.pauses.append((info["generation"], time.perf_counter() - self._started))

    def over(self, seconds: float) -> list[float]:
        """The pauses longer than ``seconds``."""
        return [pause for _, pause in self.pauses if pause > seconds]

    @contextmanager
    def registered(self) -> Iterator[CollectorPauses]:
        gc.callbacks.append(self)
        try:
            yield self
        finally:
            gc.callbacks.remove(self)
