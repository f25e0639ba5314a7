"""The coordinator test harness: ``Harness`` sends each request the way Kafka's
GroupCoordinatorTest and GroupMetadataManagerTestContext helpers do (joinGroup, syncGroup,
heartbeat, leaveGroup, offset commit/fetch/delete, admin calls, composite setups) on top of
``harness_core.CoordinatorDriver`` (fake clock, appends, timers, replies), and re-exports the
values of Kafka's tests from ``harness_core`` so tests import everything from here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness_core import (
    DEFAULT_REBALANCE_TIMEOUT,
    DEFAULT_SESSION_TIMEOUT,
    FOLLOWER_INSTANCE_ID,
    GROUP_ID,
    GROUP_INITIAL_REBALANCE_DELAY,
    GROUP_INSTANCE_ID,
    GROUP_MAX_SESSION_TIMEOUT,
    GROUP_MAX_SIZE,
    GROUP_MIN_SESSION_TIMEOUT,
    INVALID_MEMBER_ID,
    KAFKA_TEST_CONFIG,
    LEADER_INSTANCE_ID,
    MEMBER_ID,
    METADATA,
    PROTOCOL_NAME,
    PROTOCOL_SUPERSET,
    PROTOCOL_TYPE,
    PROTOCOLS,
    UNKNOWN_MEMBER_ID,
    Answer,
    CoordinatorDriver,
    Offsets,
    RebalanceResult,
    Token,
    answer,
    ctx,
    identity,
    partition,
)

from coordinator.core import (
    DeleteGroupsRequest,
    DescribeGroupsRequest,
    ErrorCode,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    ListGroupsRequest,
    MemberIdentity,
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetDeleteRequest,
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    SyncGroupRequest,
)
from coordinator.core.classic.group import ClassicGroup
from coordinator.core.classic.heartbeat import handle_heartbeat
from coordinator.core.classic.join import handle_join_group
from coordinator.core.classic.leave import handle_leave_group
from coordinator.core.classic.sync import handle_sync_group
from coordinator.core.delete_groups import handle_delete_groups
from coordinator.core.describe_groups import handle_describe_groups
from coordinator.core.list_groups import handle_list_groups
from coordinator.core.offset_commit import handle_offset_commit
from coordinator.core.offset_delete import handle_offset_delete
from coordinator.core.offset_fetch import handle_offset_fetch

__all__ = [
    "DEFAULT_REBALANCE_TIMEOUT",
    "DEFAULT_SESSION_TIMEOUT",
    "FOLLOWER_INSTANCE_ID",
    "GROUP_ID",
    "GROUP_INITIAL_REBALANCE_DELAY",
    "GROUP_INSTANCE_ID",
    "GROUP_MAX_SESSION_TIMEOUT",
    "GROUP_MAX_SIZE",
    "GROUP_MIN_SESSION_TIMEOUT",
    "INVALID_MEMBER_ID",
    "KAFKA_TEST_CONFIG",
    "LEADER_INSTANCE_ID",
    "MEMBER_ID",
    "METADATA",
    "PROTOCOLS",
    "PROTOCOL_NAME",
    "PROTOCOL_SUPERSET",
    "PROTOCOL_TYPE",
    "UNKNOWN_MEMBER_ID",
    "Answer",
    "CoordinatorDriver",
    "Harness",
    "Offsets",
    "RebalanceResult",
    "Token",
    "answer",
    "ctx",
    "identity",
    "partition",
]


class Harness(CoordinatorDriver):
    """Drives one GroupCoordinator with a fake clock, collecting replies and records, and
    sends requests the way Kafka's tests do."""


    def send_join_group(
        self,
        group_id: str,
        member_id: str,
        protocol_type: str,
        protocols: Iterable[tuple[str, bytes]],
        group_instance_id: str | None = None,
        session_timeout: int = DEFAULT_SESSION_TIMEOUT,
        rebalance_timeout: int = DEFAULT_REBALANCE_TIMEOUT,
        require_known_member_id: bool = False,
        support_skipping_assignment: bool = True,
        api_version: int | None = None,
        client_id: str = "clientId",
        reason: str | None = None,
    ) -> Token:
        """Send a JoinGroup at the version matching Kafka's test flags; returns its token."""
        if api_version is None:
            if group_instance_id is not None:
                api_version = 9 if support_skipping_assignment else 8
            else:
                api_version = 9 if require_known_member_id else 3
        token = self.token()
        request: JoinGroupRequest = {
            "group_id": group_id,
            "member_id": member_id,
            "group_instance_id": group_instance_id,
            "session_timeout_ms": session_timeout,
            "rebalance_timeout_ms": rebalance_timeout,
            "protocol_type": protocol_type,
            "protocols": [{"name": name, "metadata": metadata} for name, metadata in protocols],
            "reason": reason,
        }
        self.apply(handle_join_group(self.coordinator, ctx(api_version, client_id), request, token,
                                               self.now))
        return token

    def dynamic_join_group(
        self,
        group_id: str,
        member_id: str,
        protocol_type: str,
        protocols: Iterable[tuple[str, bytes]],
        session_timeout: int = DEFAULT_SESSION_TIMEOUT,
        rebalance_timeout: int = DEFAULT_REBALANCE_TIMEOUT,
    ) -> Any:
        """Kafka's dynamicJoinGroup: a v4+ join that bounces on MEMBER_ID_REQUIRED, then waits
        out the initial rebalance delay."""
        protocols = tuple(protocols)
        token = self.send_join_group(group_id, member_id, protocol_type, protocols, None,
                                     session_timeout, rebalance_timeout, True)
        if member_id == UNKNOWN_MEMBER_ID:
            first: Any = self.reply(token)
            if first.error_code != ErrorCode.MEMBER_ID_REQUIRED:
                return first
            token = self.send_join_group(group_id, first.member_id, protocol_type, protocols,
                                         None, session_timeout, rebalance_timeout, True)
        self.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
        response: Any = self.reply(token)
        return response

    def static_join_group(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str,
        protocol_type: str,
        protocols: Iterable[tuple[str, bytes]],
        clock_advance: int = GROUP_INITIAL_REBALANCE_DELAY + 1,
        session_timeout: int = DEFAULT_SESSION_TIMEOUT,
        rebalance_timeout: int = DEFAULT_REBALANCE_TIMEOUT,
        support_skipping_assignment: bool = True,
    ) -> Any:
        """Kafka's staticJoinGroup: join, advance the clock, expect an answer."""
        token = self.send_join_group(group_id, member_id, protocol_type, protocols,
                                     group_instance_id, session_timeout, rebalance_timeout,
                                     support_skipping_assignment=support_skipping_assignment)
        self.sleep(clock_advance)
        response: Any = self.reply(token)
        return response

    def join_group_partial(
        self,
        group_id: str,
        member_id: str,
        protocol_type: str,
        protocols: Iterable[tuple[str, bytes]],
        session_timeout: int = DEFAULT_SESSION_TIMEOUT,
        rebalance_timeout: int = DEFAULT_REBALANCE_TIMEOUT,
    ) -> Any:
        """Kafka's joinGroupPartial: one v4+ join, answered at once."""
        token = self.send_join_group(group_id, member_id, protocol_type, protocols, None,
                                     session_timeout, rebalance_timeout, True)
        response: Any = self.reply(token)
        return response

    # ------------------------------------------------------------------ SyncGroup

    def send_sync_group(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        assignment: Mapping[str, bytes] | None = None,
        protocol_type: str | None = None,
        protocol_name: str | None = None,
        group_instance_id: str | None = None,
        api_version: int = 5,
    ) -> Token:
        """Send a SyncGroup; returns its token."""
        token = self.token()
        request: SyncGroupRequest = {
            "group_id": group_id,
            "generation_id": generation,
            "member_id": member_id,
            "group_instance_id": group_instance_id,
            "protocol_type": protocol_type,
            "protocol_name": protocol_name,
            "assignments": [{"member_id": m, "assignment": a}
                            for m, a in (assignment or {}).items()],
        }
        self.apply(handle_sync_group(self.coordinator, ctx(api_version), request, token, self.now))
        return token

    def sync_group_leader(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        assignment: Mapping[str, bytes],
        protocol_type: str | None = None,
        protocol_name: str | None = None,
        group_instance_id: str | None = None,
    ) -> Any:
        """A leader's SyncGroup, expected to be answered at once."""
        token = self.send_sync_group(group_id, generation, member_id, assignment, protocol_type,
                                     protocol_name, group_instance_id)
        response: Any = self.reply(token)
        return response

    def sync_group_follower(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        protocol_type: str | None = None,
        protocol_name: str | None = None,
        group_instance_id: str | None = None,
    ) -> Any:
        """A follower's SyncGroup, expected to be answered at once."""
        token = self.send_sync_group(group_id, generation, member_id, None, protocol_type,
                                     protocol_name, group_instance_id)
        response: Any = self.reply(token)
        return response

    # ------------------------------------------------------------------ Heartbeat / Leave

    def heartbeat(
        self, group_id: str, member_id: str, generation: int,
        group_instance_id: str | None = None,
    ) -> int:
        """A Heartbeat's error code."""
        token = self.token()
        request: HeartbeatRequest = {"group_id": group_id, "generation_id": generation,
                                     "member_id": member_id,
                                     "group_instance_id": group_instance_id}
        self.apply(handle_heartbeat(self.coordinator, ctx(4), request, token, self.now))
        error: int = self.reply(token).error_code
        return error

    def single_leave_group(
        self, group_id: str, member_id: str, group_instance_id: str | None = None,
    ) -> Any:
        """Kafka's singleLeaveGroup: a batch (v3+) of one member."""
        return self.batch_leave_group(group_id, [identity(member_id, group_instance_id)])

    def batch_leave_group(
        self, group_id: str, members: Sequence[MemberIdentity], api_version: int = 5
    ) -> Any:
        """A v3+ LeaveGroup."""
        token = self.token()
        request: LeaveGroupRequest = {"group_id": group_id, "member_id": "",
                                      "members": list(members)}
        self.apply(handle_leave_group(self.coordinator, ctx(api_version), request, token, self.now))
        response: Any = self.reply(token)
        return response

    def legacy_leave_group(self, group_id: str, member_id: str, api_version: int = 1
                           ) -> Any:
        """A v0-2 LeaveGroup."""
        token = self.token()
        request: LeaveGroupRequest = {"group_id": group_id, "member_id": member_id,
                                      "members": []}
        self.apply(handle_leave_group(self.coordinator, ctx(api_version), request, token, self.now))
        response: Any = self.reply(token)
        return response

    # ------------------------------------------------------------------ offsets

    def commit_offsets(
        self,
        group_id: str,
        member_id: str,
        generation: int,
        offsets: Offsets,
        group_instance_id: str | None = None,
        api_version: int = 8,
        retention_time_ms: int = -1,
    ) -> dict[tuple[str, int], int]:
        """An OffsetCommit; returns each partition's error code."""
        by_topic: dict[str, list[OffsetCommitRequestPartition]] = {}
        for (topic, index), spec in offsets.items():
            if isinstance(spec, dict):
                part = spec
            elif isinstance(spec, tuple):
                part = partition(index, spec[0], spec[1])
            else:
                part = partition(index, spec)
            by_topic.setdefault(topic, []).append(part)
        token = self.token()
        request: OffsetCommitRequest = {
            "group_id": group_id, "generation_id_or_member_epoch": generation,
            "member_id": member_id, "group_instance_id": group_instance_id,
            "retention_time_ms": retention_time_ms,
            "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()],
        }
        self.apply(handle_offset_commit(
            self.coordinator, ctx(api_version), request, token, self.now))
        response = self.reply(token)
        return {(t.name, p.partition_index): p.error_code
                for t in response.topics for p in t.partitions}

    def fetch_offsets_response(
        self,
        groups: Sequence[tuple[str, Sequence[tuple[str, int]] | None]],
        require_stable: bool = True,
        api_version: int = 8,
    ) -> Any:
        """An OffsetFetch for several groups."""
        request_groups: list[OffsetFetchRequestGroup] = []
        for group_id, partitions in groups:
            if partitions is None:
                request_groups.append({"group_id": group_id, "topics": None})
                continue
            by_topic: dict[str, list[int]] = {}
            for topic, index in partitions:
                by_topic.setdefault(topic, []).append(index)
            request_groups.append({"group_id": group_id, "topics": [
                {"name": t, "partition_indexes": ps} for t, ps in by_topic.items()]})
        token = self.token()
        request: OffsetFetchRequest = {"groups": request_groups,
                                       "require_stable": require_stable}
        self.apply(handle_offset_fetch(
            self.coordinator, ctx(api_version), request, token, self.now))
        response: Any = self.reply(token)
        return response

    def fetch_offsets(
        self, group_id: str, partitions: Sequence[tuple[str, int]] | None = None,
        require_stable: bool = True,
    ) -> tuple[int, dict[tuple[str, int], tuple[int, int, str, int]]]:
        """Kafka's handleFetchOffsets: (group error, {tp: (offset, epoch, metadata, error)})."""
        response = self.fetch_offsets_response([(group_id, partitions)], require_stable)
        group = response.groups[0]
        data = {
            (t.name, p.partition_index): (p.committed_offset, p.committed_leader_epoch,
                                          p.metadata, p.error_code)
            for t in group.topics for p in t.partitions
        }
        return group.error_code, data

    def delete_offsets(
        self, group_id: str, partitions: Sequence[tuple[str, int]]
    ) -> tuple[int, dict[tuple[str, int], int]]:
        """Kafka's handleDeleteOffsets: (group error, {tp: error})."""
        by_topic: dict[str, list[int]] = {}
        for topic, index in partitions:
            by_topic.setdefault(topic, []).append(index)
        token = self.token()
        request: OffsetDeleteRequest = {"group_id": group_id, "topics": [
            {"name": t, "partitions": [{"partition_index": p} for p in ps]}
            for t, ps in by_topic.items()]}
        self.apply(handle_offset_delete(self.coordinator, ctx(0), request, token, self.now))
        response = self.reply(token)
        return response.error_code, {(t.name, p.partition_index): p.error_code
                                     for t in response.topics for p in t.partitions}

    # ------------------------------------------------------------------ admin

    def describe_group(self, group_id: str, api_version: int = 5) -> Any:
        """DescribeGroups for one group."""
        token = self.token()
        request: DescribeGroupsRequest = {"groups": [group_id]}
        self.apply(handle_describe_groups(
            self.coordinator, ctx(api_version), request, token, self.now))
        described: Any = self.reply(token).groups[0]
        return described

    def list_groups(
        self, states: Iterable[str] = (), types: Iterable[str] = ()
    ) -> tuple[int, tuple[Any, ...]]:
        """ListGroups: (error, groups)."""
        token = self.token()
        request: ListGroupsRequest = {"states_filter": list(states), "types_filter": list(types)}
        self.apply(handle_list_groups(self.coordinator, ctx(5), request, token, self.now))
        response = self.reply(token)
        return response.error_code, response.groups

    def delete_groups(self, group_ids: Iterable[str]) -> dict[str, int]:
        """DeleteGroups: {group: error}."""
        token = self.token()
        request: DeleteGroupsRequest = {"groups_names": list(group_ids)}
        self.apply(handle_delete_groups(self.coordinator, ctx(2), request, token, self.now))
        return {r.group_id: r.error_code for r in self.reply(token).results}

    # ------------------------------------------------------------------ composite setups

    def static_members_join_and_rebalance(
        self,
        leader_instance_id: str = LEADER_INSTANCE_ID,
        follower_instance_id: str = FOLLOWER_INSTANCE_ID,
        session_timeout: int = DEFAULT_SESSION_TIMEOUT,
        rebalance_timeout: int = DEFAULT_REBALANCE_TIMEOUT,
        group_id: str = GROUP_ID,
    ) -> RebalanceResult:
        """Kafka's staticMembersJoinAndRebalance: two static members, generation 1, Stable."""
        leader_token = self.send_join_group(group_id, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE,
                                            PROTOCOL_SUPERSET, leader_instance_id,
                                            session_timeout, rebalance_timeout)
        follower_token = self.send_join_group(group_id, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE,
                                              PROTOCOL_SUPERSET, follower_instance_id,
                                              session_timeout, rebalance_timeout)
        # First advance lets the initial delay expire once and be extended for the follower;
        # the second completes the join.
        self.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
        self.sleep(DEFAULT_REBALANCE_TIMEOUT + 1)
        leader = self.reply(leader_token)
        follower = self.reply(follower_token)
        assert leader.error_code == ErrorCode.NONE and leader.generation_id == 1
        assert follower.error_code == ErrorCode.NONE and follower.generation_id == 1
        leader_sync = self.sync_group_leader(group_id, 1, leader.member_id,
                                             {leader.member_id: b""})
        assert leader_sync.error_code == ErrorCode.NONE
        assert self.state(group_id) == "Stable"
        follower_sync = self.sync_group_follower(group_id, 1, follower.member_id)
        assert follower_sync.error_code == ErrorCode.NONE
        assert self.state(group_id) == "Stable"
        return RebalanceResult(1, leader.member_id, leader_sync.assignment,
                               follower.member_id, follower_sync.assignment)

    def join_with_n_members(self, n: int) -> list[Any]:
        """Kafka's joinWithNMembers: n v4+ members join and complete the join phase."""
        first = [self.send_join_group(GROUP_ID, UNKNOWN_MEMBER_ID, PROTOCOL_TYPE, PROTOCOLS,
                                      require_known_member_id=True) for _ in range(n)]
        member_ids = [self.reply(t).member_id for t in first]
        second = [self.send_join_group(GROUP_ID, m, PROTOCOL_TYPE, PROTOCOLS,
                                       require_known_member_id=True) for m in member_ids]
        self.sleep(GROUP_INITIAL_REBALANCE_DELAY + 1)
        self.sleep(DEFAULT_REBALANCE_TIMEOUT + 1)
        return [self.reply(t) for t in second]

    def add_group(self, group: ClassicGroup) -> ClassicGroup:
        """Inject a group object (Kafka's tests call groupManager.addGroup)."""
        self.coordinator.groups[group.group_id] = group
        return group
