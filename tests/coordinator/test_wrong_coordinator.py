"""GroupCoordinatorTest's wrong-coordinator and loading tests, mirrored under their names.

Kafka's group coordinator answers NOT_COORDINATOR for a group whose ``__consumer_offsets``
partition it does not lead, and COORDINATOR_LOAD_IN_PROGRESS while it loads that partition.
In kcoord that routing sits in front of the core (``coordinator/server/routing.py``, several
brokers in one process), so these mirrors drive a real two-broker server over TCP: the
group ``OTHER_GROUP`` belongs to broker 1 and every request goes to broker 0, as Kafka's
tests send ``otherGroupId`` to a coordinator that does not own it. Where Kafka 4's
GroupCoordinatorService answers differently from the Scala test while loading, the test
says so: SyncGroup gets COORDINATOR_LOAD_IN_PROGRESS (Scala: REBALANCE_IN_PROGRESS).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

import wire
from coordinator.core import ErrorCode
from coordinator.testing.double import KcoordServer
from coordinator.txn.placement import partition_for

GROUP = next(f"group-{i}" for i in range(100) if partition_for(f"group-{i}", 50) % 2 == 0)
OTHER_GROUP = next(f"other-{i}" for i in range(100) if partition_for(f"other-{i}", 50) % 2 == 1)
JOIN, SYNC, HEARTBEAT, LEAVE, COMMIT, FETCH, DESCRIBE, LIST, DELETE = (
    11, 14, 12, 13, 8, 9, 15, 16, 42)


@pytest.fixture
def server(tmp_path: Any) -> Iterator[KcoordServer]:
    with KcoordServer({"coordinator.load.delay.ms": "600000"}, data_dir=str(tmp_path),
                      brokers=2, topics={"topic": 1}) as running:
        yield running


def call(server: KcoordServer, api_key: int, version: int, body: dict[str, Any]) -> Any:
    """One request to broker 0 over a fresh connection."""
    host, port = server.bootstraps[0].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(wire.encode_request(api_key, version, 1, "mirror", body))
        reader = wire.FrameReader()
        while (payload := reader.next_frame()) is wire.NEED_DATA:
            data = sock.recv(65536)
            assert data, "connection closed"
            reader.receive_data(data)
        assert isinstance(payload, bytes)
        return wire.decode_response(api_key, version, payload)[1]


def join(group: str, instance_id: str | None = None) -> dict[str, Any]:
    return {"group_id": group, "session_timeout_ms": 60000, "rebalance_timeout_ms": 10000,
            "member_id": "", "group_instance_id": instance_id, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}], "reason": None}


def sync(group: str) -> dict[str, Any]:
    return {"group_id": group, "generation_id": 1, "member_id": "member",
            "group_instance_id": None, "protocol_type": "consumer", "protocol_name": "range",
            "assignments": []}


def heartbeat(group: str) -> dict[str, Any]:
    return {"group_id": group, "generation_id": 1, "member_id": "member",
            "group_instance_id": None}


def commit(group: str) -> dict[str, Any]:
    return {"group_id": group, "generation_id_or_member_epoch": 1, "member_id": "member",
            "group_instance_id": None, "topics": [{"name": "topic", "partitions": [
                {"partition_index": 0, "committed_offset": 15, "committed_metadata": ""}]}]}


def describe(server: KcoordServer, group: str) -> int:
    answer = call(server, DESCRIBE, 5, {"groups": [group],
                                        "include_authorized_operations": False})
    return int(answer.groups[0].error_code)


def test_request_handling_while_loading_in_progress(server: KcoordServer) -> None:
    server.move_coordinator(OTHER_GROUP, 0)  # broker 0 now loads its partition
    assert call(server, JOIN, 5, join(OTHER_GROUP)).error_code == 14
    assert call(server, JOIN, 5, join(OTHER_GROUP, "groupInstanceId")).error_code == 14
    # Kafka 4 answers what it cannot run with the load error (Scala: REBALANCE_IN_PROGRESS).
    assert call(server, SYNC, 5, sync(OTHER_GROUP)).error_code == 14
    committed = call(server, COMMIT, 8, commit(OTHER_GROUP))
    assert committed.topics[0].partitions[0].error_code == 14
    # "The group is still loading, so blindly respond."
    assert call(server, HEARTBEAT, 4, heartbeat(OTHER_GROUP)).error_code == 0
    assert describe(server, OTHER_GROUP) == 14
    assert call(server, LIST, 4, {"states_filter": []}).error_code == 14
    deleted = call(server, DELETE, 2, {"groups_names": [OTHER_GROUP]})
    assert deleted.results[0].error_code == 14
    # Groups on partitions that are not loading stay accessible.
    assert describe(server, GROUP) == 0
    # After loading, the group is accessible.
    server.advance(600)
    assert describe(server, OTHER_GROUP) == 0


def test_join_group_wrong_coordinator(server: KcoordServer) -> None:
    assert call(server, JOIN, 5, join(OTHER_GROUP)).error_code == ErrorCode.NOT_COORDINATOR
    static = call(server, JOIN, 5, join(OTHER_GROUP, "groupInstanceId"))
    assert static.error_code == ErrorCode.NOT_COORDINATOR


def test_heartbeat_wrong_coordinator(server: KcoordServer) -> None:
    body = heartbeat(OTHER_GROUP) | {"generation_id": -1}
    assert call(server, HEARTBEAT, 4, body).error_code == ErrorCode.NOT_COORDINATOR


def test_sync_group_not_coordinator(server: KcoordServer) -> None:
    assert call(server, SYNC, 5, sync(OTHER_GROUP)).error_code == ErrorCode.NOT_COORDINATOR


def test_fetch_offset_not_coordinator_for_group(server: KcoordServer) -> None:
    answer = call(server, FETCH, 7, {"group_id": OTHER_GROUP, "require_stable": True,
                                     "topics": [{"name": "topic", "partition_indexes": [0]}]})
    assert answer.error_code == ErrorCode.NOT_COORDINATOR
    assert not answer.topics


def test_leave_group_wrong_coordinator(server: KcoordServer) -> None:
    answer = call(server, LEAVE, 0, {"group_id": OTHER_GROUP, "member_id": ""})
    assert answer.error_code == ErrorCode.NOT_COORDINATOR


def test_static_members_wrong_coordinator_batch_leave_group(server: KcoordServer) -> None:
    answer = call(server, LEAVE, 3, {"group_id": OTHER_GROUP, "members": [
        {"member_id": "", "group_instance_id": "leader-instance"},
        {"member_id": "", "group_instance_id": "follower-instance"}]})
    assert answer.error_code == ErrorCode.NOT_COORDINATOR
    assert not answer.members


def test_describe_group_wrong_coordinator(server: KcoordServer) -> None:
    assert describe(server, OTHER_GROUP) == ErrorCode.NOT_COORDINATOR


def test_delete_group_with_wrong_coordinator(server: KcoordServer) -> None:
    answer = call(server, DELETE, 2, {"groups_names": [OTHER_GROUP]})
    assert [(r.group_id, r.error_code) for r in answer.results] == [
        (OTHER_GROUP, ErrorCode.NOT_COORDINATOR)]
