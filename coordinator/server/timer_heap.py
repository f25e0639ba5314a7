"""The coordinator runtime's armed timers: one keyed set for every shard (Kafka's
CoordinatorTimer), on a heap by deadline.

Rescheduling a key replaces its deadline. The heap is lazy: each armed key has one live
heap entry at or before its deadline (``_queued``); a key moved to a later deadline (every
heartbeat moves its member's session timer) only updates a dict, and its entry is re-queued
when it comes up, so a heartbeat costs a dict update, not a heap push.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable

from coordinator.core.result import ShardTimerKey

__all__ = ["TimerHeap"]

# Rebuild the heap when stale entries outnumber live ones by this factor (every heartbeat
# reschedules its member's session timer, leaving the old deadline behind).
_HEAP_SLACK = 4
_HEAP_MIN_REBUILD = 4096


class TimerHeap:
    """Armed keys and their deadlines (ms); ``on_earlier(deadline)`` hears of every new heap
    entry (the timer loop may have to wake sooner)."""

    __slots__ = ("_queued", "_seq", "_timers", "heap", "on_earlier")

    def __init__(self, on_earlier: Callable[[int], None]) -> None:
        self.on_earlier = on_earlier
        self._timers: dict[ShardTimerKey, int] = {}  # armed keys -> deadline (ms)
        self._queued: dict[ShardTimerKey, int] = {}  # armed keys -> their live heap entry
        self.heap: list[tuple[int, int, ShardTimerKey]] = []
        self._seq = itertools.count()

    def arm(self, key: ShardTimerKey, deadline_ms: int) -> None:
        """Arm ``key`` at ``deadline_ms``, replacing its deadline (a ScheduleTimer's change)."""
        self._timers[key] = deadline_ms
        entry = self._queued.get(key)
        if entry is None or entry > deadline_ms:
            self._push(key, deadline_ms)

    def cancel(self, key: ShardTimerKey) -> None:
        """Disarm ``key`` (a CancelTimer's change)."""
        self._timers.pop(key, None)

    def _push(self, key: ShardTimerKey, deadline: int) -> None:
        self._queued[key] = deadline
        heap = self.heap
        heapq.heappush(heap, (deadline, next(self._seq), key))
        self.on_earlier(deadline)
        if len(heap) > _HEAP_MIN_REBUILD and len(heap) > _HEAP_SLACK * len(self._queued):
            self.heap = [(d, next(self._seq), k) for k, d in self._queued.items()]
            heapq.heapify(self.heap)

    def armed(self) -> dict[ShardTimerKey, int]:
        """The armed keys and their deadlines (a copy)."""
        return dict(self._timers)

    def pop_due(self, now: int) -> tuple[ShardTimerKey, int] | None:
        """The next armed key whose deadline has passed (disarmed), or None."""
        while self.heap and self.heap[0][0] <= now:
            entry, _, key = heapq.heappop(self.heap)  # (_push may rebuild self.heap)
            if self._queued.get(key) != entry:
                continue  # superseded by an earlier push
            del self._queued[key]
            deadline = self._timers.get(key)
            if deadline is None:
                continue  # cancelled
            if deadline > now:
                self._push(key, deadline)  # rescheduled later: wait for the new deadline
                continue
            del self._timers[key]
            return key, deadline
        return None

    def next_deadline(self) -> int | None:
        """The earliest live heap entry's deadline (ms), or None."""
        heap = self.heap
        while heap and self._queued.get(heap[0][2]) != heap[0][0]:
            heapq.heappop(heap)
        return heap[0][0] if heap else None
