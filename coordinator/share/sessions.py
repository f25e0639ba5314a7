"""Share sessions (KIP-932; Kafka's ``ShareSessionCache``, ``ShareSession`` and the session
half of ``SharePartitionManager``): one session per (group, member), the share partitions a
member fetches from, and the epoch each ShareFetch/ShareAcknowledge must carry.

Epochs as ``ShareRequestMetadata``: a member opens a session with epoch 0 (a ShareFetch;
an existing session of the same key is replaced), then counts 1, 2, ... (after 2**31-1
comes 1); epoch -1 closes it. Sessions are soft state, as in Kafka: a restart loses them,
and the client's next request gets SHARE_SESSION_NOT_FOUND and opens a new one. As in Kafka,
a session goes when the connection that opened it closes, its member's acquired records
released (``manager.handle_connection_closed``); when the cache is full, the sessions of
closed connections are looked for again (``manager.handle_evict_closed``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from wire.constants import ErrorCode

from .durable import SharePartitionKey
from .states import ShareError

__all__ = [
    "DEFAULT_MAX_SHARE_SESSIONS",
    "FINAL_EPOCH",
    "INITIAL_EPOCH",
    "ConnectionId",
    "ShareSession",
    "ShareSessionCache",
    "ShareSessionKey",
    "next_epoch",
]

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
#: ``group.share.max.share.sessions`` (Kafka's default).
DEFAULT_MAX_SHARE_SESSIONS = 2000
_INT32_MAX = 2**31 - 1

ConnectionId = tuple[int, int]
"""Which client connection opened a session: (broker node id, connection id)."""


def next_epoch(epoch: int) -> int:
    """The epoch after ``epoch`` (``ShareRequestMetadata.nextEpoch``)."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == _INT32_MAX else epoch + 1


@dataclass(frozen=True, slots=True)
class ShareSessionKey:
    """Which session: (group, member)."""

    group_id: str
    member_id: str


@dataclass(slots=True)
class ShareSession:
    """One member's session: the share partitions it fetches from (in the order they were
    added) and the epoch its next request must carry."""

    key: ShareSessionKey
    partitions: dict[SharePartitionKey, None] = field(default_factory=dict)
    epoch: int = 1
    connection_id: ConnectionId | None = None

    def update(
        self, added: Iterable[SharePartitionKey], forgotten: Iterable[SharePartitionKey]
    ) -> None:
        """Add the partitions a request names and drop those it forgets."""
        for key in added:
            self.partitions.setdefault(key, None)
        for key in forgotten:
            self.partitions.pop(key, None)


class ShareSessionCache:
    """Every share session, at most ``max_entries`` of them (``group.share.max.share.sessions``)."""

    __slots__ = ("max_entries", "sessions")

    def __init__(self, max_entries: int = DEFAULT_MAX_SHARE_SESSIONS) -> None:
        self.max_entries = max_entries
        self.sessions: dict[ShareSessionKey, ShareSession] = {}

    def __len__(self) -> int:
        return len(self.sessions)

    def get(self, key: ShareSessionKey) -> ShareSession | None:
        """The session of ``key``, if any."""
        return self.sessions.get(key)

    def remove(self, key: ShareSessionKey) -> ShareSession | None:
        """Drop the session of ``key``; the session dropped, if any."""
        return self.sessions.pop(key, None)

    def total_partitions(self) -> int:
        """Share partitions over every session (Kafka's SharePartitionsCount)."""
        return sum(len(s.partitions) for s in self.sessions.values())

    def maybe_create_session(
        self,
        key: ShareSessionKey,
        partitions: Iterable[SharePartitionKey],
        connection_id: ConnectionId | None = None,
    ) -> ShareSession | None:
        """A new session at epoch 1 holding ``partitions``, or None when the cache is full."""
        if len(self.sessions) >= self.max_entries:
            return None
        session = ShareSession(key, dict.fromkeys(partitions), next_epoch(INITIAL_EPOCH),
                               connection_id)
        self.sessions[key] = session
        return session

    def sessions_of_connection(self, connection_id: ConnectionId) -> list[ShareSession]:
        """The sessions opened over connection ``connection_id``."""
        return [s for s in self.sessions.values() if s.connection_id == connection_id]

    # ------------------------------------------------------------------ requests

    def fetch_context(
        self,
        key: ShareSessionKey,
        epoch: int,
        partitions: Iterable[SharePartitionKey],
        forgotten: Iterable[SharePartitionKey],
        *,
        has_acknowledgements: bool,
        connection_id: ConnectionId | None = None,
    ) -> ShareSession:
        """The session a ShareFetch at ``epoch`` runs in (``SharePartitionManager.newContext``):
        epoch 0 opens one (replacing any), -1 names the one to close, any other must be the
        session's next epoch, which then moves on. ShareError as Kafka answers."""
        if epoch == FINAL_EPOCH:
            session = self.sessions.get(key)
            if session is None:
                raise ShareError(ErrorCode.SHARE_SESSION_NOT_FOUND,
                                 f"Share session {key} not found.")
            return session
        if epoch == INITIAL_EPOCH:
            if has_acknowledgements:
                raise ShareError(ErrorCode.INVALID_REQUEST,
                                 "Acknowledge data present in the initial ShareFetch.")
            self.sessions.pop(key, None)
            session = self.maybe_create_session(key, partitions, connection_id)
            if session is None:
                raise ShareError(ErrorCode.SHARE_SESSION_LIMIT_REACHED,
                                 "The share session cache is full.")
            return session
        session = self._expect(key, epoch)
        session.update(partitions, forgotten)
        session.epoch = next_epoch(session.epoch)
        return session

    def acknowledge_context(self, key: ShareSessionKey, epoch: int) -> ShareSession:
        """The session a ShareAcknowledge at ``epoch`` runs in
        (``SharePartitionManager.acknowledgeSessionUpdate``): never epoch 0; -1 leaves the
        epoch alone (the session closes); otherwise the epoch moves on."""
        if epoch == INITIAL_EPOCH:
            raise ShareError(ErrorCode.INVALID_SHARE_SESSION_EPOCH,
                             "A ShareAcknowledge cannot open a share session (epoch 0).")
        session = self.sessions.get(key)
        if session is None:
            raise ShareError(ErrorCode.SHARE_SESSION_NOT_FOUND, f"Share session {key} not found.")
        if epoch == FINAL_EPOCH:
            return session
        session = self._expect(key, epoch)
        session.epoch = next_epoch(session.epoch)
        return session

    def _expect(self, key: ShareSessionKey, epoch: int) -> ShareSession:
        session = self.sessions.get(key)
        if session is None:
            raise ShareError(ErrorCode.SHARE_SESSION_NOT_FOUND, f"Share session {key} not found.")
        if session.epoch != epoch:
            raise ShareError(
                ErrorCode.INVALID_SHARE_SESSION_EPOCH,
                f"Share session {key}: expected epoch {session.epoch}, got {epoch}.",
            )
        return session
