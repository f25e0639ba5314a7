"""Pipelined requests on one connection: the answers of requests that wait for the disk.

A connection hands a pipelinable request (a route with ``pipelined``: OffsetCommit,
Heartbeat, ConsumerGroupHeartbeat) to the coordinator at once (``submit``) and, when its
reply is not ready yet (under ``--fsync always`` a commit waits for its fsync), queues the
pending reply here and goes on reading:
request N+1 reaches the coordinator while N waits for the disk, so the runtime's group
commit covers many requests of one connection with one fsync. A writer task collects the
replies in request order and writes them (every reply ready at once in one write). No
reply exists before its records are durable, so nothing is acknowledged early.

While anything is queued here, the connection answers nothing itself: a request that is
not pipelinable first waits until this queue is written out (``drained``), so answers stay
in request order and such a request sees every earlier commit applied (as when requests
are served one at a time, Kafka's way).
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any, Protocol

import trio

from wire.fast_codec import encode_response

__all__ = ["PendingAnswer", "ResponsePipeline", "Writer"]

log = logging.getLogger(__name__)

#: Pending replies per connection before the connection stops reading (backpressure).
MAX_PENDING = 1024


class Writer(Protocol):
    """The connection side the pipeline writes to (``connection_socket.Connection``)."""

    connection_id: int
    scope: trio.CancelScope

    async def send_all(self, data: bytearray) -> None: ...


class PendingAnswer(Protocol):
    """A submitted request's reply (``runtime.PendingReply``)."""

    def ready(self) -> bool: ...

    def result(self) -> Any: ...

    async def wait(self) -> Any: ...

    def discard(self) -> None: ...


class ResponsePipeline:
    """The pending replies of one connection, written in request order by a writer task
    that runs while any are queued."""

    __slots__ = ("_conn", "_drained", "_nursery", "_pending", "_room", "_writing")

    def __init__(self, conn: Writer, nursery: trio.Nursery) -> None:
        self._conn = conn
        self._nursery = nursery
        self._pending: deque[tuple[int, int, int, PendingAnswer]] = deque()
        self._writing = False
        self._drained = trio.Event()
        self._drained.set()
        self._room = trio.Event()
        self._room.set()

    @property
    def active(self) -> bool:
        """Whether replies are queued or being written."""
        return self._writing

    async def push(
        self, api_key: int, api_version: int, correlation_id: int, pending: PendingAnswer
    ) -> None:
        """Queue ``pending`` after every earlier reply; start the writer if it is idle."""
        self._pending.append((api_key, api_version, correlation_id, pending))
        if not self._writing:
            self._writing = True
            self._drained = trio.Event()
            self._nursery.start_soon(self._write)
        if len(self._pending) >= MAX_PENDING:
            self._room = trio.Event()
            await self._room.wait()

    async def drained(self) -> None:
        """Return once every queued reply was written."""
        await self._drained.wait()

    async def _write(self) -> None:
        pending = self._pending
        conn = self._conn
        try:
            while pending:
                api_key, api_version, correlation_id, answer = pending.popleft()
                body = answer.result() if answer.ready() else await answer.wait()
                out = bytearray()
                while True:
                    if body is not None:
                        out += encode_response(api_key, api_version, correlation_id, body)
                    if not (pending and pending[0][3].ready()):
                        break
                    api_key, api_version, correlation_id, answer = pending.popleft()
                    body = answer.result()
                if len(pending) < MAX_PENDING:
                    self._room.set()
                await conn.send_all(out)
        except OSError as exc:
            log.debug("connection %d broken: %r", conn.connection_id, exc)
            conn.scope.cancel()
        except Exception:
            log.exception("closing connection %d: a pipelined request failed",
                          conn.connection_id)
            conn.scope.cancel()
        finally:
            while pending:  # the connection is closing: nobody collects these
                pending.popleft()[3].discard()
            self._writing = False
            self._drained.set()
            self._room.set()

