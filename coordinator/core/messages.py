"""Typed, version-agnostic inputs and outputs of the coordinator core.

Field names follow Kafka's message schemas in snake_case. ``api_version`` is carried where
the coordinator's behaviour depends on it; everything else about versions (which fields exist
on the wire) is the codec's business. Pair-like request items are NamedTuples, so a plain
``(name, metadata)`` tuple is accepted wherever one is expected.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

__all__ = [
    "NO_AUTHORIZED_OPERATIONS",
    "DeletableGroupResult",
    "DeleteGroupsRequest",
    "DeleteGroupsResponse",
    "DescribeGroupsRequest",
    "DescribeGroupsResponse",
    "DescribedGroup",
    "DescribedGroupMember",
    "HeartbeatRequest",
    "HeartbeatResponse",
    "JoinGroupRequest",
    "JoinGroupRequestProtocol",
    "JoinGroupResponse",
    "JoinGroupResponseMember",
    "LeaveGroupRequest",
    "LeaveGroupResponse",
    "ListGroupsRequest",
    "ListGroupsResponse",
    "ListedGroup",
    "MemberIdentity",
    "MemberResponse",
    "OffsetCommitRequest",
    "OffsetCommitRequestPartition",
    "OffsetCommitRequestTopic",
    "OffsetCommitResponse",
    "OffsetCommitResponsePartition",
    "OffsetCommitResponseTopic",
    "OffsetDeleteRequest",
    "OffsetDeleteRequestTopic",
    "OffsetDeleteResponse",
    "OffsetDeleteResponsePartition",
    "OffsetDeleteResponseTopic",
    "OffsetFetchRequest",
    "OffsetFetchRequestGroup",
    "OffsetFetchRequestTopic",
    "OffsetFetchResponse",
    "OffsetFetchResponseGroup",
    "OffsetFetchResponsePartition",
    "OffsetFetchResponseTopic",
    "Response",
    "SyncGroupRequest",
    "SyncGroupRequestAssignment",
    "SyncGroupResponse",
]

# DescribeGroups' AuthorizedOperations when they were not requested (Integer.MIN_VALUE).
NO_AUTHORIZED_OPERATIONS = -(2**31)


# --------------------------------------------------------------------------- JoinGroup (11)


class JoinGroupRequestProtocol(NamedTuple):
    """One protocol a joining member supports (listed in preference order) and its metadata."""

    name: str
    metadata: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinGroupRequest:
    """JoinGroup v0-9; v0 has no rebalance timeout (the session timeout is used instead)."""

    api_version: int
    group_id: str
    session_timeout_ms: int
    rebalance_timeout_ms: int = -1
    member_id: str = ""
    group_instance_id: str | None = None
    protocol_type: str = ""
    protocols: Sequence[tuple[str, bytes]] = ()  # JoinGroupRequestProtocol or plain pairs
    client_id: str = ""
    client_host: str = ""
    reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinGroupResponseMember:
    """A member as shown to the leader: its id, instance id and metadata for the chosen protocol."""

    member_id: str
    group_instance_id: str | None
    metadata: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinGroupResponse:
    """JoinGroup answer; errors carry generation -1, leader "" and no protocol type/name."""

    error_code: int
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    skip_assignment: bool = False
    member_id: str = ""
    members: tuple[JoinGroupResponseMember, ...] = ()


# --------------------------------------------------------------------------- SyncGroup (14)


class SyncGroupRequestAssignment(NamedTuple):
    """The leader's assignment for one member."""

    member_id: str
    assignment: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncGroupRequest:
    """SyncGroup v0-5; protocol_type/protocol_name are None before v5 (KIP-559)."""

    api_version: int
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignments: Sequence[tuple[str, bytes]] = ()  # SyncGroupRequestAssignment or pairs


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncGroupResponse:
    """SyncGroup answer: the member's assignment (empty bytes on error)."""

    error_code: int
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


# --------------------------------------------------------------------------- Heartbeat (12)


@dataclass(frozen=True, slots=True, kw_only=True)
class HeartbeatRequest:
    """Heartbeat v0-4 (group_instance_id from v3)."""

    api_version: int
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HeartbeatResponse:
    """Heartbeat answer."""

    error_code: int


# --------------------------------------------------------------------------- LeaveGroup (13)


class MemberIdentity(NamedTuple):
    """One leaving member (LeaveGroup v3+); member_id "" + instance id removes by instance id."""

    member_id: str
    group_instance_id: str | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaveGroupRequest:
    """LeaveGroup: v0-2 name one ``member_id``; v3+ carry a batch in ``members``."""

    api_version: int
    group_id: str
    member_id: str = ""
    members: Sequence[MemberIdentity] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class MemberResponse:
    """Per-member LeaveGroup outcome (v3+)."""

    member_id: str
    group_instance_id: str | None
    error_code: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LeaveGroupResponse:
    """LeaveGroup answer; for v0-2 the single member's error is copied to ``error_code``."""

    error_code: int
    members: tuple[MemberResponse, ...] = ()


# --------------------------------------------------------------------------- OffsetCommit (8)


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetCommitRequestPartition:
    """One partition's committed offset; commit_timestamp only exists in v1."""

    partition_index: int
    committed_offset: int
    committed_leader_epoch: int = -1
    commit_timestamp: int = -1
    committed_metadata: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetCommitRequestTopic:
    """A topic (by name; the server resolves v10 topic ids) and its partitions."""

    name: str
    partitions: Sequence[OffsetCommitRequestPartition] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetCommitRequest:
    """OffsetCommit; generation_id is -1 for simple (non-member) commits; retention only v2-4."""

    api_version: int
    group_id: str
    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None
    retention_time_ms: int = -1
    topics: Sequence[OffsetCommitRequestTopic] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetCommitResponsePartition:
    """Per-partition commit outcome."""

    partition_index: int
    error_code: int


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetCommitResponseTopic:
    """Per-topic commit outcomes, in request order."""

    name: str
    partitions: tuple[OffsetCommitResponsePartition, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetCommitResponse:
    """OffsetCommit answer."""

    topics: tuple[OffsetCommitResponseTopic, ...]


# --------------------------------------------------------------------------- OffsetFetch (9)


class OffsetFetchRequestTopic(NamedTuple):
    """A topic and the partitions whose committed offsets are wanted."""

    name: str
    partition_indexes: Sequence[int]


class OffsetFetchRequestGroup(NamedTuple):
    """One group of an OffsetFetch; ``topics`` None means every committed partition (v2+)."""

    group_id: str
    topics: Sequence[OffsetFetchRequestTopic] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetFetchRequest:
    """OffsetFetch; before v8 ``groups`` has exactly one entry; require_stable from v7."""

    api_version: int
    groups: Sequence[tuple[str, Sequence[tuple[str, Sequence[int]]] | None]]  # or the NamedTuple
    require_stable: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetFetchResponsePartition:
    """A committed offset, or -1 / "" when nothing is committed."""

    partition_index: int
    committed_offset: int
    committed_leader_epoch: int
    metadata: str
    error_code: int


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetFetchResponseTopic:
    """Committed offsets of one topic."""

    name: str
    partitions: tuple[OffsetFetchResponsePartition, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetFetchResponseGroup:
    """Committed offsets of one group, with its group-level error."""

    group_id: str
    error_code: int
    topics: tuple[OffsetFetchResponseTopic, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetFetchResponse:
    """OffsetFetch answer; ``error_code`` is the single group's error (top-level in v2-7)."""

    error_code: int
    groups: tuple[OffsetFetchResponseGroup, ...]


# --------------------------------------------------------------------------- DescribeGroups (15)


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeGroupsRequest:
    """DescribeGroups v0-6."""

    api_version: int
    groups: Sequence[str]
    include_authorized_operations: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribedGroupMember:
    """A member; metadata and assignment are only filled in when the group is Stable."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    member_metadata: bytes
    member_assignment: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribedGroup:
    """One described group; protocol_data is the protocol name when Stable, else ""."""

    error_code: int
    group_id: str
    group_state: str
    protocol_type: str
    protocol_data: str
    members: tuple[DescribedGroupMember, ...] = ()
    authorized_operations: int = NO_AUTHORIZED_OPERATIONS


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeGroupsResponse:
    """DescribeGroups answer, one entry per requested group in request order."""

    groups: tuple[DescribedGroup, ...]


# --------------------------------------------------------------------------- ListGroups (16)


@dataclass(frozen=True, slots=True, kw_only=True)
class ListGroupsRequest:
    """ListGroups; states_filter from v4 (case-insensitive), types_filter from v5."""

    api_version: int
    states_filter: Sequence[str] = ()
    types_filter: Sequence[str] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ListedGroup:
    """One listed group; every group of this coordinator is of type "classic"."""

    group_id: str
    protocol_type: str
    group_state: str
    group_type: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ListGroupsResponse:
    """ListGroups answer."""

    error_code: int
    groups: tuple[ListedGroup, ...]


# --------------------------------------------------------------------------- DeleteGroups (42)


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteGroupsRequest:
    """DeleteGroups v0-2."""

    api_version: int
    groups_names: Sequence[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class DeletableGroupResult:
    """One group's deletion outcome."""

    group_id: str
    error_code: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteGroupsResponse:
    """DeleteGroups answer, in request order."""

    results: tuple[DeletableGroupResult, ...]


# --------------------------------------------------------------------------- OffsetDelete (47)


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetDeleteRequestTopic:
    """A topic and the partitions whose offsets should be deleted."""

    name: str
    partitions: Sequence[int] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetDeleteRequest:
    """OffsetDelete v0 (KIP-496)."""

    api_version: int
    group_id: str
    topics: Sequence[OffsetDeleteRequestTopic] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetDeleteResponsePartition:
    """Per-partition deletion outcome."""

    partition_index: int
    error_code: int


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetDeleteResponseTopic:
    """Per-topic deletion outcomes."""

    name: str
    partitions: tuple[OffsetDeleteResponsePartition, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class OffsetDeleteResponse:
    """OffsetDelete answer; a group-level error leaves ``topics`` empty."""

    error_code: int
    topics: tuple[OffsetDeleteResponseTopic, ...] = ()


Response = (
    JoinGroupResponse
    | SyncGroupResponse
    | HeartbeatResponse
    | LeaveGroupResponse
    | OffsetCommitResponse
    | OffsetFetchResponse
    | DescribeGroupsResponse
    | ListGroupsResponse
    | DeleteGroupsResponse
    | OffsetDeleteResponse
)
