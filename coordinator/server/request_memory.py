"""The memory all connections' partially received requests may hold together: Kafka's
``queued.max.request.bytes`` (a memory pool the socket server allocates each request from).

Once a request's size prefix has arrived, its connection reserves the whole size before it
reads more of it; a reservation waits while the pool cannot hold it, so connections stop
reading until memory frees, and nothing is allocated meanwhile. Whole-frame reservations
cannot deadlock: a connection that holds one can always finish its frame. A frame larger
than the pool is granted when the pool is empty (Kafka does the same). ``-1``: unbounded.
"""

from __future__ import annotations

import trio

__all__ = ["RequestMemory"]


class RequestMemory:
    """Reservations for requests being received, bounded by ``capacity`` bytes."""

    __slots__ = ("_freed", "capacity", "used", "waits")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.used = 0
        #: How many reservations had to wait for memory (diagnostics, tests).
        self.waits = 0
        self._freed = trio.Event()

    def _fits(self, size: int) -> bool:
        return self.capacity < 0 or self.used + size <= self.capacity or self.used == 0

    async def reserve(self, size: int) -> None:
        """Take ``size`` bytes, waiting until the pool can hold them."""
        if not self._fits(size):
            self.waits += 1
            while not self._fits(size):
                await self._freed.wait()
        self.used += size

    def release(self, size: int) -> None:
        """Give back a reservation (the frame was read, or its connection closed)."""
        self.used -= size
        self._freed.set()
        self._freed = trio.Event()
