"""ACL enforcement over TCP (issue 29): with ``authorizer.class.name`` set, each route's
declared ACLs are checked (a PLAINTEXT client is ``User:ANONYMOUS``), the denial is the
resource type's authorization error, Metadata leaves out what one may not DESCRIBE; without
an authorizer the handlers are the routes' own (nothing added per request)."""

from __future__ import annotations

import uuid
from typing import Any

from coordinator.server.apis import load_routes
from coordinator.server.app import RunningServer
from storage.records import Record
from storage.security_records import AccessControlEntryKey, AccessControlEntryValue
from wire import ApiKey, ErrorCode
from wire.constants import AclOperation, AclPermissionType, PatternType, ResourceType

AUTHORIZER = {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"}
COMMIT = {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "",
          "group_instance_id": None, "topics": [{"name": "t", "partitions": [
              {"partition_index": 0, "committed_offset": 5, "committed_leader_epoch": -1,
               "committed_metadata": ""}]}]}


def allow(running: RunningServer, kind: ResourceType, name: str, operation: AclOperation,
          principal: str = "User:ANONYMOUS") -> None:
    """An ACL added as Kafka's tests add them (straight into the authorizer's state)."""
    running.runtime.security.replay(Record(
        AccessControlEntryKey(uuid.uuid4()), AccessControlEntryValue(
            kind, name, PatternType.LITERAL, principal, "*", operation,
            AclPermissionType.ALLOW)))


async def test_metadata_leaves_out_topics_one_may_not_describe(start_server: Any,
                                                               connect: Any) -> None:
    running = await start_server(AUTHORIZER, topics=(("t", 1), ("u", 1)))
    client = await connect(running.port)
    everything = await client.request(ApiKey.METADATA, 12, {"topics": None})
    assert everything.topics == []
    named = await client.request(ApiKey.METADATA, 12, {"topics": [
        {"name": "t", "topic_id": uuid.UUID(int=0)}]})
    assert [(t.name, t.error_code) for t in named.topics] == [
        ("t", ErrorCode.TOPIC_AUTHORIZATION_FAILED)]
    allow(running, ResourceType.TOPIC, "t", AclOperation.READ)  # READ implies DESCRIBE
    everything = await client.request(ApiKey.METADATA, 12, {
        "topics": None, "include_topic_authorized_operations": True})
    assert [(t.name, t.error_code) for t in everything.topics] == [("t", 0)]
    assert everything.topics[0].topic_authorized_operations == (
        1 << AclOperation.READ | 1 << AclOperation.DESCRIBE)


async def test_offset_commit_needs_group_read_then_topic_read(start_server: Any,
                                                              connect: Any) -> None:
    running = await start_server(AUTHORIZER)
    client = await connect(running.port)

    async def commit_error() -> int:
        answer = await client.request(ApiKey.OFFSET_COMMIT, 8, COMMIT)
        code: int = answer.topics[0].partitions[0].error_code
        return code

    assert await commit_error() == ErrorCode.GROUP_AUTHORIZATION_FAILED
    allow(running, ResourceType.GROUP, "g", AclOperation.READ)
    assert await commit_error() == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    allow(running, ResourceType.TOPIC, "t", AclOperation.READ)
    assert await commit_error() == ErrorCode.NONE


async def test_cluster_apis_need_cluster_acls_and_super_users_pass(start_server: Any,
                                                                   connect: Any) -> None:
    running = await start_server(AUTHORIZER)
    client = await connect(running.port)
    acl = {"resource_type": 2, "resource_name": "t", "resource_pattern_type": 3,
           "principal": "User:x", "host": "*", "operation": 3, "permission_type": 3}
    denied = await client.request(ApiKey.CREATE_ACLS, 3, {"creations": [acl]})
    assert denied.results[0].error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    allow(running, ResourceType.CLUSTER, "kafka-cluster", AclOperation.ALTER)
    created = await client.request(ApiKey.CREATE_ACLS, 3, {"creations": [acl]})
    assert created.results[0].error_code == ErrorCode.NONE
    super_user = await start_server({**AUTHORIZER, "super.users": "User:ANONYMOUS"})
    other = await connect(super_user.port)
    heartbeat = await other.request(ApiKey.HEARTBEAT, 4, {
        "group_id": "g", "generation_id": 1, "member_id": "m", "group_instance_id": None})
    assert heartbeat.error_code != ErrorCode.GROUP_AUTHORIZATION_FAILED


async def test_list_groups_lists_only_what_one_may_describe(start_server: Any,
                                                            connect: Any) -> None:
    running = await start_server({**AUTHORIZER, "allow.everyone.if.no.acl.found": "true"})
    client = await connect(running.port)
    for group in ("a", "b"):
        commit = {**COMMIT, "group_id": group}
        answer = await client.request(ApiKey.OFFSET_COMMIT, 8, commit)
        assert answer.topics[0].partitions[0].error_code == 0
    allow(running, ResourceType.GROUP, "b", AclOperation.READ, principal="User:someone-else")
    # (with no ACL on the cluster, allow.everyone.if.no.acl.found lets ANONYMOUS list all)
    allow(running, ResourceType.CLUSTER, "kafka-cluster", AclOperation.DESCRIBE, "User:admin")
    listed = await client.request(ApiKey.LIST_GROUPS, 4, {"states_filter": []})
    assert [g.group_id for g in listed.groups] == ["a"]  # b has ACLs, none for ANONYMOUS
    described = await client.request(ApiKey.DESCRIBE_GROUPS, 5, {
        "groups": ["a", "b"], "include_authorized_operations": True})
    assert [(g.group_id, g.error_code) for g in described.groups] == [
        ("a", 0), ("b", ErrorCode.GROUP_AUTHORIZATION_FAILED)]


async def test_without_an_authorizer_the_handlers_are_the_routes_own(server: Any) -> None:
    routes = load_routes()
    for key in (ApiKey.HEARTBEAT, ApiKey.OFFSET_COMMIT, ApiKey.METADATA, ApiKey.PRODUCE):
        assert server.server.handlers[key] is routes[key].handler


def test_authorizer_configuration_is_validated() -> None:
    import pytest

    from coordinator.config import ConfigError
    from coordinator.server.options import build_options

    with pytest.raises(ConfigError, match=r"authorizer\.class\.name"):
        build_options({"authorizer.class.name": "com.example.Mine"}, data_dir=None)
    with pytest.raises(ConfigError, match=r"super\.users"):
        build_options({**AUTHORIZER, "super.users": "alice"}, data_dir=None)


async def test_a_commit_to_two_topics_commits_the_allowed_one(start_server: Any,
                                                               connect: Any) -> None:
    """Kafka's partial answer: the denied topic's partitions TOPIC_AUTHORIZATION_FAILED,
    the other committed (and fetched back)."""
    running = await start_server(AUTHORIZER, topics=(("t", 1), ("u", 1)))
    client = await connect(running.port)
    allow(running, ResourceType.GROUP, "g", AclOperation.READ)
    allow(running, ResourceType.TOPIC, "t", AclOperation.READ)
    partition = COMMIT["topics"][0]["partitions"]
    two = {**COMMIT, "topics": [{"name": "u", "partitions": partition},
                                {"name": "t", "partitions": partition}]}
    answer = await client.request(ApiKey.OFFSET_COMMIT, 8, two)
    assert sorted((t.name, t.partitions[0].error_code) for t in answer.topics) == [
        ("t", 0), ("u", ErrorCode.TOPIC_AUTHORIZATION_FAILED)]
    fetched = await client.request(ApiKey.OFFSET_FETCH, 7, {
        "group_id": "g", "require_stable": False, "topics": [
            {"name": "t", "partition_indexes": [0]}]})
    assert fetched.topics[0].partitions[0].committed_offset == 5


async def test_produce_to_two_topics_writes_the_allowed_one(start_server: Any,
                                                            connect: Any) -> None:
    running = await start_server(AUTHORIZER, topics=(("t", 1), ("u", 1)))
    client = await connect(running.port)
    allow(running, ResourceType.TOPIC, "t", AclOperation.WRITE)
    records = _one_record()
    answer = await client.request(ApiKey.PRODUCE, 9, {
        "transactional_id": None, "acks": 1, "timeout_ms": 1000, "topic_data": [
            {"name": name, "partition_data": [{"index": 0, "records": records}]}
            for name in ("u", "t")]})
    assert sorted((r.name, r.partition_responses[0].error_code) for r in answer.responses) == [
        ("t", 0), ("u", ErrorCode.TOPIC_AUTHORIZATION_FAILED)]
    assert running.server.topics.get("t").partitions[0].log_end_offset == 1
    assert running.server.topics.get("u").partitions[0].log_end_offset == 0


def _one_record() -> bytes:
    from raw_client import batch

    return batch([b"v"], producer_id=-1, epoch=-1, sequence=-1, transactional=False)


async def test_metadata_auto_creates_only_what_one_may_create(start_server: Any,
                                                              connect: Any) -> None:
    """Kafka's rule: an unknown topic one may DESCRIBE but not CREATE (on the topic or the
    cluster) answers TOPIC_AUTHORIZATION_FAILED and is not created; one may not DESCRIBE
    is never looked up."""
    running = await start_server(AUTHORIZER, topics=())
    client = await connect(running.port)

    async def ask(name: str) -> int:
        answer = await client.request(ApiKey.METADATA, 12, {
            "topics": [{"name": name, "topic_id": uuid.UUID(int=0)}],
            "allow_auto_topic_creation": True})
        [topic] = answer.topics
        assert topic.name == name
        return int(topic.error_code)

    assert await ask("hidden") == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    allow(running, ResourceType.TOPIC, "new", AclOperation.DESCRIBE)
    assert await ask("new") == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    assert running.server.topics.get("new") is None
    assert running.server.topics.get("hidden") is None
    allow(running, ResourceType.TOPIC, "new", AclOperation.CREATE)
    assert await ask("new") in (ErrorCode.NONE, ErrorCode.LEADER_NOT_AVAILABLE)
    assert running.server.topics.get("new") is not None


async def test_describe_cluster_authorized_operations_are_the_principals(
    start_server: Any, connect: Any
) -> None:
    running = await start_server(AUTHORIZER)
    client = await connect(running.port)

    async def operations() -> int:
        answer = await client.request(ApiKey.DESCRIBE_CLUSTER, 1, {
            "include_cluster_authorized_operations": True, "endpoint_type": 1})
        assert answer.error_code == 0
        return int(answer.cluster_authorized_operations)

    assert await operations() == 0  # Kafka: 0 without DESCRIBE on the cluster
    allow(running, ResourceType.CLUSTER, "kafka-cluster", AclOperation.ALTER)
    assert await operations() == 1 << AclOperation.ALTER | 1 << AclOperation.DESCRIBE


async def test_every_broker_enforces_the_same_acls(start_server: Any, connect: Any) -> None:
    """With --brokers 2 each broker's handlers are the authorized ones, over one ACL set."""
    running = await start_server(AUTHORIZER, brokers=2, topics=(("t", 2),))
    other_port = running.brokers.ports[1]
    client = await connect(other_port)
    everything = await client.request(ApiKey.METADATA, 12, {"topics": None})
    assert everything.topics == []
    allow(running, ResourceType.TOPIC, "t", AclOperation.DESCRIBE)
    everything = await client.request(ApiKey.METADATA, 12, {"topics": None})
    assert [t.name for t in everything.topics] == ["t"]


async def test_requests_naming_several_groups_answer_each_group(start_server: Any,
                                                                connect: Any) -> None:
    """Kafka answers DeleteGroups, OffsetFetch v8+ and DescribeTransactions key by key:
    the denied group or transactional id gets the authorization error, the others are
    served."""
    running = await start_server(AUTHORIZER)
    client = await connect(running.port)
    allow(running, ResourceType.GROUP, "mine", AclOperation.ALL)
    allow(running, ResourceType.TOPIC, "t", AclOperation.READ)
    commit = await client.request(ApiKey.OFFSET_COMMIT, 8, {**COMMIT, "group_id": "mine"})
    assert commit.topics[0].partitions[0].error_code == 0
    fetched = await client.request(ApiKey.OFFSET_FETCH, 8, {"require_stable": False, "groups": [
        {"group_id": g, "topics": [{"name": "t", "partition_indexes": [0]}]}
        for g in ("theirs", "mine")]})
    by_group = {g.group_id: g for g in fetched.groups}
    assert by_group["theirs"].error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
    assert by_group["mine"].error_code == 0
    assert by_group["mine"].topics[0].partitions[0].committed_offset == 5
    deleted = await client.request(ApiKey.DELETE_GROUPS, 2, {"groups_names": ["theirs", "mine"]})
    assert sorted((r.group_id, r.error_code) for r in deleted.results) == [
        ("mine", 0), ("theirs", ErrorCode.GROUP_AUTHORIZATION_FAILED)]
    described = await client.request(ApiKey.DESCRIBE_TRANSACTIONS, 0, {
        "transactional_ids": ["x"]})
    assert described.transaction_states[0].error_code == (
        ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)


async def test_a_fetch_by_topic_id_reads_the_allowed_topic(start_server: Any,
                                                            connect: Any) -> None:
    """Fetch v13+ names topics by id: the denied one answers TOPIC_AUTHORIZATION_FAILED,
    the allowed one is read."""
    running = await start_server(AUTHORIZER, topics=(("t", 1), ("u", 1)))
    client = await connect(running.port)
    allow(running, ResourceType.TOPIC, "t", AclOperation.READ)
    ids = {name: running.server.topics.get(name).topic_id for name in ("t", "u")}
    partition = {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                 "last_fetched_epoch": -1, "log_start_offset": -1, "partition_max_bytes": 1024}
    answer = await client.request(ApiKey.FETCH, 13, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 4096,
        "isolation_level": 0, "session_id": 0, "session_epoch": -1,
        "topics": [{"topic_id": ids[n], "partitions": [partition]} for n in ("u", "t")],
        "forgotten_topics_data": [], "rack_id": ""})
    errors = {r.topic_id: r.partitions[0].error_code for r in answer.responses}
    assert errors == {ids["t"]: 0, ids["u"]: ErrorCode.TOPIC_AUTHORIZATION_FAILED}


async def test_offsets_of_every_topic_leave_out_the_topics_one_may_not_describe(
    start_server: Any, connect: Any
) -> None:
    """OffsetFetch without topics (an admin's list_consumer_group_offsets) answers only the
    topics one may DESCRIBE, in v0-7 and per group in v8+, as Kafka."""
    running = await start_server(AUTHORIZER, topics=(("t", 1), ("u", 1)))
    client = await connect(running.port)
    allow(running, ResourceType.GROUP, "g", AclOperation.READ)
    allow(running, ResourceType.TOPIC, "t", AclOperation.READ)
    allow(running, ResourceType.TOPIC, "u", AclOperation.READ)
    partition = COMMIT["topics"][0]["partitions"]
    both = {**COMMIT, "topics": [{"name": n, "partitions": partition} for n in ("t", "u")]}
    answer = await client.request(ApiKey.OFFSET_COMMIT, 8, both)
    assert [p.error_code for t in answer.topics for p in t.partitions] == [0, 0]
    running.runtime.security.replay(Record(
        AccessControlEntryKey(uuid.uuid4()), AccessControlEntryValue(
            ResourceType.TOPIC, "u", PatternType.LITERAL, "User:ANONYMOUS", "*",
            AclOperation.DESCRIBE, AclPermissionType.DENY)))
    old = await client.request(ApiKey.OFFSET_FETCH, 7, {"group_id": "g", "topics": None,
                                                       "require_stable": False})
    assert [t.name for t in old.topics] == ["t"]
    new = await client.request(ApiKey.OFFSET_FETCH, 8, {"require_stable": False, "groups": [
        {"group_id": "g", "topics": None}]})
    assert [t.name for t in new.groups[0].topics] == ["t"]
