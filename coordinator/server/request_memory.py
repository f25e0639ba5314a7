"""The memory all connections' partially received requests may hold together: Kafka's
``queued.max.request.bytes`` (a memory pool the socket server allocates requests from).

A connection reserves memory for the request it is receiving step by step, ahead of the
bytes it reads (``RESERVE_STEP`` at a time, never past the announced size): a request is
only ever buffered in memory it reserved, and a connection holds about what its peer has
actually sent. (Kafka reserves a whole request once its size prefix is in; two peers
trickling a byte a second then hold the whole pool and every other request that arrives in
pieces waits for their deadline, issue 32 item 3.)

Fairness: while another connection waits for memory, a connection may grow its reservation
only up to its share, the pool divided among the connections holding or waiting for
memory; a step that does not fit waits until memory frees. A request's bytes already held
are never taken back, so reservations alone could deadlock (every holder waiting for the
rest of its request): when the pool cannot hold a holder's next step, the overdraft lets
one request at a time finish past the pool (the first holder to ask for it). Memory held
is therefore at most ``capacity`` plus one request (``socket.request.max.bytes``), and a
request larger than the pool is received as the overdraft. ``-1``: unbounded.
"""

from __future__ import annotations

import trio

__all__ = ["RESERVE_STEP", "RequestMemory", "Reservation"]

#: How far ahead of the bytes received a connection reserves (and so reads at most).
RESERVE_STEP = 256 * 1024  # the receive buffer (receive_buffer.RECEIVE_BYTES): one read per step


class Reservation:
    """One connection's hold on the pool for the request it is receiving."""

    __slots__ = ("held", "memory", "wanted")

    def __init__(self, memory: RequestMemory) -> None:
        self.memory = memory
        self.held = 0
        #: The step this reservation waits for (0: not waiting).
        self.wanted = 0

    async def grow(self, target: int) -> None:
        """Hold at least ``target`` bytes, waiting while the pool cannot give them."""
        if target > self.held:
            await self.memory.take(self, target - self.held)

    def release(self) -> None:
        """Give everything back (the request arrived whole, or its connection closed)."""
        if self.held:
            self.memory.give_back(self)


class RequestMemory:
    """Reservations for requests being received, bounded by ``capacity`` bytes."""

    __slots__ = ("_freed", "_overdraft", "_waiting", "capacity", "holders", "used", "waits")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.used = 0
        #: Reservations holding memory.
        self.holders = 0
        #: How many steps had to wait for memory (diagnostics, tests).
        self.waits = 0
        self._waiting: list[Reservation] = []
        self._overdraft: Reservation | None = None
        self._freed = trio.Event()

    def reservation(self) -> Reservation:
        """A new, empty reservation (one per connection)."""
        return Reservation(self)

    def _grants(self, holder: Reservation, size: int) -> bool:
        if self.capacity < 0 or self.used == 0 or self._overdraft is holder:
            return True
        others = [w for w in self._waiting if w is not holder]
        if self.used + size <= self.capacity:
            if not others:
                return True
            sharing = self.holders + sum(1 for w in others if not w.held)
            if not holder.held:
                sharing += 1
            share = self.capacity // sharing
            if holder.held + size <= share:
                return True
            # Over its share: wait only for a waiter within its share the pool can serve.
            return not any(w.held + w.wanted <= share and self.used + w.wanted <= self.capacity
                           for w in others)
        if holder.held and self._overdraft is None:
            self._overdraft = holder  # the pool is full: one request may finish past it
            return True
        return False

    async def take(self, holder: Reservation, size: int) -> None:
        """Add ``size`` bytes to ``holder``, waiting until the pool can give them."""
        if not self._grants(holder, size):
            self.waits += 1
            holder.wanted = size
            self._waiting.append(holder)
            self._wake()  # the waiters' shares changed: each checks again
            try:
                while not self._grants(holder, size):
                    await self._freed.wait()
            finally:
                self._waiting.remove(holder)
                holder.wanted = 0
                self._wake()  # (again, as it leaves)
        if not holder.held:
            self.holders += 1
        holder.held += size
        self.used += size

    def give_back(self, holder: Reservation) -> None:
        """Release everything ``holder`` holds."""
        self.used -= holder.held
        self.holders -= 1
        holder.held = 0
        if self._overdraft is holder:
            self._overdraft = None
        self._wake()

    def _wake(self) -> None:
        self._freed.set()
        self._freed = trio.Event()
