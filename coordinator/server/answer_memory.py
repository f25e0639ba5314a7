"""The memory answers waiting to be written may hold, and how long they may wait.

A client that sends Fetch requests and never reads leaves its answers in the server: ten
such connections held 1.1 GiB for up to ``connections.max.idle.ms`` (issue 32 item 4).
Kafka writes Fetch answers from the log files (zero copy), so only the socket's buffer
(``socket.send.buffer.bytes``) holds bytes per connection; kcoord encodes an answer in
memory first, so it bounds that memory instead:

- every answer being written counts in :class:`AnswerMemory`, bounded by
  ``kcoord.queued.max.response.bytes`` (default twice ``fetch.max.bytes``) for all
  connections together, and a Fetch asks for no more than the pool has free
  (:func:`cap_fetch` lowers its ``max_bytes``; Kafka's first-batch rule still returns one
  batch, so a consumer always progresses). A connection answers one request at a time,
  so it holds at most one Fetch answer (and up to ``connection.FLUSH_BYTES`` of small
  ones) -- the per-connection bound;
- ``socket.send.buffer.bytes`` (Kafka's name) sets the kernel's send buffer of each
  connection when given (default -1: the OS's, which tunes itself; Kafka's default is
  102400);
- an answer whose connection has taken none of its bytes for ``socket.send.timeout.ms``
  (kcoord's, default 60000: librdkafka's ``socket.timeout.ms``; Kafka itself waits for
  ``connections.max.idle.ms``) closes the connection, releasing its memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from coordinator.configs.broker_keys import SERVER_PROPERTIES
from wire.constants import ApiKey

__all__ = ["DEFAULT_SEND_TIMEOUT_MS", "AnswerLimits", "AnswerMemory", "cap_fetch"]

DEFAULT_SEND_TIMEOUT_MS = int(SERVER_PROPERTIES["socket.send.timeout.ms"].typed_default)
_FIRST_WITH_MAX_BYTES = 3  # Fetch v3 added the request-wide max_bytes


class AnswerMemory:
    """The bytes of answers being written, all connections together (-1: unbounded)."""

    __slots__ = ("capacity", "peak", "used")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.used = 0
        #: The most ever held at once (diagnostics, tests).
        self.peak = 0

    def free(self) -> int:
        """Bytes a new answer may take now (at least 1: one batch is always allowed)."""
        if self.capacity < 0:
            return 2**31 - 1
        return max(1, self.capacity - self.used)

    def take(self, size: int) -> None:
        self.used += size
        if self.used > self.peak:
            self.peak = self.used

    def give_back(self, size: int) -> None:
        self.used -= size


@dataclass(frozen=True, slots=True)
class AnswerLimits:
    """The server's answer settings, as every connection applies them."""

    memory: AnswerMemory
    #: ``socket.send.buffer.bytes`` (-1: the OS default).
    send_buffer_bytes: int = -1
    #: ``socket.send.timeout.ms`` in seconds.
    send_timeout_s: float = DEFAULT_SEND_TIMEOUT_MS / 1000


def cap_fetch(memory: AnswerMemory, request: Any) -> None:
    """Lower a Fetch's ``max_bytes`` (and ``min_bytes``) to what ``memory`` has free."""
    if request.api_key != ApiKey.FETCH or request.api_version < _FIRST_WITH_MAX_BYTES:
        return
    free = memory.free()
    body = request.body
    if body.max_bytes > free:
        body.max_bytes = free
        if body.min_bytes > free:
            body.min_bytes = free
