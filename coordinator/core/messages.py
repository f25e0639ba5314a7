"""The group APIs as the core reads and writes them: typed views of the wire's messages.

A request is the decoded wire message itself (``wire`` decodes a dict holding every field
of the API, absent ones at their defaults), read through a ``TypedDict`` that names only
the fields the core uses. A response is a plain dict the wire encodes as is (fields left
out take the schema's defaults). A field is named once in ``wire/apis/`` and once here, and
nothing translates; ``tests/coordinator/test_messages.py`` checks every name against wire.

Version quirks are the core's business where behaviour depends on them (it reads
``RequestContext.api_version``); the broker's few around the core (topic ids, OffsetFetch's
single-group shape before v8) live in their route files (``coordinator/server/apis/``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NotRequired, Protocol, TypedDict

from coordinator.core.consumer.messages import (
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeatResponse,
)

__all__ = [
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
    "LeaveGroupResponseMember",
    "ListGroupsRequest",
    "ListGroupsResponse",
    "ListedGroup",
    "LocalContext",
    "MemberIdentity",
    "OffsetCommitRequest",
    "OffsetCommitRequestPartition",
    "OffsetCommitRequestTopic",
    "OffsetCommitResponse",
    "OffsetCommitResponsePartition",
    "OffsetCommitResponseTopic",
    "OffsetDeleteRequest",
    "OffsetDeleteRequestPartition",
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
    "RequestContext",
    "Response",
    "SyncGroupRequest",
    "SyncGroupRequestAssignment",
    "SyncGroupResponse",
    "join_group_error",
    "sync_group_error",
]


class RequestContext(Protocol):
    """Who sent a request and at which version (the server's ``RequestContext`` fits)."""

    @property
    def api_version(self) -> int:
        """The request's version."""

    @property
    def client_id(self) -> str | None:
        """The request header's client id."""

    @property
    def client_host(self) -> str:
        """The client's address as Kafka shows it (``InetAddress.toString``: "/127.0.0.1")."""


@dataclass(frozen=True, slots=True)
class LocalContext:
    """A RequestContext for requests that do not come off the wire (tests, the control API)."""

    api_version: int
    client_id: str | None = None
    client_host: str = ""


# --------------------------------------------------------------------------- JoinGroup (11)


class JoinGroupRequestProtocol(TypedDict):
    """One protocol a joining member supports (in preference order) and its metadata."""

    name: str
    metadata: bytes


class JoinGroupRequest(TypedDict):
    """JoinGroup v0-9; ``rebalance_timeout_ms`` is -1 in v0 (the session timeout stands in)."""

    group_id: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    member_id: str
    group_instance_id: str | None
    protocol_type: str
    protocols: Sequence[JoinGroupRequestProtocol]
    reason: str | None


class JoinGroupResponseMember(TypedDict):
    """A member as the leader sees it: id, instance id, metadata for the chosen protocol."""

    member_id: str
    group_instance_id: str | None
    metadata: bytes


class JoinGroupResponse(TypedDict):
    """JoinGroup answer; errors carry generation -1, leader "" and no protocol."""

    error_code: int
    generation_id: int
    protocol_type: str | None
    protocol_name: str | None
    leader: str
    skip_assignment: bool
    member_id: str
    members: Sequence[JoinGroupResponseMember]


# --------------------------------------------------------------------------- SyncGroup (14)


class SyncGroupRequestAssignment(TypedDict):
    """The leader's assignment for one member."""

    member_id: str
    assignment: bytes


class SyncGroupRequest(TypedDict):
    """SyncGroup v0-5; protocol type and name are None before v5 (KIP-559)."""

    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None
    protocol_type: str | None
    protocol_name: str | None
    assignments: Sequence[SyncGroupRequestAssignment]


class SyncGroupResponse(TypedDict):
    """SyncGroup answer: the member's assignment (empty on error)."""

    error_code: int
    protocol_type: str | None
    protocol_name: str | None
    assignment: bytes


# --------------------------------------------------------------------------- Heartbeat (12)


class HeartbeatRequest(TypedDict):
    """Heartbeat v0-4 (group_instance_id from v3)."""

    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None


class HeartbeatResponse(TypedDict):
    """Heartbeat answer."""

    error_code: int


# --------------------------------------------------------------------------- LeaveGroup (13)


class MemberIdentity(TypedDict):
    """One leaving member (v3+); member_id "" with an instance id removes by instance id."""

    member_id: str
    group_instance_id: str | None
    reason: str | None


class LeaveGroupRequest(TypedDict):
    """LeaveGroup: v0-2 name one ``member_id``; v3+ carry a batch in ``members``."""

    group_id: str
    member_id: str
    members: Sequence[MemberIdentity]


class LeaveGroupResponseMember(TypedDict):
    """Per-member outcome (v3+)."""

    member_id: str
    group_instance_id: str | None
    error_code: int


class LeaveGroupResponse(TypedDict):
    """LeaveGroup answer; for v0-2 the single member's error is the top-level one."""

    error_code: int
    members: Sequence[LeaveGroupResponseMember]


# --------------------------------------------------------------------------- OffsetCommit (8)


class OffsetCommitRequestPartition(TypedDict):
    """One partition's offset; commit_timestamp exists in v1 only (-1 otherwise)."""

    partition_index: int
    committed_offset: int
    committed_leader_epoch: int
    commit_timestamp: int
    committed_metadata: str | None


class OffsetCommitRequestTopic(TypedDict):
    """A topic by name (the broker resolves v10's topic ids first) and its partitions."""

    name: str
    partitions: Sequence[OffsetCommitRequestPartition]


class OffsetCommitRequest(TypedDict):
    """OffsetCommit; generation -1 for simple commits; retention_time_ms only in v2-4."""

    group_id: str
    generation_id_or_member_epoch: int
    member_id: str
    group_instance_id: str | None
    retention_time_ms: int
    topics: Sequence[OffsetCommitRequestTopic]


class OffsetCommitResponsePartition(TypedDict):
    """Per-partition outcome."""

    partition_index: int
    error_code: int


class OffsetCommitResponseTopic(TypedDict):
    """Per-topic outcomes, in request order (the broker adds v10's topic id)."""

    name: str
    partitions: Sequence[OffsetCommitResponsePartition]


class OffsetCommitResponse(TypedDict):
    """OffsetCommit answer."""

    topics: Sequence[OffsetCommitResponseTopic]


# --------------------------------------------------------------------------- OffsetFetch (9)


class OffsetFetchRequestTopic(TypedDict):
    """A topic and the partitions whose committed offsets are wanted."""

    name: str
    partition_indexes: Sequence[int]


class OffsetFetchRequestGroup(TypedDict):
    """One group (v8+ shape; the broker wraps v0-7's single group in it); topics None means
    every committed partition."""

    group_id: str
    topics: Sequence[OffsetFetchRequestTopic] | None


class OffsetFetchRequest(TypedDict):
    """OffsetFetch in its v8+ shape: several groups; require_stable from v7."""

    groups: Sequence[OffsetFetchRequestGroup]
    require_stable: bool


class OffsetFetchResponsePartition(TypedDict):
    """A committed offset, or -1 / "" when nothing is committed."""

    partition_index: int
    committed_offset: int
    committed_leader_epoch: int
    metadata: str | None
    error_code: int


class OffsetFetchResponseTopic(TypedDict):
    """Committed offsets of one topic."""

    name: str
    partitions: Sequence[OffsetFetchResponsePartition]


class OffsetFetchResponseGroup(TypedDict):
    """Committed offsets of one group, with its group-level error."""

    group_id: str
    error_code: int
    topics: Sequence[OffsetFetchResponseTopic]


class OffsetFetchResponse(TypedDict):
    """OffsetFetch answer in its v8+ shape."""

    groups: Sequence[OffsetFetchResponseGroup]


# --------------------------------------------------------------------------- DescribeGroups (15)


class DescribeGroupsRequest(TypedDict):
    """DescribeGroups v0-6."""

    groups: Sequence[str]


class DescribedGroupMember(TypedDict):
    """A member; metadata and assignment are only filled in when the group is Stable."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    member_metadata: bytes
    member_assignment: bytes


class DescribedGroup(TypedDict):
    """One described group; protocol_data is the protocol name when Stable, else ""."""

    error_code: int
    error_message: str | None
    group_id: str
    group_state: str
    protocol_type: str
    protocol_data: str
    members: Sequence[DescribedGroupMember]
    authorized_operations: NotRequired[int]  # the broker's (an authorizer's) business


class DescribeGroupsResponse(TypedDict):
    """DescribeGroups answer, one entry per requested group in request order."""

    groups: Sequence[DescribedGroup]


# --------------------------------------------------------------------------- ListGroups (16)


class ListGroupsRequest(TypedDict):
    """ListGroups; states_filter from v4 (case-insensitive), types_filter from v5."""

    states_filter: Sequence[str]
    types_filter: Sequence[str]


class ListedGroup(TypedDict):
    """One listed group; every group of this coordinator is of type "classic"."""

    group_id: str
    protocol_type: str
    group_state: str
    group_type: str


class ListGroupsResponse(TypedDict):
    """ListGroups answer."""

    error_code: int
    groups: Sequence[ListedGroup]


# --------------------------------------------------------------------------- DeleteGroups (42)


class DeleteGroupsRequest(TypedDict):
    """DeleteGroups v0-2."""

    groups_names: Sequence[str]


class DeletableGroupResult(TypedDict):
    """One group's deletion outcome."""

    group_id: str
    error_code: int


class DeleteGroupsResponse(TypedDict):
    """DeleteGroups answer, in request order."""

    results: Sequence[DeletableGroupResult]


# --------------------------------------------------------------------------- OffsetDelete (47)


class OffsetDeleteRequestPartition(TypedDict):
    """A partition whose committed offset should be deleted."""

    partition_index: int


class OffsetDeleteRequestTopic(TypedDict):
    """A topic and its partitions."""

    name: str
    partitions: Sequence[OffsetDeleteRequestPartition]


class OffsetDeleteRequest(TypedDict):
    """OffsetDelete v0 (KIP-496)."""

    group_id: str
    topics: Sequence[OffsetDeleteRequestTopic]


class OffsetDeleteResponsePartition(TypedDict):
    """Per-partition outcome."""

    partition_index: int
    error_code: int


class OffsetDeleteResponseTopic(TypedDict):
    """Per-topic outcomes."""

    name: str
    partitions: Sequence[OffsetDeleteResponsePartition]


class OffsetDeleteResponse(TypedDict):
    """OffsetDelete answer; a group-level error leaves ``topics`` empty."""

    error_code: int
    topics: Sequence[OffsetDeleteResponseTopic]


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
    | ConsumerGroupHeartbeatResponse
    | ConsumerGroupDescribeResponse
)


def join_group_error(error: int, member_id: str = "") -> JoinGroupResponse:
    """A JoinGroup error answer (Kafka's JoinGroupResult for an error): generation -1,
    leader "", no protocol."""
    return {
        "error_code": error,
        "generation_id": -1,
        "protocol_type": None,
        "protocol_name": None,
        "leader": "",
        "skip_assignment": False,
        "member_id": member_id,
        "members": (),
    }


def sync_group_error(error: int) -> SyncGroupResponse:
    """A SyncGroup error answer: no protocol, empty assignment."""
    return {"error_code": error, "protocol_type": None, "protocol_name": None, "assignment": b""}
