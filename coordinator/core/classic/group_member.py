"""One member of a classic group: Kafka's MemberMetadata / ClassicGroupMember (its
protocols, timeouts, assignment, and the reply tokens of its parked JoinGroup / SyncGroup).
"""

from __future__ import annotations

from collections.abc import Iterable

from coordinator.core.errors import CoordinatorStateError
from coordinator.core.result import ReplyToken
from coordinator.core.timers import HeartbeatTimerKey

__all__ = ["Member", "Protocols"]

Protocols = tuple[tuple[str, bytes], ...]
"""A member's supported protocols, (name, metadata) in preference order."""


class Member:
    """One member of a classic group (Kafka's MemberMetadata / ClassicGroupMember)."""

    __slots__ = (
        "assignment",
        "client_host",
        "client_id",
        "group_instance_id",
        "heartbeat_deadline",
        "heartbeat_key",
        "is_new",
        "join_token",
        "member_id",
        "protocol_type",
        "protocols",
        "rebalance_timeout_ms",
        "session_timeout_ms",
        "sync_token",
    )

    def __init__(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        client_id: str,
        client_host: str,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        protocol_type: str,
        protocols: Protocols,
        assignment: bytes = b"",
    ) -> None:
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.client_id = client_id
        self.client_host = client_host
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.session_timeout_ms = session_timeout_ms
        self.protocol_type = protocol_type
        self.protocols = protocols
        self.assignment = assignment
        self.join_token: ReplyToken | None = None
        self.sync_token: ReplyToken | None = None
        self.is_new = False
        # Deadline the member's heartbeat key is armed for; -1 when not armed.
        self.heartbeat_deadline = -1
        self.heartbeat_key = HeartbeatTimerKey(group_id, member_id)

    @property
    def awaiting_join(self) -> bool:
        """Whether a JoinGroup of this member is parked."""
        return self.join_token is not None

    @property
    def awaiting_sync(self) -> bool:
        """Whether a SyncGroup of this member is parked."""
        return self.sync_token is not None

    def has_satisfied_heartbeat(self) -> bool:
        """Parked members count as alive, except brand-new ones (they may expire while parked)."""
        if self.is_new:
            return False
        return self.join_token is not None or self.sync_token is not None

    def metadata(self, protocol: str) -> bytes:
        """The member's metadata for ``protocol``."""
        for name, metadata in self.protocols:
            if name == protocol:
                return metadata
        raise CoordinatorStateError(f"Member {self.member_id} does not support protocol {protocol}")

    def matches(self, protocols: Protocols) -> bool:
        """Whether ``protocols`` equals the stored ones, names and metadata, in order."""
        return protocols == self.protocols

    def vote(self, candidates: Iterable[str]) -> str:
        """The member's most preferred protocol among ``candidates``."""
        allowed = set(candidates)
        for name, _ in self.protocols:
            if name in allowed:
                return name
        raise CoordinatorStateError(f"Member {self.member_id} supports none of the candidates")
