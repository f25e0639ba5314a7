"""What each connection's peer sent: bytes, requests, and when it last sent each API.

A test that sees a group member removed by session timeout asks this whether the member's
client sent anything during that session (a silent client: the fault is the client's) or
its heartbeats reached the server and the member still expired (the server failed to renew
the session). Kafka exposes the same figures as per-connection metrics
(``incoming-byte-total``, ``request-total``); kcoord counts them on every connection --
an addition and two stores a request -- and keeps the last ``RECENTLY_CLOSED`` closed
connections' tallies, so a client that closed its connection can still be judged.
"""

from __future__ import annotations

from collections import deque
from typing import Any

__all__ = ["RECENTLY_CLOSED", "ConnectionTally", "Tallies"]

#: How many closed connections' tallies are kept (bounded: about 300 bytes each).
RECENTLY_CLOSED = 256


class ConnectionTally:
    """One connection's peer: bytes received, requests, the client id it gave, and the
    server-clock time of its last request of each API key."""

    __slots__ = ("bytes_in", "client_id", "closed_at", "connection_id", "last_at",
                 "opened_at", "requests")

    def __init__(self, connection_id: int, opened_at: float) -> None:
        self.connection_id = connection_id
        self.opened_at = opened_at
        self.closed_at: float | None = None
        self.bytes_in = 0
        self.requests = 0
        self.client_id: str | None = None
        self.last_at: dict[int, float] = {}

    def request(self, api_key: int, client_id: str | None, now: float) -> None:
        """A request of ``api_key`` arrived whole at ``now``."""
        self.requests += 1
        self.client_id = client_id
        self.last_at[api_key] = now

    def view(self) -> dict[str, Any]:
        """A copy as plain data."""
        return {"connection_id": self.connection_id, "client_id": self.client_id,
                "bytes_in": self.bytes_in, "requests": self.requests,
                "opened_at": self.opened_at, "closed_at": self.closed_at,
                "last_at": dict(self.last_at)}


class Tallies:
    """The tallies of the open connections and of the last closed ones."""

    __slots__ = ("closed", "open")

    def __init__(self) -> None:
        self.open: dict[int, ConnectionTally] = {}
        self.closed: deque[ConnectionTally] = deque(maxlen=RECENTLY_CLOSED)

    def opened(self, connection_id: int, now: float) -> ConnectionTally:
        tally = ConnectionTally(connection_id, now)
        self.open[connection_id] = tally
        return tally

    def close(self, tally: ConnectionTally, now: float) -> None:
        tally.closed_at = now
        if self.open.pop(tally.connection_id, None) is not None:
            self.closed.append(tally)

    def views(self, client_id: str | None = None) -> list[dict[str, Any]]:
        """Every kept tally (closed ones first), of ``client_id``'s connections if given."""
        return [tally.view() for tally in (*self.closed, *self.open.values())
                if client_id is None or tally.client_id == client_id]
