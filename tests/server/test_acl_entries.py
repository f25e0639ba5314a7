"""Per-entry authorization over raw frames (issue 29), as Kafka's ``KafkaApis`` does it: a
principal allowed some of a request's entries and denied others gets each denied entry
answered with its resource type's authorization error while the allowed ones are served
(``coordinator.server.acl_entries``). The principal is a PLAINTEXT client,
``User:ANONYMOUS``."""

from __future__ import annotations

import uuid
from typing import Any

from coordinator.server.app import RunningServer
from storage.records import Record
from storage.security_records import AccessControlEntryKey, AccessControlEntryValue
from wire import ApiKey, ErrorCode
from wire.constants import AclOperation, AclPermissionType, PatternType, ResourceType

AUTHORIZER = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer"}
TOPIC_CONFIG, BROKER_CONFIG, GROUP_CONFIG = 2, 4, 32


def allow(running: RunningServer, kind: ResourceType, name: str,
          operation: AclOperation) -> None:
    running.runtime.security.replay(Record(
        AccessControlEntryKey(uuid.uuid4()), AccessControlEntryValue(
            kind, name, PatternType.LITERAL, "User:ANONYMOUS", "*", operation,
            AclPermissionType.ALLOW)))


def commit(group: str, topics: tuple[str, ...]) -> dict[str, Any]:
    return {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
            "group_instance_id": None, "topics": [{"name": t, "partitions": [
                {"partition_index": 0, "committed_offset": 7, "committed_leader_epoch": -1,
                 "committed_metadata": ""}]} for t in topics]}


async def test_offset_fetch_v8_answers_each_group_and_each_topic_inside_it(
    start_server: Any, connect: Any
) -> None:
    """Kafka's handleOffsetFetchRequestFromCoordinator: a group one may not DESCRIBE answers
    GROUP_AUTHORIZATION_FAILED; in an allowed group, a topic one may not DESCRIBE answers
    TOPIC_AUTHORIZATION_FAILED on each partition asked for, the others their offsets."""
    running = await start_server(AUTHORIZER, topics=(("t", 1), ("u", 1)))
    client = await connect(running.port)
    for group in ("mine", "theirs"):
        allow(running, ResourceType.GROUP, group, AclOperation.READ)
    allow(running, ResourceType.TOPIC, "t", AclOperation.READ)
    allow(running, ResourceType.TOPIC, "u", AclOperation.WRITE)  # (implies DESCRIBE)
    for group in ("mine", "theirs"):
        answer = await client.request(ApiKey.OFFSET_COMMIT, 8, commit(group, ("t",)))
        assert answer.topics[0].partitions[0].error_code == 0
    running.runtime.security.replay(Record(
        AccessControlEntryKey(uuid.uuid4()), AccessControlEntryValue(
            ResourceType.GROUP, "theirs", PatternType.LITERAL, "User:ANONYMOUS", "*",
            AclOperation.DESCRIBE, AclPermissionType.DENY)))
    allow(running, ResourceType.TOPIC, "hidden", AclOperation.ALTER_CONFIGS)  # (no DESCRIBE)
    wanted = [{"name": n, "partition_indexes": [0, 1]} for n in ("hidden", "t")]
    fetched = await client.request(ApiKey.OFFSET_FETCH, 9, {"require_stable": False, "groups": [
        {"group_id": g, "member_id": None, "member_epoch": -1, "topics": wanted}
        for g in ("theirs", "mine")]})
    groups = {g.group_id: g for g in fetched.groups}
    assert groups["theirs"].error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
    assert groups["theirs"].topics == []
    mine = groups["mine"]
    assert mine.error_code == 0
    partitions = {(t.name, p.partition_index): (p.error_code, p.committed_offset)
                  for t in mine.topics for p in t.partitions}
    assert partitions[("hidden", 0)][0] == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    assert partitions[("hidden", 1)][0] == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    assert partitions[("t", 0)] == (0, 7)


async def test_find_coordinator_v4_answers_each_key(start_server: Any, connect: Any) -> None:
    running = await start_server(AUTHORIZER)
    client = await connect(running.port)
    allow(running, ResourceType.GROUP, "mine", AclOperation.DESCRIBE)
    allow(running, ResourceType.TRANSACTIONAL_ID, "tx", AclOperation.WRITE)
    groups = await client.request(ApiKey.FIND_COORDINATOR, 4, {
        "key_type": 0, "coordinator_keys": ["theirs", "mine"]})
    found = {c.key: c for c in groups.coordinators}
    assert found["theirs"].error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
    assert found["mine"].error_code == 0
    assert found["mine"].port == running.port
    transactions = await client.request(ApiKey.FIND_COORDINATOR, 4, {
        "key_type": 1, "coordinator_keys": ["tx", "other"]})
    assert {c.key: c.error_code for c in transactions.coordinators} == {
        "tx": 0, "other": ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}
    v3 = await client.request(ApiKey.FIND_COORDINATOR, 3, {"key_type": 0, "key": "theirs"})
    assert v3.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED


async def test_describe_configs_answers_each_resource_with_its_types_error(
    start_server: Any, connect: Any
) -> None:
    """Kafka's ConfigHelper: BROKER resources need the cluster, TOPIC ones the topic, GROUP
    ones the group; each denied resource its own error, the allowed ones described."""
    running = await start_server(AUTHORIZER, topics=(("t", 1), ("u", 1)))
    client = await connect(running.port)
    allow(running, ResourceType.TOPIC, "t", AclOperation.DESCRIBE_CONFIGS)
    allow(running, ResourceType.GROUP, "g", AclOperation.ALTER_CONFIGS)  # implies DESCRIBE_
    resources = [(TOPIC_CONFIG, "u"), (TOPIC_CONFIG, "t"), (BROKER_CONFIG, "0"),
                 (GROUP_CONFIG, "g"), (GROUP_CONFIG, "h")]
    answer = await client.request(ApiKey.DESCRIBE_CONFIGS, 4, {
        "resources": [{"resource_type": kind, "resource_name": name, "configuration_keys": None}
                      for kind, name in resources],
        "include_synonyms": False, "include_documentation": False})
    errors = {(r.resource_type, r.resource_name): r.error_code for r in answer.results}
    assert errors == {(TOPIC_CONFIG, "u"): ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                      (TOPIC_CONFIG, "t"): 0,
                      (BROKER_CONFIG, "0"): ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                      (GROUP_CONFIG, "g"): 0,
                      (GROUP_CONFIG, "h"): ErrorCode.GROUP_AUTHORIZATION_FAILED}
    described = {r.resource_name: r for r in answer.results}
    assert any(c.name == "retention.ms" for c in described["t"].configs)
    assert described["u"].configs == []


async def test_alter_configs_alter_the_allowed_resources_only(start_server: Any,
                                                              connect: Any) -> None:
    """AlterConfigs and IncrementalAlterConfigs: the denied topic keeps its configs."""
    running = await start_server(AUTHORIZER, topics=(("t", 1), ("u", 1)))
    client = await connect(running.port)
    allow(running, ResourceType.TOPIC, "t", AclOperation.ALTER_CONFIGS)

    async def retention(topic: str) -> str | None:
        allow(running, ResourceType.TOPIC, topic, AclOperation.DESCRIBE_CONFIGS)
        answer = await client.request(ApiKey.DESCRIBE_CONFIGS, 4, {
            "resources": [{"resource_type": TOPIC_CONFIG, "resource_name": topic,
                           "configuration_keys": ["retention.ms"]}],
            "include_synonyms": False, "include_documentation": False})
        value: str | None = answer.results[0].configs[0].value
        return value

    legacy = await client.request(ApiKey.ALTER_CONFIGS, 2, {"resources": [
        {"resource_type": TOPIC_CONFIG, "resource_name": name,
         "configs": [{"name": "retention.ms", "value": "1000"}]} for name in ("u", "t")]
        + [{"resource_type": BROKER_CONFIG, "resource_name": "",
            "configs": [{"name": "log.retention.ms", "value": "1000"}]}],
        "validate_only": False})
    assert {(r.resource_type, r.resource_name): r.error_code for r in legacy.responses} == {
        (TOPIC_CONFIG, "u"): ErrorCode.TOPIC_AUTHORIZATION_FAILED, (TOPIC_CONFIG, "t"): 0,
        (BROKER_CONFIG, ""): ErrorCode.CLUSTER_AUTHORIZATION_FAILED}
    incremental = await client.request(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {"resources": [
        {"resource_type": TOPIC_CONFIG, "resource_name": name, "configs": [
            {"name": "retention.ms", "config_operation": 0, "value": "2000"}]}
        for name in ("t", "u")], "validate_only": False})
    assert {r.resource_name: r.error_code for r in incremental.responses} == {
        "t": 0, "u": ErrorCode.TOPIC_AUTHORIZATION_FAILED}
    assert await retention("t") == "2000"
    assert await retention("u") != "2000"


async def test_topic_lists_answer_each_topic(start_server: Any, connect: Any) -> None:
    """ListOffsets, DescribeProducers, CreateTopics, DeleteTopics: the denied topic answers
    TOPIC_AUTHORIZATION_FAILED, the allowed one is served."""
    running = await start_server(AUTHORIZER, topics=(("t", 1), ("u", 1)))
    client = await connect(running.port)
    allow(running, ResourceType.TOPIC, "t", AclOperation.ALL)
    allow(running, ResourceType.TOPIC, "new", AclOperation.CREATE)
    offsets = await client.request(ApiKey.LIST_OFFSETS, 7, {
        "replica_id": -1, "isolation_level": 0, "topics": [
            {"name": n, "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                        "timestamp": -1}]} for n in ("u", "t")]})
    assert {t.name: t.partitions[0].error_code for t in offsets.topics} == {
        "t": 0, "u": ErrorCode.TOPIC_AUTHORIZATION_FAILED}
    producers = await client.request(ApiKey.DESCRIBE_PRODUCERS, 0, {"topics": [
        {"name": n, "partition_indexes": [0]} for n in ("u", "t")]})
    assert {t.name: t.partitions[0].error_code for t in producers.topics} == {
        "t": 0, "u": ErrorCode.TOPIC_AUTHORIZATION_FAILED}
    created = await client.request(ApiKey.CREATE_TOPICS, 7, {"topics": [
        {"name": n, "num_partitions": 1, "replication_factor": 1, "assignments": [],
         "configs": []} for n in ("new", "forbidden")], "timeout_ms": 5000,
        "validate_only": False})
    assert {t.name: t.error_code for t in created.topics} == {
        "new": 0, "forbidden": ErrorCode.TOPIC_AUTHORIZATION_FAILED}
    assert running.server.topics.get("forbidden") is None
    deleted = await client.request(ApiKey.DELETE_TOPICS, 5, {
        "topic_names": ["u", "t"], "timeout_ms": 5000})
    assert {r.name: r.error_code for r in deleted.responses} == {
        "t": 0, "u": ErrorCode.TOPIC_AUTHORIZATION_FAILED}
    assert running.server.topics.get("u") is not None


async def test_add_partitions_to_txn_v3_fails_the_rest_when_one_topic_is_denied(
    start_server: Any, connect: Any
) -> None:
    """Kafka: one unauthorized topic fails the transaction's whole request, the authorized
    topics' partitions answering OPERATION_NOT_ATTEMPTED (nothing is added)."""
    running = await start_server(AUTHORIZER, topics=(("t", 1), ("u", 1)))
    client = await connect(running.port)
    allow(running, ResourceType.TRANSACTIONAL_ID, "tx", AclOperation.WRITE)
    allow(running, ResourceType.TOPIC, "t", AclOperation.WRITE)
    answer = await client.request(ApiKey.ADD_PARTITIONS_TO_TXN, 3, {
        "v3_and_below_transactional_id": "tx", "v3_and_below_producer_id": 1,
        "v3_and_below_producer_epoch": 0, "v3_and_below_topics": [
            {"name": n, "partitions": [0]} for n in ("t", "u")]})
    assert {r.name: r.results_by_partition[0].partition_error_code
            for r in answer.results_by_topic_v3_and_below} == {
        "t": ErrorCode.OPERATION_NOT_ATTEMPTED, "u": ErrorCode.TOPIC_AUTHORIZATION_FAILED}


async def test_every_entry_denied_answers_without_the_handler(start_server: Any,
                                                               connect: Any) -> None:
    """A request whose every entry is denied is answered with the errors alone (a Fetch
    with no topic left does not wait out its max_wait_ms)."""
    running = await start_server(AUTHORIZER, topics=(("t", 1),))
    client = await connect(running.port)
    partition = {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                 "last_fetched_epoch": -1, "log_start_offset": -1, "partition_max_bytes": 1024}
    answer = await client.request(ApiKey.FETCH, 12, {
        "replica_id": -1, "max_wait_ms": 60_000, "min_bytes": 1, "max_bytes": 4096,
        "isolation_level": 0, "session_id": 0, "session_epoch": -1,
        "topics": [{"topic": "t", "partitions": [partition]}],
        "forgotten_topics_data": [], "rack_id": ""})
    assert answer.error_code == 0
    assert [(r.topic, r.partitions[0].error_code) for r in answer.responses] == [
        ("t", ErrorCode.TOPIC_AUTHORIZATION_FAILED)]


async def test_delete_on_the_cluster_deletes_every_topic(start_server: Any,
                                                         connect: Any) -> None:
    """Kafka's ControllerApis.deleteTopics: DELETE on the cluster allows every topic."""
    running = await start_server(AUTHORIZER, topics=(("t", 1), ("u", 1)))
    client = await connect(running.port)
    allow(running, ResourceType.CLUSTER, "kafka-cluster", AclOperation.DELETE)
    deleted = await client.request(ApiKey.DELETE_TOPICS, 5, {
        "topic_names": ["u", "t"], "timeout_ms": 5000})
    assert {r.name: r.error_code for r in deleted.responses} == {"t": 0, "u": 0}
    assert running.server.topics.get("u") is None
