"""Full collections walk only what survived since the last one (``collector.py``), not the
whole long-lived heap: a heap of committed offsets replaced one by one, as a commit does.

The pauses are measured (``CollectorPauses``) but the assertions are on how many objects
each full collection had to walk (the oldest generation's size as it starts), which does
not depend on how busy the machine is."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from coordinator.server.collector import MIDDLE_EVERY, CollectorPauses, frozen_survivors

HEAP = 300_000
CHURN = 400_000


class Value:
    """A committed offset's value (GC-tracked, as the records' slotted dataclasses are)."""

    __slots__ = ("metadata", "offset")

    def __init__(self, offset: int) -> None:
        self.offset = offset
        self.metadata: list[int] = []


@contextmanager
def walked_by_full_collections() -> Iterator[list[int]]:
    """The oldest generation's size at the start of every full collection."""
    sizes: list[int] = []

    def watch(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and info["generation"] == 2:
            sizes.append(len(gc.get_objects(generation=2)))

    gc.callbacks.append(watch)
    try:
        yield sizes
    finally:
        gc.callbacks.remove(watch)


@contextmanager
def walked_by_middle_collections() -> Iterator[list[int]]:
    """The young generations' size at the start of every collection of the middle one."""
    sizes: list[int] = []

    def watch(phase: str, info: dict[str, Any]) -> None:
        if phase == "start" and info["generation"] == 1:
            sizes.append(len(gc.get_objects(generation=0)) + len(gc.get_objects(generation=1)))

    gc.callbacks.append(watch)
    try:
        yield sizes
    finally:
        gc.callbacks.remove(watch)


def _churn(offsets: dict[int, Value], batch: int = 5_000) -> None:
    """Commits in batches (a batch's new values live a while before they replace the old
    ones, so young collections see survivors and promote them, as a server's do)."""
    for start in range(0, CHURN, batch):
        pending = [Value(i) for i in range(start, start + batch)]
        for i, value in enumerate(pending, start):
            offsets[i % HEAP] = value  # the old value is freed, the new one survives


def _cyclic_churn(offsets: dict[int, Value]) -> None:
    """Commits whose replaced values are garbage only a collection can free."""
    for start in range(0, 3 * HEAP, 5_000):
        pending = [Value(i) for i in range(start, start + 5_000)]
        for i, value in enumerate(pending, start):
            value.metadata.append(value)
            offsets[i % HEAP] = value


def _heap() -> dict[int, Value]:
    offsets = {i: Value(i) for i in range(HEAP)}
    gc.collect()  # all of it in the oldest generation, as a loaded server's state is
    return offsets


def test_full_collections_walk_the_whole_heap_without_freezing() -> None:
    offsets = _heap()
    with walked_by_full_collections() as sizes:
        _churn(offsets)
    # The control, what the policy avoids: each walks every value and its list.
    assert sizes and min(sizes) > 2 * HEAP


def test_frozen_survivors_leave_no_full_collection_due() -> None:
    offsets = _heap()
    pauses = CollectorPauses()
    with (frozen_survivors() as policy, pauses.registered(),
          walked_by_full_collections() as full, walked_by_middle_collections() as middle):
        _churn(offsets)
        assert gc.get_freeze_count() >= HEAP
        # What survives a middle collection is frozen, not kept in the oldest generation.
        assert len(gc.get_objects(generation=2)) < HEAP // 10
    assert middle, "no collection of the middle generation ran: the churn is too small"
    # The longest walk: the young generations (ten collections of the youngest), not the
    # heap of 2 * HEAP, and no full collection at all (the heap did not double).
    assert max(middle) < HEAP // 3
    assert full == [] and pauses.count[2] == 0 and policy.sweeps == 0
    assert pauses.count[1] == len(middle)
    assert gc.get_freeze_count() == 0  # unfrozen on exit


def test_cyclic_garbage_among_frozen_objects_is_reclaimed_once_the_heap_doubles() -> None:
    offsets = _heap()
    # What the process held before (other tests ran in it) is frozen too: count beside it.
    before = len(gc.get_objects())
    with (frozen_survivors(growth=1.05, floor=0) as policy,
          walked_by_full_collections() as sizes):
        _cyclic_churn(offsets)
        frozen = gc.get_freeze_count()
    # The process grew by 5 % with frozen garbage cycles at some point (whatever it held
    # before: other tests ran in it): one collection walked
    # everything and reclaimed them, so what stays frozen is bounded.
    assert max(sizes) > HEAP
    assert frozen < before + 4 * HEAP
    assert policy.sweeps >= 1


def test_no_sweep_below_the_floor() -> None:
    """The same growth under a floor far above the process: the heap stays frozen, every
    full collection walks only what is newer (the fleet's ramp from 40 to 170 MiB)."""
    offsets = _heap()
    with (frozen_survivors(growth=1.05, floor=1 << 40) as policy,
          walked_by_full_collections() as sizes):
        _cyclic_churn(offsets)
        assert gc.get_freeze_count() >= HEAP
    assert policy.sweeps == 0
    assert all(size < HEAP for size in sizes)


def test_collector_pauses_count_every_collection_by_generation() -> None:
    pauses = CollectorPauses()
    with pauses.registered():
        gc.collect(0)
        gc.collect(1)
        gc.collect()
        garbage: list[object] = []
        garbage.append(garbage)  # a cycle only a full collection frees
        del garbage
        gc.collect()
    assert pauses.count[0] >= 1 and pauses.count[1] >= 1 and pauses.count[2] == 2
    assert pauses.full_collected >= 1
    for generation in range(3):
        assert 0 <= pauses.longest[generation] <= pauses.total[generation]
        assert 0 <= pauses.cpu_longest[generation] <= pauses.cpu_total[generation]
    before = list(pauses.count)
    gc.collect()  # unregistered: not counted
    assert pauses.count == before
    line = pauses.summary()
    assert "gen2 2/" in line and "over 20 ms" in line and "freed" in line


def test_the_middle_generation_is_collected_more_often_while_inside() -> None:
    before = gc.get_threshold()
    with frozen_survivors():
        assert gc.get_threshold() == (before[0], MIDDLE_EVERY, before[2])
        assert before[1] > MIDDLE_EVERY
    assert gc.get_threshold() == before
