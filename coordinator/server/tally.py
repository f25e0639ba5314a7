"""What each connection's peer sent: bytes, requests, and when it last sent each API; and
how the server answered the requests that renew a classic member's session.

A test that sees a group member removed by session timeout asks this whether the member's
client sent anything during that session (a silent client: the fault is the client's),
whether its renewing requests were answered without renewing (ILLEGAL_GENERATION,
UNKNOWN_MEMBER_ID: nothing renewed, as in Kafka), or whether the server answered one as a
renewal and the member still expired (the server failed to renew the session). Kafka
exposes the byte and request counts as per-connection metrics (``incoming-byte-total``,
``request-total``); kcoord counts them on every connection -- an addition and two stores a
request -- and keeps the last ``RECENTLY_CLOSED`` closed connections' tallies, so a client
that closed its connection can still be judged.

The answers are recorded where a request meets its answer (``dispatch.serve_one`` for a
submitted request, at once or when its pending reply is collected, and the connection's
task for an awaited one), so every reply path -- inline, pipelined, the general runtime,
an injected fault's answer -- records the answer it wrote, with no second copy of the
order in which answers go out. Per member id the last answer is kept (API key,
generation, error code, time) and the last one that renewed the session (Heartbeat
answered NONE or REBALANCE_IN_PROGRESS -- Kafka refreshes the session in both --, JoinGroup
or OffsetCommit answered NONE); at most ``MEMBERS_KEPT`` members a connection.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

import trio

__all__ = ["MEMBERS_KEPT", "RECENTLY_CLOSED", "RENEWING_API_KEYS", "ConnectionTally", "Tallies"]

#: How many closed connections' tallies are kept (bounded: about 300 bytes each, and
#: about 200 more per member answered).
RECENTLY_CLOSED = 256
#: The requests that renew a classic member's session in Kafka 4.x's GroupMetadataManager
#: (Heartbeat, JoinGroup, OffsetCommit). A SyncGroup does not: one answered
#: REBALANCE_IN_PROGRESS and followed by silence expires the member, in Kafka too.
RENEWING_API_KEYS = frozenset({12, 11, 8})
#: Members whose answers one connection keeps (a client speaks for one; the oldest goes).
MEMBERS_KEPT = 8
_JOIN_GROUP, _HEARTBEAT = 11, 12
_NONE, _REBALANCE_IN_PROGRESS = 0, 27


class ConnectionTally:
    """One connection's peer: bytes received, requests, the client id it gave, and the
    server-clock time of its last request of each API key."""

    __slots__ = ("answers", "bytes_in", "client_id", "closed_at", "connection_id", "last_at",
                 "opened_at", "renewals", "requests")

    def __init__(self, connection_id: int, opened_at: float) -> None:
        self.connection_id = connection_id
        self.opened_at = opened_at
        self.closed_at: float | None = None
        self.bytes_in = 0
        self.requests = 0
        self.client_id: str | None = None
        self.last_at: dict[int, float] = {}
        #: Per member id: (API key, generation, error code, at) of the last renewing
        #: request answered, and (generation, at) of the last answer that renewed.
        self.answers: dict[str, tuple[int, int, int, float]] = {}
        self.renewals: dict[str, tuple[int, float]] = {}

    def request(self, api_key: int, client_id: str | None, now: float) -> None:
        """A request of ``api_key`` arrived whole at ``now``."""
        self.requests += 1
        self.client_id = client_id
        self.last_at[api_key] = now

    def answered(self, api_key: int, request: Any, response: Any, now: float) -> None:
        """``response`` answered ``request`` (bodies) of ``api_key``, one of
        ``RENEWING_API_KEYS``, at ``now``: recorded under the member id it names."""
        if api_key == _HEARTBEAT:
            member, generation = request["member_id"], request["generation_id"]
            error = response["error_code"]
            renewed = error in (_NONE, _REBALANCE_IN_PROGRESS)
        elif api_key == _JOIN_GROUP:  # a new member's id and its generation: the answer's
            member, generation = response["member_id"], response["generation_id"]
            error = response["error_code"]
            renewed = error == _NONE
        else:  # OffsetCommit: renewed when a partition was committed (one error for all)
            member, generation = request["member_id"], request["generation_id_or_member_epoch"]
            error = -1  # (no partition)
            for topic in response["topics"]:
                for partition in topic["partitions"]:
                    error = partition["error_code"]
                    if error == _NONE:
                        break
                if error == _NONE:
                    break
            if error == -1:
                return
            renewed = error == _NONE
        if not member:
            return
        answers = self.answers
        if member not in answers and len(answers) >= MEMBERS_KEPT:  # the oldest goes
            oldest = next(iter(answers))
            del answers[oldest]
            self.renewals.pop(oldest, None)
        answers[member] = (api_key, generation, error, now)
        if renewed:
            self.renewals[member] = (generation, now)

    def on_answer(self, api_key: int, request: Any) -> Callable[[Any], Any]:
        """What records ``request``'s answer once its pending reply is collected (a
        ``PendingReply.then`` step: the answer passes unchanged)."""
        def record(response: Any) -> Any:
            self.answered(api_key, request, response, trio.current_time())
            return response
        return record

    def view(self) -> dict[str, Any]:
        """A copy as plain data."""
        renewals = self.renewals
        answers = {member: {"api_key": key, "generation": generation, "error_code": error,
                            "at": at,
                            "renewed_generation": renewals.get(member, (None, None))[0],
                            "renewed_at": renewals.get(member, (None, None))[1]}
                   for member, (key, generation, error, at) in self.answers.items()}
        return {"connection_id": self.connection_id, "client_id": self.client_id,
                "bytes_in": self.bytes_in, "requests": self.requests,
                "opened_at": self.opened_at, "closed_at": self.closed_at,
                "last_at": dict(self.last_at), "answers": answers}


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
