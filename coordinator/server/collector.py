"""Keeping the cyclic garbage collector's pauses short.

A server's heap is mostly long-lived state (groups, members, committed offsets) that
changes by replacement: every commit leaves a new value behind in the oldest generation.
CPython runs a full collection once those survivors reach a quarter of the oldest
generation, and a full collection walks all of it: 100-166 ms paused under a 1,000-group
fleet, 220-600 ms with 10^6 committed offsets, nearly all of them freeing nothing.

So the survivors of every collection of the middle generation (and of any full one) are
frozen (``gc.freeze``: moved to the permanent generation, which collections skip, and
every generation's count reset): nothing reaches the oldest generation, no full collection
is due, and the longest pause is a middle collection's walk of the young generations.
Freezing only after full collections left them walking what the middle generation had
promoted since the last: up to 39 ms of CPU under a 300-group fleet. Frozen objects that
later become cyclic garbage are not reclaimed while frozen, so once the process's resident
memory has grown ``growth`` times since the last collection over everything (a sweep),
the heap is unfrozen and the next full collection walks (and reclaims) it all: a long
pause as rare as doubling the heap, the way Go paces its collector (GOGC=100). The
doubling counts from ``SWEEP_FLOOR`` at least: a server that loads small and then takes
on its clients' groups (40 to 170 MiB under a 1,000-group fleet) would otherwise sweep at
80 and 160 MiB, 150 and 550 ms of CPU freeing 5 and 128 objects; the server's state is
rarely cyclic garbage (full collections under that fleet freed 0-128 objects each), so the
memory this may hold back is small beside the pauses saved.
``CollectorPauses`` counts the pauses: ``kcoord serve`` logs them when it stops.
"""

from __future__ import annotations

import gc
import os
import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["CollectorPauses", "FreezePolicy", "frozen_survivors"]

_OLDEST = 2
#: Collections of the youngest generation between collections of the middle one (CPython's
#: default: 10). The middle one's walk is now the longest pause: what survived that many
#: collections of the youngest (15,000-53,000 objects, 15-60 ms of CPU, under a 1,000-group
#: fleet with 10); fewer, each shorter, the same work in all (a survivor is walked once by
#: each and then frozen).
MIDDLE_EVERY = 3


#: Resident memory the first sweep's doubling counts from, at least (see the docstring).
SWEEP_FLOOR = 256 << 20

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _rss() -> int:
    """The process's resident memory in bytes (a read of ``/proc/self/statm``, else the
    peak from ``getrusage``): ``gc.get_freeze_count`` would walk every frozen object."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class FreezePolicy:
    """What ``frozen_survivors`` does after each collection (``sweeps``: how many
    times the heap was unfrozen because it grew ``growth`` times)."""

    def __init__(self, growth: float, floor: int) -> None:
        self.growth = growth
        self.floor = floor
        self.swept = max(_rss(), floor)
        self.sweeping = False
        self.sweeps = 0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase != "stop" or info["generation"] == 0:
            return
        if self.sweeping:  # unfrozen: wait for the full collection that walks it all
            if info["generation"] == _OLDEST:  # that one: start counting again
                self.sweeping = False
                gc.freeze()
                self.swept = max(_rss(), self.floor)
        elif _rss() > self.growth * self.swept:
            gc.unfreeze()
            self.sweeping = True
            self.sweeps += 1
        else:
            gc.freeze()


@contextmanager
def frozen_survivors(growth: float = 2.0, floor: int = SWEEP_FLOOR) -> Iterator[FreezePolicy]:
    """Freeze what is alive now (the loaded state) and the survivors of every collection
    but the youngest's while inside (see the module docstring); unfrozen on exit."""
    gc.freeze()
    # Nothing left to walk: this sets the collector's count of long-lived objects, which
    # paces the next full collection, to what is not frozen (else the first one would wait
    # for, and walk, a quarter of the whole heap).
    gc.collect()
    policy = FreezePolicy(growth, floor)
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], MIDDLE_EVERY, thresholds[2])
    gc.callbacks.append(policy)
    try:
        yield policy
    finally:
        gc.callbacks.remove(policy)
        gc.set_threshold(*thresholds)
        gc.unfreeze()


class CollectorPauses:
    """Every collection's pause while registered (``gc.callbacks``), by generation: how many,
    their total and the longest, how many were over ``LONG_S`` and what the full ones freed.
    Each pause is timed twice: wall time (what a request waits) and the thread's CPU time
    (the collector's own work: on a busy machine the wall time also holds other processes'
    turns). Counts, not a list: the server keeps one for its whole life (``kcoord serve``
    logs ``summary()`` when it stops)."""

    #: A pause longer than this is counted apart (the tail a heartbeat feels).
    LONG_S = 0.020

    def __init__(self) -> None:
        self.count = [0, 0, 0]
        self.total = [0.0, 0.0, 0.0]  # seconds
        self.longest = [0.0, 0.0, 0.0]  # seconds
        self.cpu_total = [0.0, 0.0, 0.0]  # seconds of the collecting thread's CPU
        self.cpu_longest = [0.0, 0.0, 0.0]
        self.long = 0  # wall time over LONG_S
        self.long_cpu = 0  # CPU time over LONG_S
        self.full_collected = 0  # objects the full collections freed
        self._started = 0.0
        self._started_cpu = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            self._started_cpu = time.thread_time()
            return
        pause = time.perf_counter() - self._started
        cpu = time.thread_time() - self._started_cpu
        generation = info["generation"]
        self.count[generation] += 1
        self.total[generation] += pause
        self.cpu_total[generation] += cpu
        if pause > self.longest[generation]:
            self.longest[generation] = pause
        if cpu > self.cpu_longest[generation]:
            self.cpu_longest[generation] = cpu
        if pause > self.LONG_S:
            self.long += 1
        if cpu > self.LONG_S:
            self.long_cpu += 1
        if generation == _OLDEST:
            self.full_collected += info["collected"]

    def summary(self) -> str:
        """One line: per generation ``count/total ms/longest ms/CPU total ms/CPU longest
        ms``, the long pauses (wall, CPU) and what the full collections freed
        (``bench_scale.py`` parses it)."""
        each = " ".join(
            f"gen{g} {self.count[g]}/{self.total[g] * 1000:.1f}/{self.longest[g] * 1000:.1f}"
            f"/{self.cpu_total[g] * 1000:.1f}/{self.cpu_longest[g] * 1000:.1f}"
            for g in range(3))
        return (f"collector pauses (count/total ms/longest ms/CPU total ms/CPU longest ms): "
                f"{each}; over {self.LONG_S * 1000:g} ms {self.long} (CPU {self.long_cpu}); "
                f"full collections freed {self.full_collected} objects")

    @contextmanager
    def registered(self) -> Iterator[CollectorPauses]:
        gc.callbacks.append(self)
        try:
            yield self
        finally:
            gc.callbacks.remove(self)
