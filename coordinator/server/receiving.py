"""The reading side of a connection: the request being received (its memory and its
deadline) and the watch on a peer while its answer is parked.

A request reserves memory from the server's ``queued.max.request.bytes`` pool a step ahead
of the bytes read (``request_memory.py``), and must arrive whole within
``FRAME_DEADLINE_S`` of its first byte, or the connection is closed (one byte a second would
otherwise hold it open forever: every byte resets the idle timer).
"""

from __future__ import annotations

import socket
from typing import Any, Protocol

import trio

from coordinator.server.context import Handler, RequestContext
from coordinator.server.reactor import current_reactor
from coordinator.server.receive_buffer import RECEIVE_BYTES
from coordinator.server.request_memory import RESERVE_STEP, RequestMemory, Reservation
from wire import DecodedRequest, FrameReader

__all__ = ["FRAME_DEADLINE_S", "GONE", "Connection", "FrameDeadline", "Receiving", "parked"]


class Connection(Protocol):
    """What the reading side needs of ``connection_socket.Connection``."""

    sock: socket.socket
    last_active: float

    async def receive(self, limit: int = RECEIVE_BYTES) -> bytes: ...


#: How long a started request may take to arrive whole, from its first byte.
FRAME_DEADLINE_S = 60.0
_NEVER = float("inf")


GONE: Any = object()


async def parked(
    conn: Connection, handler: Handler, ctx: RequestContext, request: DecodedRequest
) -> Any:
    """Run ``handler`` (at once, in this task); ``GONE`` if the peer closed the connection
    before it answered. The event loop's reactor watches the socket meanwhile (where there
    is none, a task does)."""
    body: Any = GONE
    reactor = current_reactor()
    if reactor is not None:
        with trio.CancelScope() as scope:
            reactor.watch(conn.sock, scope.cancel)
            try:
                body = await handler(ctx, request)
            finally:
                reactor.unwatch(conn.sock)
        return body
    async with trio.open_nursery() as nursery:

        async def watch() -> None:
            if await peer_left(conn):
                nursery.cancel_scope.cancel()

        nursery.start_soon(watch)
        body = await handler(ctx, request)
        nursery.cancel_scope.cancel()
    return body


async def peer_left(conn: Connection) -> bool:
    """Wait until the peer's socket is readable: True if that is the end of the stream
    (the client left), False if it is more data (a pipelined request: stop watching)."""
    sock = conn.sock
    while True:
        await trio.lowlevel.wait_readable(sock)
        try:
            return not sock.recv(1, socket.MSG_PEEK)
        except BlockingIOError:
            continue
        except OSError:
            return True


class FrameDeadline(Exception):
    """A started request did not arrive whole in time."""


class Receiving:
    """The request a connection is receiving: its reservation in the server's request
    memory (grown a step ahead of the bytes read, ``request_memory.py``) and its deadline,
    counted from the request's first byte."""

    __slots__ = ("deadline", "received_at", "reservation", "scope")

    def __init__(self, memory: RequestMemory | None) -> None:
        self.reservation: Reservation | None = (
            memory.reservation() if memory is not None and memory.capacity >= 0 else None)
        self.deadline = _NEVER
        #: When the bytes the reader holds last arrived (a request's first byte among them).
        self.received_at = _NEVER
        #: The wait for the rest of a frame, while one is under way.
        self.scope: trio.CancelScope | None = None

    def shift(self, seconds: float) -> None:
        """The Trio clock jumped ``seconds`` without real time passing: the frame's deadline
        moves with it (``Connection.shift``)."""
        self.received_at += seconds
        self.deadline += seconds
        if self.scope is not None:
            self.scope.deadline += seconds

    async def more(self, conn: Connection, reader: FrameReader) -> bytes:
        """The next bytes of the peer, once the frame being received has its memory."""
        if not reader.buffered:
            data = await conn.receive()  # between requests: no frame, no deadline
            self.received_at = conn.last_active
            return data
        if self.deadline == _NEVER:
            self.deadline = self.received_at + FRAME_DEADLINE_S
        with trio.move_on_at(self.deadline) as scope:
            self.scope = scope
            try:
                limit = RECEIVE_BYTES
                reservation = self.reservation
                if reservation is not None:
                    pending = reader.pending_size()
                    if pending is None:
                        limit = 4 - reader.buffered  # the size prefix first
                    else:
                        await reservation.grow(min(4 + pending,
                                                   reader.buffered + RESERVE_STEP))
                        limit = reservation.held - reader.buffered
                data = await conn.receive(limit)
            finally:
                self.scope = None
            self.received_at = conn.last_active
            return data
        assert scope.cancelled_caught
        raise FrameDeadline

    @property
    def active(self) -> bool:
        """Whether a frame holds memory or has a deadline."""
        return self.deadline != _NEVER or (
            self.reservation is not None and self.reservation.held > 0)

    def done(self) -> None:
        """A whole frame arrived (or the connection ends): give its memory back. The next
        frame's deadline counts from ``received_at``: bytes of it may have come along."""
        self.deadline = _NEVER
        if self.reservation is not None:
            self.reservation.release()
