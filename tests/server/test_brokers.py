"""Several brokers in one process (``--brokers``): Metadata, Kafka's coordinator placement,
NOT_COORDINATOR routing, loading, stopping and starting brokers, coordinator moves and
partition leadership with leader epochs. Raw frames over real TCP, one server in process."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import trio
from raw_client import (
    DESCRIBE_GROUPS,
    HEARTBEAT,
    JOIN_GROUP,
    LIST_GROUPS,
    OFFSET_COMMIT,
    OFFSET_FETCH,
    SYNC_GROUP,
    RawClient,
    heartbeat_body,
    join,
    join_body,
    sync,
)

from coordinator.server.cluster import ClusterError
from coordinator.server.faults import FaultInjector
from coordinator.txn.placement import partition_for
from wire import ErrorCode

pytestmark = pytest.mark.trio

METADATA, FIND_COORDINATOR, FETCH, PRODUCE, INIT_PRODUCER_ID = 3, 10, 1, 0, 22
GROUPS = [f"group-{i}" for i in range(40)] + ["hello", "Hello World", "polygenelubricants"]


def coordinator_node(key: str, brokers: int = 3) -> int:
    """Kafka: the leader of partition abs(hashCode) % 50, first led by partition % N."""
    return partition_for(key, 50) % brokers


def group_on(node: int, brokers: int = 3, skip: int = 0) -> str:
    return [g for g in GROUPS if coordinator_node(g, brokers) == node][skip]


async def start_cluster(start_server: Any, brokers: int = 3, **props: str) -> Any:
    return await start_server(props, brokers=brokers)


async def client_of(connect: Any, running: Any, node: int) -> RawClient:
    client: RawClient = await connect(running.brokers.ports[node])
    return client


async def stable_member(connect: Any, running: Any, node: int, group: str) -> tuple[RawClient,
                                                                                   Any]:
    """A member that joined and synced ``group`` through broker ``node``."""
    client = await client_of(connect, running, node)
    joined = await join(client, group)
    assert (await sync(client, group, joined)).error_code == 0
    return client, joined


def commit_body(group: str, generation: int = -1, member: str = "",
                offset: int = 5) -> dict[str, Any]:
    return {"group_id": group, "generation_id_or_member_epoch": generation, "member_id": member,
            "topics": [{"name": "t", "partitions": [
                {"partition_index": 0, "committed_offset": offset}]}]}


async def test_every_broker_listens_and_metadata_lists_them(
    start_server: Any, connect: Any
) -> None:
    running = await start_cluster(start_server, **{"default.replication.factor": "2"})
    ports = running.brokers.ports
    assert sorted(ports) == [0, 1, 2] and len(set(ports.values())) == 3
    assert ports[0] == running.port
    client = await client_of(connect, running, 1)
    meta = await client.request(METADATA, 12, {"topics": None,
                                                "allow_auto_topic_creation": False,
                                                "include_topic_authorized_operations": False})
    assert [(b.node_id, b.port) for b in meta.brokers] == [(n, ports[n]) for n in range(3)]
    assert meta.controller_id == 0
    (topic,) = [t for t in meta.topics if t.name == "t"]
    for p in topic.partitions:
        assert p.leader_id == p.partition_index % 3
        assert p.leader_epoch == 0
        assert list(p.replica_nodes) == [p.partition_index % 3, (p.partition_index + 1) % 3]
        assert list(p.isr_nodes) == list(p.replica_nodes)


async def test_find_coordinator_is_kafkas_placement_on_every_broker(
    start_server: Any, connect: Any
) -> None:
    running = await start_cluster(start_server)
    ports = running.brokers.ports
    for node in range(3):
        client = await client_of(connect, running, node)
        batched = await client.request(FIND_COORDINATOR, 4, {"key_type": 0,
                                                              "coordinator_keys": GROUPS})
        assert [(c.key, c.node_id, c.port) for c in batched.coordinators] == [
            (g, coordinator_node(g), ports[coordinator_node(g)]) for g in GROUPS
        ]
        for txn_id in ("txn-a", "txn-b", "hello"):
            single = await client.request(FIND_COORDINATOR, 3, {"key": txn_id, "key_type": 1})
            assert (single.error_code, single.node_id) == (0, coordinator_node(txn_id))


async def test_group_requests_elsewhere_get_not_coordinator(
    start_server: Any, connect: Any
) -> None:
    running = await start_cluster(start_server)
    group, other_group = group_on(1), group_on(2)
    home = await client_of(connect, running, 1)
    away = await client_of(connect, running, 0)
    assert (await away.request(JOIN_GROUP, 7, join_body(group))).error_code == 16
    assert (await away.request(HEARTBEAT, 4, heartbeat_body(group, 1, "m"))).error_code == 16
    committed = await away.request(OFFSET_COMMIT, 8, commit_body(group))
    assert committed.topics[0].partitions[0].error_code == 16
    committed = await home.request(OFFSET_COMMIT, 8, commit_body(group))
    assert committed.topics[0].partitions[0].error_code == 0
    # Several groups in one request: each is answered by whether this broker has it.
    fetched = await home.request(OFFSET_FETCH, 8, {"groups": [
        {"group_id": group, "topics": None}, {"group_id": other_group, "topics": None}],
        "require_stable": False})
    by_group = {g.group_id: g for g in fetched.groups}
    assert by_group[group].error_code == 0
    assert by_group[group].topics[0].partitions[0].committed_offset == 5
    assert by_group[other_group].error_code == 16
    described = await home.request(DESCRIBE_GROUPS, 5, {"groups": [group, other_group],
                                                        "include_authorized_operations": False})
    assert {g.group_id: g.error_code for g in described.groups} == {group: 0, other_group: 16}
    # ListGroups on each broker lists the groups it coordinates.
    assert [g.group_id for g in (await home.request(LIST_GROUPS, 4, {"states_filter": []})
                                 ).groups] == [group]
    assert (await away.request(LIST_GROUPS, 4, {"states_filter": []})).groups == []
    txn_id = next(t for t in (f"tx-{i}" for i in range(50)) if coordinator_node(t) == 2)
    init = await away.request(INIT_PRODUCER_ID, 4, {"transactional_id": txn_id,
                                                     "transaction_timeout_ms": 60000,
                                                     "producer_id": -1, "producer_epoch": -1})
    assert init.error_code == 16


async def test_stopping_the_coordinator_moves_the_group_with_its_generation(
    start_server: Any, connect: Any
) -> None:
    running = await start_cluster(start_server)
    group = group_on(1)
    member, joined = await stable_member(connect, running, 1, group)
    commit = commit_body(group, joined.generation_id, joined.member_id, offset=42)
    assert (await member.request(OFFSET_COMMIT, 8, commit)).topics[0].partitions[0].error_code == 0

    result = await running.brokers.stop(1)
    assert group in result["groups"]
    with trio.fail_after(5):
        assert await member.closed_by_server()  # its connection was reset
    with pytest.raises(OSError):
        await trio.open_tcp_stream("127.0.0.1", running.brokers.ports[1])

    survivor = await client_of(connect, running, 0)
    found = await survivor.request(FIND_COORDINATOR, 3, {"key": group, "key_type": 0})
    assert (found.error_code, found.node_id) == (0, 2)  # the next live broker after 1
    new_home = await client_of(connect, running, 2)
    beat = heartbeat_body(group, joined.generation_id, joined.member_id)
    assert (await new_home.request(HEARTBEAT, 4, beat)).error_code == 0  # no rebalance
    fetched = await new_home.request(OFFSET_FETCH, 8, {"groups": [
        {"group_id": group, "topics": None}], "require_stable": False})
    assert fetched.groups[0].topics[0].partitions[0].committed_offset == 42
    assert (await survivor.request(HEARTBEAT, 4, beat)).error_code == 16

    await running.brokers.start(1)
    back = await client_of(connect, running, 1)
    meta = await back.request(METADATA, 12, {"topics": None, "allow_auto_topic_creation": False,
                                             "include_topic_authorized_operations": False})
    assert [b.node_id for b in meta.brokers] == [0, 1, 2]
    # Leadership of the coordinator partition stays where the failover put it.
    assert (await back.request(HEARTBEAT, 4, beat)).error_code == 16


async def test_a_parked_join_is_answered_not_coordinator_when_the_group_moves(
    start_server: Any, connect: Any
) -> None:
    running = await start_cluster(start_server)
    group = group_on(0)
    first, joined = await stable_member(connect, running, 0, group)
    second = await client_of(connect, running, 0)
    pending = await second.request(JOIN_GROUP, 7, join_body(group))
    assert pending.error_code == ErrorCode.MEMBER_ID_REQUIRED
    await second.send(JOIN_GROUP, 7, join_body(group, pending.member_id))
    with trio.fail_after(5):
        while running.runtime.coordinator.describe(group).state != "PreparingRebalance":
            await trio.sleep(0.01)
    moved = await running.brokers.move_coordinator(group, 2)
    assert moved["groups"] == [group]
    with trio.fail_after(5):
        _, parked = await second.recv(JOIN_GROUP, 7)
    assert parked.error_code == 16
    # The new coordinator loaded the group from its last record: Stable, generation 1.
    view = running.runtime.coordinator.describe(group)
    assert (view.state, view.generation_id) == ("Stable", joined.generation_id)
    new_home = await client_of(connect, running, 2)
    beat = heartbeat_body(group, joined.generation_id, joined.member_id)
    assert (await new_home.request(HEARTBEAT, 4, beat)).error_code == 0
    assert (await first.request(HEARTBEAT, 4, beat)).error_code == 16


async def test_a_moved_coordinator_loads_for_coordinator_load_delay_ms(
    start_server: Any, connect: Any
) -> None:
    running = await start_cluster(start_server, **{"coordinator.load.delay.ms": "300"})
    group = group_on(0)
    client = await client_of(connect, running, 1)
    await running.brokers.move_coordinator(group, 1)
    committed = await client.request(OFFSET_COMMIT, 8, commit_body(group))
    assert committed.topics[0].partitions[0].error_code == 14  # COORDINATOR_LOAD_IN_PROGRESS
    await trio.sleep(0.35)
    committed = await client.request(OFFSET_COMMIT, 8, commit_body(group))
    assert committed.topics[0].partitions[0].error_code == 0


def fetch_body(partition: int, leader_epoch: int) -> dict[str, Any]:
    return {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": "t", "partitions": [
                {"partition": partition, "current_leader_epoch": leader_epoch,
                 "fetch_offset": 0, "last_fetched_epoch": -1, "log_start_offset": -1,
                 "partition_max_bytes": 1 << 20}]}],
            "forgotten_topics_data": [], "rack_id": ""}


async def partition_state(client: RawClient, partition: int) -> tuple[int, int, int]:
    topics = [{"name": "t", "topic_id": uuid.UUID(int=0)}]
    meta = await client.request(METADATA, 12, {"topics": topics,
                                               "allow_auto_topic_creation": False,
                                               "include_topic_authorized_operations": False})
    p = meta.topics[0].partitions[partition]
    return p.error_code, p.leader_id, p.leader_epoch


async def test_partition_leadership_fails_over_with_an_epoch_bump(
    start_server: Any, connect: Any
) -> None:
    running = await start_cluster(start_server, **{"default.replication.factor": "3"})
    leader = await client_of(connect, running, 0)
    follower = await client_of(connect, running, 2)
    assert (await follower.request(FETCH, 12, fetch_body(0, 0))
            ).responses[0].partitions[0].error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert (await leader.request(FETCH, 12, fetch_body(0, 0))
            ).responses[0].partitions[0].error_code == 0
    await running.brokers.stop(0)
    successor = await client_of(connect, running, 1)
    assert await partition_state(successor, 0) == (0, 1, 1)
    answer = await successor.request(FETCH, 12, fetch_body(0, 0))
    assert answer.responses[0].partitions[0].error_code == ErrorCode.FENCED_LEADER_EPOCH
    answer = await successor.request(FETCH, 12, fetch_body(0, 2))
    assert answer.responses[0].partitions[0].error_code == ErrorCode.UNKNOWN_LEADER_EPOCH
    assert (await successor.request(FETCH, 12, fetch_body(0, 1))
            ).responses[0].partitions[0].error_code == 0
    await running.brokers.start(0)
    assert await partition_state(successor, 0) == (0, 1, 1)  # no automatic move back
    assert (await running.brokers.elect_preferred_leaders())["changed"] == 4  # 0, 3, 6, 9
    assert await partition_state(successor, 0) == (0, 0, 2)


async def test_with_one_replica_a_stopped_leaders_partitions_go_offline(
    start_server: Any, connect: Any
) -> None:
    running = await start_cluster(start_server)
    client = await client_of(connect, running, 0)
    await running.brokers.stop(1)
    assert await partition_state(client, 1) == (ErrorCode.LEADER_NOT_AVAILABLE, -1, 1)
    assert await partition_state(client, 0) == (0, 0, 0)
    produce = await client.request(PRODUCE, 9, {
        "transactional_id": None, "acks": -1, "timeout_ms": 5000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 1, "records": None}]}]})
    assert produce.responses[0].partition_responses[0].error_code == 6  # NOT_LEADER
    await running.brokers.start(1)
    assert await partition_state(client, 1) == (0, 1, 2)


async def test_the_last_live_broker_and_unknown_ids_are_refused(start_server: Any) -> None:
    running = await start_cluster(start_server, brokers=2)
    with pytest.raises(ClusterError, match="no broker 5"):
        await running.brokers.stop(5)
    await running.brokers.stop(1)
    with pytest.raises(ClusterError, match="already stopped"):
        await running.brokers.stop(1)
    with pytest.raises(ClusterError, match="last live broker"):
        await running.brokers.stop(0)
    with pytest.raises(ClusterError, match="is stopped"):
        await running.brokers.move_coordinator("g", 1)
    await running.brokers.start(1)
    with pytest.raises(ClusterError, match="already running"):
        await running.brokers.start(1)


async def test_a_fault_can_target_one_broker(start_server: Any, connect: Any) -> None:
    faults = FaultInjector()
    running = await start_server({}, brokers=2, faults=faults)
    faults.add("ListGroups", error_code=15, count=None, node_id=1)
    zero = await client_of(connect, running, 0)
    one = await client_of(connect, running, 1)
    assert (await zero.request(LIST_GROUPS, 4, {"states_filter": []})).error_code == 0
    assert (await one.request(LIST_GROUPS, 4, {"states_filter": []})).error_code == 15


CREATE_TOPICS = 19


def create_body(name: str, factor: int, assignments: list[Any] | None = None) -> dict[str, Any]:
    return {"topics": [{"name": name, "num_partitions": -1 if assignments else 2,
                        "replication_factor": factor, "assignments": assignments or [],
                        "configs": []}],
            "timeout_ms": 5000, "validate_only": False}


async def test_create_topics_takes_replication_factors_up_to_the_broker_count(
    start_server: Any, connect: Any
) -> None:
    running = await start_cluster(start_server, **{"default.replication.factor": "2"})
    client = await client_of(connect, running, 2)
    created = await client.request(CREATE_TOPICS, 7, create_body("rf3", 3))
    assert (created.topics[0].error_code, created.topics[0].replication_factor) == (0, 3)
    created = await client.request(CREATE_TOPICS, 7, create_body("rf-default", -1))
    assert (created.topics[0].error_code, created.topics[0].replication_factor) == (0, 2)
    refused = await client.request(CREATE_TOPICS, 7, create_body("rf4", 4))
    assert refused.topics[0].error_code == ErrorCode.INVALID_REPLICATION_FACTOR
    assert "only 3 broker(s) are registered" in refused.topics[0].error_message
    manual = await client.request(CREATE_TOPICS, 7, create_body(
        "manual", -1, [{"partition_index": 0, "broker_ids": [2, 0]}]))
    assert (manual.topics[0].error_code, manual.topics[0].replication_factor) == (0, 2)
    unknown = await client.request(CREATE_TOPICS, 7, create_body(
        "unknown-broker", -1, [{"partition_index": 0, "broker_ids": [5]}]))
    assert unknown.topics[0].error_code == ErrorCode.INVALID_REPLICA_ASSIGNMENT

    meta = await client.request(METADATA, 12, {"topics": None, "allow_auto_topic_creation": False,
                                               "include_topic_authorized_operations": False})
    replicas = {t.name: [list(p.replica_nodes) for p in t.partitions] for t in meta.topics}
    assert replicas["rf3"] == [[0, 1, 2], [1, 2, 0]]
    assert replicas["rf-default"] == [[0, 1], [1, 2]]
    # Stopping broker 1 moves partition 1 of rf3 to its next replica, 2.
    await running.brokers.stop(1)
    meta = await client.request(METADATA, 12, {"topics": None, "allow_auto_topic_creation": False,
                                               "include_topic_authorized_operations": False})
    rf3 = next(t for t in meta.topics if t.name == "rf3")
    assert [(p.leader_id, p.leader_epoch, list(p.isr_nodes), list(p.offline_replicas))
            for p in rf3.partitions] == [(0, 0, [0, 2], [1]), (2, 1, [2, 0], [1])]


async def test_a_parked_sync_is_answered_not_coordinator_when_the_group_moves(
    start_server: Any, connect: Any
) -> None:
    running = await start_cluster(start_server)
    group = group_on(2)
    leader = await client_of(connect, running, 2)
    follower = await client_of(connect, running, 2)
    first = await join(leader, group)
    pending = await follower.request(JOIN_GROUP, 7, join_body(group))
    await follower.send(JOIN_GROUP, 7, join_body(group, pending.member_id))
    rejoined = await leader.request(JOIN_GROUP, 7, join_body(group, first.member_id))
    _, joined = await follower.recv(JOIN_GROUP, 7)
    assert joined.error_code == 0 and joined.generation_id == rejoined.generation_id
    await follower.send(SYNC_GROUP, 5, {
        "group_id": group, "generation_id": joined.generation_id,
        "member_id": joined.member_id, "group_instance_id": None,
        "protocol_type": "consumer", "protocol_name": joined.protocol_name,
        "assignments": []})
    with trio.fail_after(5):
        while not any(m.sync_token is not None
                      for m in running.runtime.coordinator.groups[group].members.values()):
            await trio.sleep(0.01)
    await running.brokers.move_coordinator(group, 0)
    with trio.fail_after(5):
        _, synced = await follower.recv(SYNC_GROUP, 5)
    assert synced.error_code == 16
