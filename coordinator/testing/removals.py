"""Members removed by session timeout, judged by what their clients sent and how the server
answered (issue 32 item 12).

When the coordinator removes a classic group member because its session expired, the
watcher snapshots, at that moment and on the server's clock, what every connection (open or
recently closed) sent and how the server answered each member's session-renewing requests
(``coordinator/server/tally.py``), with the group's generation at the removal. The member
id a classic group gives is ``client_id + "-" + uuid`` (``group_instance_id + "-" + uuid``
for a static member), so each test client gets its own client id, its instance id if it
has one. A removal is then

- ``server failed to renew``: a Heartbeat, JoinGroup or OffsetCommit of that member id and
  of the generation it was removed in was answered as a renewal (NONE; a Heartbeat also
  REBALANCE_IN_PROGRESS, which refreshes the session in Kafka too) within the session
  before the removal, on any connection: kcoord's fault, which a test must fail on;
- ``renewal refused``: renewing requests of the client reached the server within the
  session, but none was answered as a renewal of the member's generation (answered
  ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID, which renew nothing in Kafka, or for another
  member id, or not answered yet): the client spoke from a generation the group had left;
- ``client sent other requests``: bytes arrived (Fetch, Metadata, a SyncGroup, which does
  not renew in Kafka 4.x) but no renewing request: the client's group side went quiet
  while its fetcher ran -- still the client's;
- ``silent client``: no request from the client on any connection during the session
  before the removal -- the client stopped talking (kafka-python 3.0.12's selector
  livelock, ``tests/e2e/clients/kafka_python_livelock.md``); nothing the server could renew.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any

import trio

from coordinator.server.tally import RENEWING_API_KEYS

__all__ = ["RENEWING_KEYS", "Removal", "RemovalWatch"]

#: The requests that renew a classic member's session (``server.tally``).
RENEWING_KEYS = RENEWING_API_KEYS
_RUNTIME_LOGGER = "coordinator.server.runtime"
_SLACK_S = 0.25  # the expiry timer's own lateness


@dataclass
class Removal:
    """One member removed by its session timeout, and its client's connections then."""

    group: str
    member_id: str
    at: float  # the server's clock
    connections: list[dict[str, Any]] = field(default_factory=list)
    generation: int | None = None  # the group's at the removal (None: not logged)

    @property
    def prefix(self) -> str:
        """The client id (dynamic member) or group instance id (static) in the member id."""
        return self.member_id.rsplit("-", 5)[0]

    def of(self, client_ids: set[str]) -> list[dict[str, Any]]:
        """The tallies of ``client_ids``' connections at the removal."""
        return [c for c in self.connections if c["client_id"] in client_ids]

    def answers(self) -> list[dict[str, Any]]:
        """How the server last answered this member id's renewing requests, on each
        connection that answered one (``ConnectionTally.view``'s ``answers``)."""
        return [c["answers"][self.member_id] for c in self.connections
                if self.member_id in c.get("answers", {})]

    def verdict(self, session_s: float, client_ids: set[str] | None = None) -> str:
        """What stopped the session (the module's docstring): the member id's answers on
        any connection, then the requests of ``client_ids``' connections (by default the
        member id's prefix as a client id)."""
        since = self.at - session_s + _SLACK_S
        if any(a["renewed_at"] is not None and a["renewed_at"] >= since
               and (self.generation is None or a["renewed_generation"] == self.generation)
               for a in self.answers()):
            return "server failed to renew"
        mine = self.of({self.prefix} if client_ids is None else client_ids)
        if any(key in RENEWING_KEYS and at >= since
               for c in mine for key, at in c["last_at"].items()):
            return "renewal refused"
        if any(at >= since for c in mine for at in c["last_at"].values()):
            return "client sent other requests"
        return "silent client"


class RemovalWatch(logging.Handler):
    """Collects ``Removal``s from the coordinator's lifecycle log (called on the server's
    thread, inside its event loop, as the removal is logged). ``servers`` returns the
    running servers whose connection tallies are read."""

    def __init__(self, servers: Any) -> None:
        super().__init__(logging.INFO)
        self._servers = servers
        self._lock = threading.Lock()
        self.removals: list[Removal] = []
        self._level = logging.NOTSET

    def emit(self, record: logging.LogRecord) -> None:
        if (not isinstance(record.args, tuple) or len(record.args) != 3
                or "has been removed" not in record.msg or record.args[2] != "session timeout"):
            return
        member_id, group = str(record.args[0]), str(record.args[1])
        generation = getattr(record, "generation", None)
        removal = Removal(group, member_id, trio.current_time(),
                          generation=generation if isinstance(generation, int) else None)
        for server in self._servers():
            removal.connections += server.tallies.views()
        with self._lock:
            self.removals.append(removal)

    def install(self) -> RemovalWatch:
        logger = logging.getLogger(_RUNTIME_LOGGER)
        self._level = logger.level
        logger.addHandler(self)
        if logger.getEffectiveLevel() > logging.INFO:
            logger.setLevel(logging.INFO)
        return self

    def uninstall(self) -> None:
        logger = logging.getLogger(_RUNTIME_LOGGER)
        logger.removeHandler(self)
        logger.setLevel(self._level)

    def taken(self) -> list[Removal]:
        with self._lock:
            return list(self.removals)
