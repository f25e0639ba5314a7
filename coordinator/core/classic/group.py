"""A classic group: the soft state of Kafka's ClassicGroup / GroupMetadata (its members:
``group_member.py``).

Parked JoinGroup / SyncGroup requests are data here: a member awaiting a join or sync answer
holds the runtime's reply token, and completing it appends a ``Reply`` to the call's effects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from coordinator.core.classic.group_member import Member, Protocols
from coordinator.core.classic.state import (
    COMPLETING_REBALANCE,
    EMPTY,
    STABLE,
    GroupState,
    assert_valid_transition,
    can_rebalance,
)
from coordinator.core.errors import CoordinatorStateError
from coordinator.core.messages import (
    JoinGroupResponse,
    JoinGroupResponseMember,
    SyncGroupResponse,
    join_group_error,
    sync_group_error,
)
from coordinator.core.result import Effects, ReplyToken
from coordinator.core.timers import HeartbeatTimerKey
from storage.records import GroupMetadataValue, MemberMetadata
from wire.constants import ErrorCode
from wire.consumer_protocol import CONSUMER_PROTOCOL_TYPE, subscription_topics

__all__ = ["ClassicGroup"]


class ClassicGroup:
    """A classic-protocol group: state machine, members, pending members and bookkeeping."""

    __slots__ = (
        "current_state_timestamp",
        "generation_id",
        "group_id",
        "initial_delay",
        "join_deadline",
        "leader_id",
        "members",
        "new_member_added",
        "num_awaiting_join",
        "pending_members",
        "pending_sync_members",
        "previous_state",
        "protocol_name",
        "protocol_type",
        "state",
        "static_members",
        "subscribed_topics",
        "supported_protocols",
        "sync_deadline",
        "sync_generation",
    )

    def __init__(self, group_id: str, state: GroupState, now_ms: int | None) -> None:
        self.group_id = group_id
        self.state = state
        self.previous_state: GroupState | None = None
        self.current_state_timestamp = now_ms
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.generation_id = 0
        self.leader_id: str | None = None
        self.members: dict[str, Member] = {}
        self.static_members: dict[str, str] = {}
        # Pending (MEMBER_ID_REQUIRED) member ids -> the deadline of their expiry timer.
        self.pending_members: dict[str, int] = {}
        self.pending_sync_members: set[str] = set()
        self.num_awaiting_join = 0
        self.supported_protocols: dict[str, int] = {}
        self.subscribed_topics: frozenset[str] | None = None
        self.new_member_added = False
        # (delay_ms, remaining_ms) while the initial rebalance delay is armed, else None.
        self.initial_delay: tuple[int, int] | None = None
        self.join_deadline = -1
        self.sync_deadline = -1
        self.sync_generation = -1

    # ------------------------------------------------------------------ queries

    def is_leader(self, member_id: str) -> bool:
        """Whether ``member_id`` leads the group."""
        return self.leader_id == member_id

    @property
    def size(self) -> int:
        """Number of members (pending members excluded)."""
        return len(self.members)

    def can_rebalance(self) -> bool:
        """Whether a rebalance may start from the current state."""
        return can_rebalance(self.state)

    def has_all_members_joined(self) -> bool:
        """Every member has a parked JoinGroup and no pending member is outstanding."""
        return len(self.members) == self.num_awaiting_join and not self.pending_members

    def has_received_sync_from_all_members(self) -> bool:
        """No member is still expected to send SyncGroup."""
        return not self.pending_sync_members

    @property
    def rebalance_timeout_ms(self) -> int:
        """The group's rebalance timeout: the largest of its members' (0 when empty)."""
        timeout = 0
        for member in self.members.values():
            if member.rebalance_timeout_ms > timeout:
                timeout = member.rebalance_timeout_ms
        return timeout

    def not_yet_rejoined(self) -> list[Member]:
        """Members without a parked JoinGroup."""
        return [m for m in self.members.values() if m.join_token is None]

    def is_consumer_group(self) -> bool:
        """Whether the group uses the ``consumer`` protocol type."""
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE

    def is_subscribed_to_topic(self, topic: str) -> bool:
        """Whether the group consumes ``topic``; unknown subscriptions count as subscribed."""
        return self.subscribed_topics is None or topic in self.subscribed_topics

    # ------------------------------------------------------------------ protocols

    def supports_protocols(self, protocol_type: str, protocol_names: Iterable[str]) -> bool:
        """Kafka's supportsProtocols: Empty needs a type and a protocol; otherwise the type must
        match and at least one protocol must be supported by every member."""
        names = set(protocol_names)
        if self.state is EMPTY:
            return protocol_type != "" and bool(names)
        size = len(self.members)
        return self.protocol_type == protocol_type and any(
            self.supported_protocols.get(name, 0) == size for name in names
        )

    def candidate_protocols(self) -> list[str]:
        """Protocols every member supports."""
        size = len(self.members)
        return [name for name, count in self.supported_protocols.items() if count == size]

    def select_protocol(self) -> str:
        """Kafka's vote: each member votes for its first candidate; most votes wins (ties go to
        the protocol voted for first, to stay deterministic)."""
        if not self.members:
            raise CoordinatorStateError("Cannot select protocol for empty group")
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for member in self.members.values():
            choice = member.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        best = ""
        best_votes = -1
        for name, count in votes.items():
            if count > best_votes:
                best, best_votes = name, count
        return best

    def _inc_protocols(self, member: Member) -> None:
        counts = self.supported_protocols
        for name in {name for name, _ in member.protocols}:
            counts[name] = counts.get(name, 0) + 1

    def _dec_protocols(self, member: Member) -> None:
        counts = self.supported_protocols
        for name in {name for name, _ in member.protocols}:
            left = counts.get(name, 0) - 1
            if left > 0:
                counts[name] = left
            else:
                counts.pop(name, None)

    # ------------------------------------------------------------------ membership

    def add(self, member: Member, join_token: ReplyToken | None) -> None:
        """Add a member (Kafka's GroupMetadata.add), parking its JoinGroup if a token is given."""
        instance_id = member.group_instance_id
        if instance_id is not None:
            if instance_id in self.static_members:
                raise CoordinatorStateError(
                    f"Static member with groupInstanceId={instance_id} cannot be added to group "
                    f"{self.group_id} since it is already a member"
                )
            self.static_members[instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.protocol_type != member.protocol_type:
            raise CoordinatorStateError("The group and member's protocol type must be the same")
        if not self.supports_protocols(member.protocol_type, (n for n, _ in member.protocols)):
            raise CoordinatorStateError("None of the member's protocols can be supported")
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self._inc_protocols(member)
        member.join_token = join_token
        if join_token is not None:
            self.num_awaiting_join += 1
        self.pending_members.pop(member.member_id, None)

    def remove(self, member_id: str) -> Member | None:
        """Remove a member or pending member id; a departing leader is replaced by the first
        remaining member. Parked tokens are the caller's to answer first."""
        member = self.members.pop(member_id, None)
        if member is not None:
            self._dec_protocols(member)
            if member.join_token is not None:
                self.num_awaiting_join -= 1
            if member.group_instance_id is not None:
                self.static_members.pop(member.group_instance_id, None)
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        self.pending_members.pop(member_id, None)
        self.pending_sync_members.discard(member_id)
        return member

    def update_member(
        self,
        member: Member,
        protocols: Protocols,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        join_token: ReplyToken | None,
    ) -> None:
        """Replace a member's protocols and timeouts and (re)park its JoinGroup."""
        self._dec_protocols(member)
        member.protocols = protocols
        self._inc_protocols(member)
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        if join_token is not None and member.join_token is None:
            self.num_awaiting_join += 1
        elif join_token is None and member.join_token is not None:
            self.num_awaiting_join -= 1
        member.join_token = join_token

    def add_pending_member(self, member_id: str, deadline_ms: int) -> None:
        """Register a MEMBER_ID_REQUIRED member id (KIP-394)."""
        if member_id in self.members:
            raise CoordinatorStateError(
                f"Attempt to add pending member {member_id} which is already a stable member"
            )
        self.pending_members[member_id] = deadline_ms

    def replace_static_member(
        self, instance_id: str, old_member_id: str, new_member_id: str, fx: Effects
    ) -> Member:
        """Give a static member a new member id, fencing the old id's parked Join/Sync."""
        member = self.members.pop(old_member_id, None)
        if member is None:
            raise CoordinatorStateError(f"Cannot replace non-existing member id {old_member_id}")
        fenced = ErrorCode.FENCED_INSTANCE_ID
        self.complete_join(member, join_group_error(fenced, old_member_id), fx)
        self.complete_sync(member, sync_group_error(fenced), fx)
        member.member_id = new_member_id
        member.heartbeat_key = HeartbeatTimerKey(self.group_id, new_member_id)
        member.heartbeat_deadline = -1
        self.members[new_member_id] = member
        if self.leader_id == old_member_id:
            self.leader_id = new_member_id
        self.static_members[instance_id] = new_member_id
        # Kafka leaves the old id in pendingSyncMembers; mirrored on purpose.
        return member

    def maybe_elect_new_joined_leader(self) -> bool:
        """Keep the leader if it rejoined, else elect a rejoined member; False if none did."""
        if self.leader_id is None:
            return False
        leader = self.members[self.leader_id]
        if leader.join_token is not None:
            return True
        for member_id, member in self.members.items():
            if member.join_token is not None:
                self.leader_id = member_id
                return True
        return False

    # ------------------------------------------------------------------ parked replies

    def complete_join(self, member: Member, response: JoinGroupResponse, fx: Effects) -> bool:
        """Answer the member's parked JoinGroup, if any."""
        token = member.join_token
        if token is None:
            return False
        member.join_token = None
        self.num_awaiting_join -= 1
        fx.reply(token, response)
        return True

    def complete_sync(self, member: Member, response: SyncGroupResponse, fx: Effects) -> bool:
        """Answer the member's parked SyncGroup, if any."""
        token = member.sync_token
        if token is None:
            return False
        member.sync_token = None
        fx.reply(token, response)
        return True

    # ------------------------------------------------------------------ state

    def transition_to(self, target: GroupState, now_ms: int) -> None:
        """Move to ``target``, asserting the transition is legal; stamps the state time."""
        assert_valid_transition(self.group_id, self.state, target)
        self.previous_state = self.state
        self.state = target
        self.current_state_timestamp = now_ms

    def init_next_generation(self, now_ms: int) -> None:
        """Bump the generation: CompletingRebalance with a voted protocol, or Empty."""
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(COMPLETING_REBALANCE, now_ms)
        else:
            self.protocol_name = None
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(EMPTY, now_ms)
        self.pending_sync_members.clear()

    def compute_subscribed_topics(self) -> frozenset[str] | None:
        """Union of the members' subscribed topics for consumer groups; None when unknown."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return frozenset()
        if self.protocol_name is None:
            return None
        topics: set[str] = set()
        for member in self.members.values():
            try:
                parsed = subscription_topics(member.metadata(self.protocol_name))
            except CoordinatorStateError:
                return None
            if parsed is None:
                return None
            topics |= parsed
        return frozenset(topics)

    def current_member_metadata(self) -> tuple[JoinGroupResponseMember, ...]:
        """The member list a leader receives, with metadata for the selected protocol."""
        protocol = self.protocol_name
        if protocol is None or self.state not in (COMPLETING_REBALANCE, STABLE, EMPTY):
            raise CoordinatorStateError(
                f"Cannot obtain member metadata for group in state {self.state.value}"
            )
        return tuple(
            JoinGroupResponseMember(
                member_id=member_id,
                group_instance_id=member.group_instance_id,
                metadata=member.metadata(protocol),
            )
            for member_id, member in self.members.items()
        )

    def join_response(
        self,
        member_id: str,
        *,
        leader: str | None,
        members: tuple[JoinGroupResponseMember, ...] = (),
        skip_assignment: bool = False,
        error_code: int = ErrorCode.NONE,
    ) -> JoinGroupResponse:
        """A JoinGroup answer carrying the group's current generation and protocol."""
        return {
            "error_code": error_code,
            "generation_id": self.generation_id,
            "protocol_type": self.protocol_type,
            "protocol_name": self.protocol_name,
            "leader": leader or "",
            "skip_assignment": skip_assignment,
            "member_id": member_id,
            "members": members,
        }

    def group_assignment(self) -> dict[str, bytes]:
        """Every member's current assignment."""
        return {member_id: m.assignment for member_id, m in self.members.items()}

    # ------------------------------------------------------------------ persistence

    def to_record_value(self, assignment: Mapping[str, bytes]) -> GroupMetadataValue:
        """The GroupMetadataValue Kafka's storeGroup writes for this group and assignment."""
        protocol = self.protocol_name
        members = tuple(
            MemberMetadata(
                member_id=member_id,
                group_instance_id=member.group_instance_id,
                client_id=member.client_id,
                client_host=member.client_host,
                rebalance_timeout=member.rebalance_timeout_ms,
                session_timeout=member.session_timeout_ms,
                subscription=member.metadata(protocol) if protocol is not None else b"",
                assignment=assignment.get(member_id, b""),
            )
            for member_id, member in self.members.items()
        )
        timestamp = self.current_state_timestamp
        return GroupMetadataValue(
            protocol_type=self.protocol_type or "",
            generation=self.generation_id,
            protocol=protocol,
            leader=self.leader_id,
            current_state_timestamp=-1 if timestamp is None else timestamp,
            members=members,
        )

    @classmethod
    def from_record(cls, group_id: str, value: GroupMetadataValue) -> ClassicGroup:
        """Load a group as Kafka does: Stable with its members, or Empty without any."""
        group = cls(
            group_id,
            STABLE if value.members else EMPTY,
            None if value.current_state_timestamp == -1 else value.current_state_timestamp,
        )
        group.generation_id = value.generation
        group.protocol_type = value.protocol_type or None
        group.protocol_name = value.protocol
        group.leader_id = value.leader
        protocol = value.protocol or ""
        for m in value.members:
            member = Member(
                group_id,
                m.member_id,
                m.group_instance_id,
                m.client_id,
                m.client_host,
                # GroupMetadataValue v0 had no rebalance timeout: Kafka uses the session timeout.
                m.session_timeout if m.rebalance_timeout == -1 else m.rebalance_timeout,
                m.session_timeout,
                value.protocol_type,
                ((protocol, m.subscription),),
                m.assignment,
            )
            if m.group_instance_id is not None:
                group.static_members[m.group_instance_id] = m.member_id
            group.members[m.member_id] = member
            group._inc_protocols(member)
        if group.leader_id is not None and group.leader_id not in group.members:
            group.leader_id = next(iter(group.members), None)
        group.subscribed_topics = group.compute_subscribed_topics()
        return group
