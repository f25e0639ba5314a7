"""Kafka's ``AuthorizerIntegrationTest.testAuthorizationWithTopicExisting``, mirrored over raw
frames: for each API, a request from ``User:ANONYMOUS`` with no ACLs answers the
authorization error of the resource Kafka checks, and the same request with the ACLs
``requestKeysToAcls`` lists answers anything but an authorization error.

Names and resources are Kafka's (topic ``topic``, group ``my-group``, transactional id
``transactional.id``); the ACLs per API are Kafka's ``requestKeysToAcls``, with kcoord's
newer APIs beside them (the security APIs, DeleteGroups, OffsetDelete, the KIP-848 APIs, the
share-group offsets APIs)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from storage.records import Record
from storage.security_records import AccessControlEntryKey, AccessControlEntryValue
from wire import ApiKey, ErrorCode
from wire.constants import AclOperation as Op
from wire.constants import AclPermissionType, PatternType
from wire.constants import ResourceType as R

TOPIC, GROUP, TXN = "topic", "my-group", "transactional.id"
CLUSTER = "kafka-cluster"
AUTHORIZER = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer"}
AUTH_ERRORS = {ErrorCode.TOPIC_AUTHORIZATION_FAILED, ErrorCode.GROUP_AUTHORIZATION_FAILED,
               ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
               ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}
ZERO = uuid.UUID(int=0)

Errors = Callable[[Any], int]


def top(answer: Any) -> int:
    return int(answer.error_code)


def first_partition(topics: str, partitions: str = "partitions") -> Errors:
    return lambda answer: int(getattr(getattr(answer, topics)[0], partitions)[0].error_code)


def first(entries: str, field: str = "error_code") -> Errors:
    return lambda answer: int(getattr(getattr(answer, entries)[0], field))


def metadata_error(answer: Any) -> int:
    found = [t.error_code for t in answer.topics if t.name == TOPIC]
    return int(found[0]) if found else ErrorCode.TOPIC_AUTHORIZATION_FAILED


PARTITION = {"partition_index": 0, "committed_offset": 1, "committed_leader_epoch": -1,
             "committed_metadata": ""}
FETCH = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1024,
         "isolation_level": 0, "session_id": 0, "session_epoch": -1, "topics": [
             {"topic": TOPIC, "partitions": [
                 {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                  "last_fetched_epoch": -1, "log_start_offset": -1,
                  "partition_max_bytes": 1024}]}], "forgotten_topics_data": [], "rack_id": ""}
OFFSET_FOR_LEADER_EPOCH = {"replica_id": -1, "topics": [{"topic": TOPIC, "partitions": [
    {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]}
ACL_FILTER = {"resource_type_filter": 1, "resource_name_filter": None, "pattern_type_filter": 1,
              "principal_filter": None, "host_filter": None, "operation": 1,
              "permission_type": 1}

# (api, version, body, the error to look at, the denied error, Kafka's ACLs for it)
CASES: list[tuple[ApiKey, int, dict[str, Any], Errors, ErrorCode,
                  list[tuple[R, str, Op]]]] = [
    (ApiKey.METADATA, 12, {"topics": [{"name": TOPIC, "topic_id": ZERO}],
                           "allow_auto_topic_creation": True}, metadata_error,
     ErrorCode.TOPIC_AUTHORIZATION_FAILED, [(R.TOPIC, TOPIC, Op.DESCRIBE)]),
    (ApiKey.PRODUCE, 9, {"transactional_id": None, "acks": 1, "timeout_ms": 5000,
                         "topic_data": [{"name": TOPIC, "partition_data": [
                             {"index": 0, "records": None}]}]},
     first_partition("responses", "partition_responses"), ErrorCode.TOPIC_AUTHORIZATION_FAILED,
     [(R.TOPIC, TOPIC, Op.WRITE)]),
    (ApiKey.FETCH, 12, FETCH, first_partition("responses"),
     ErrorCode.TOPIC_AUTHORIZATION_FAILED, [(R.TOPIC, TOPIC, Op.READ)]),
    (ApiKey.LIST_OFFSETS, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": TOPIC, "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                        "timestamp": -1}]}]},
     first_partition("topics"), ErrorCode.TOPIC_AUTHORIZATION_FAILED,
     [(R.TOPIC, TOPIC, Op.DESCRIBE)]),
    (ApiKey.OFFSET_FOR_LEADER_EPOCH, 4, OFFSET_FOR_LEADER_EPOCH, first_partition("topics"),
     ErrorCode.TOPIC_AUTHORIZATION_FAILED, [(R.TOPIC, TOPIC, Op.DESCRIBE)]),
    # (a follower's: CLUSTER_ACTION on the cluster allows every topic)
    (ApiKey.OFFSET_FOR_LEADER_EPOCH, 4, OFFSET_FOR_LEADER_EPOCH, first_partition("topics"),
     ErrorCode.TOPIC_AUTHORIZATION_FAILED, [(R.CLUSTER, CLUSTER, Op.CLUSTER_ACTION)]),
    (ApiKey.OFFSET_FETCH, 7, {"group_id": GROUP, "topics": [
        {"name": TOPIC, "partition_indexes": [0]}], "require_stable": False},
     top, ErrorCode.GROUP_AUTHORIZATION_FAILED,
     [(R.TOPIC, TOPIC, Op.READ), (R.GROUP, GROUP, Op.DESCRIBE)]),
    (ApiKey.FIND_COORDINATOR, 3, {"key": GROUP, "key_type": 0}, top,
     ErrorCode.GROUP_AUTHORIZATION_FAILED, [(R.GROUP, GROUP, Op.DESCRIBE)]),
    (ApiKey.JOIN_GROUP, 5, {"group_id": GROUP, "session_timeout_ms": 10000,
                            "rebalance_timeout_ms": 10000, "member_id": "",
                            "group_instance_id": None, "protocol_type": "consumer",
                            "protocols": [{"name": "range", "metadata": b""}]},
     top, ErrorCode.GROUP_AUTHORIZATION_FAILED, [(R.GROUP, GROUP, Op.READ)]),
    (ApiKey.SYNC_GROUP, 3, {"group_id": GROUP, "generation_id": 1, "member_id": "m",
                            "group_instance_id": None, "assignments": []},
     top, ErrorCode.GROUP_AUTHORIZATION_FAILED, [(R.GROUP, GROUP, Op.READ)]),
    (ApiKey.DESCRIBE_GROUPS, 5, {"groups": [GROUP], "include_authorized_operations": False},
     first("groups"), ErrorCode.GROUP_AUTHORIZATION_FAILED, [(R.GROUP, GROUP, Op.DESCRIBE)]),
    (ApiKey.OFFSET_COMMIT, 8, {"group_id": GROUP, "generation_id_or_member_epoch": -1,
                               "member_id": "", "group_instance_id": None, "topics": [
                                   {"name": TOPIC, "partitions": [PARTITION]}]},
     first_partition("topics"), ErrorCode.GROUP_AUTHORIZATION_FAILED,
     [(R.TOPIC, TOPIC, Op.READ), (R.GROUP, GROUP, Op.READ)]),
    (ApiKey.HEARTBEAT, 4, {"group_id": GROUP, "generation_id": 1, "member_id": "m",
                           "group_instance_id": None},
     top, ErrorCode.GROUP_AUTHORIZATION_FAILED, [(R.GROUP, GROUP, Op.READ)]),
    (ApiKey.LEAVE_GROUP, 3, {"group_id": GROUP, "members": [
        {"member_id": "m", "group_instance_id": None}]},
     top, ErrorCode.GROUP_AUTHORIZATION_FAILED, [(R.GROUP, GROUP, Op.READ)]),
    (ApiKey.DELETE_RECORDS, 2, {"topics": [{"name": TOPIC, "partitions": [
        {"partition_index": 0, "offset": 0}]}], "timeout_ms": 5000},
     first_partition("topics"), ErrorCode.TOPIC_AUTHORIZATION_FAILED,
     [(R.TOPIC, TOPIC, Op.DELETE)]),
    (ApiKey.CREATE_TOPICS, 5, {"topics": [{"name": "topic-new", "num_partitions": 1,
                                           "replication_factor": 1, "assignments": [],
                                           "configs": []}], "timeout_ms": 5000,
                               "validate_only": True},
     first("topics"), ErrorCode.TOPIC_AUTHORIZATION_FAILED, [(R.CLUSTER, CLUSTER, Op.CREATE)]),
    (ApiKey.DELETE_TOPICS, 4, {"topic_names": ["topic-delete"], "timeout_ms": 5000},
     first("responses"), ErrorCode.TOPIC_AUTHORIZATION_FAILED,
     [(R.TOPIC, "topic-delete", Op.DELETE)]),
    (ApiKey.DESCRIBE_CONFIGS, 4, {"resources": [{"resource_type": 2, "resource_name": TOPIC,
                                                 "configuration_keys": None}],
                                  "include_synonyms": False, "include_documentation": False},
     first("results"), ErrorCode.TOPIC_AUTHORIZATION_FAILED,
     [(R.TOPIC, TOPIC, Op.DESCRIBE_CONFIGS)]),
    (ApiKey.CREATE_PARTITIONS, 3, {"topics": [{"name": TOPIC, "count": 2,
                                               "assignments": None}],
                                   "timeout_ms": 5000, "validate_only": True},
     first("results"), ErrorCode.TOPIC_AUTHORIZATION_FAILED, [(R.TOPIC, TOPIC, Op.ALTER)]),
    (ApiKey.INIT_PRODUCER_ID, 4, {"transactional_id": TXN, "transaction_timeout_ms": 60000,
                                  "producer_id": -1, "producer_epoch": -1},
     top, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
     [(R.TRANSACTIONAL_ID, TXN, Op.WRITE), (R.CLUSTER, CLUSTER, Op.IDEMPOTENT_WRITE)]),
    (ApiKey.INIT_PRODUCER_ID, 4, {"transactional_id": None, "transaction_timeout_ms": 60000,
                                  "producer_id": -1, "producer_epoch": -1},
     top, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, [(R.CLUSTER, CLUSTER, Op.IDEMPOTENT_WRITE)]),
    (ApiKey.ADD_PARTITIONS_TO_TXN, 3, {"v3_and_below_transactional_id": TXN,
                                       "v3_and_below_producer_id": 1,
                                       "v3_and_below_producer_epoch": 1,
                                       "v3_and_below_topics": [
                                           {"name": TOPIC, "partitions": [0]}]},
     lambda a: int(a.results_by_topic_v3_and_below[0].results_by_partition[0]
                   .partition_error_code),
     ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
     [(R.TOPIC, TOPIC, Op.WRITE), (R.TRANSACTIONAL_ID, TXN, Op.WRITE)]),
    (ApiKey.ADD_OFFSETS_TO_TXN, 3, {"transactional_id": TXN, "producer_id": 1,
                                    "producer_epoch": 1, "group_id": GROUP},
     top, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
     [(R.GROUP, GROUP, Op.READ), (R.TRANSACTIONAL_ID, TXN, Op.WRITE)]),
    (ApiKey.END_TXN, 3, {"transactional_id": TXN, "producer_id": 1, "producer_epoch": 1,
                         "committed": True},
     top, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
     [(R.TRANSACTIONAL_ID, TXN, Op.WRITE)]),
    (ApiKey.TXN_OFFSET_COMMIT, 3, {"transactional_id": TXN, "group_id": GROUP,
                                   "producer_id": 1, "producer_epoch": 1,
                                   "generation_id": -1, "member_id": "",
                                   "group_instance_id": None, "topics": [
                                       {"name": TOPIC, "partitions": [PARTITION]}]},
     first_partition("topics"), ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
     [(R.GROUP, GROUP, Op.READ), (R.TRANSACTIONAL_ID, TXN, Op.WRITE),
      (R.TOPIC, TOPIC, Op.READ)]),
    (ApiKey.CREATE_ACLS, 3, {"creations": [
        {"resource_type": 2, "resource_name": "mytopic", "resource_pattern_type": 3,
         "principal": "User:x", "host": "*", "operation": 4, "permission_type": 2}]},
     first("results"), ErrorCode.CLUSTER_AUTHORIZATION_FAILED, [(R.CLUSTER, CLUSTER, Op.ALTER)]),
    (ApiKey.DESCRIBE_ACLS, 3, ACL_FILTER, top, ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
     [(R.CLUSTER, CLUSTER, Op.DESCRIBE)]),
    (ApiKey.DELETE_ACLS, 3, {"filters": [ACL_FILTER]}, first("filter_results"),
     ErrorCode.CLUSTER_AUTHORIZATION_FAILED, [(R.CLUSTER, CLUSTER, Op.ALTER)]),
    (ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, {"users": None}, top,
     ErrorCode.CLUSTER_AUTHORIZATION_FAILED, [(R.CLUSTER, CLUSTER, Op.DESCRIBE)]),
    (ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, {"deletions": [{"name": "x", "mechanism": 1}],
                                              "upsertions": []},
     first("results"), ErrorCode.CLUSTER_AUTHORIZATION_FAILED, [(R.CLUSTER, CLUSTER, Op.ALTER)]),
    (ApiKey.DELETE_GROUPS, 2, {"groups_names": [GROUP]}, first("results"),
     ErrorCode.GROUP_AUTHORIZATION_FAILED, [(R.GROUP, GROUP, Op.DELETE)]),
    (ApiKey.OFFSET_DELETE, 0, {"group_id": GROUP, "topics": [
        {"name": TOPIC, "partitions": [{"partition_index": 0}]}]},
     top, ErrorCode.GROUP_AUTHORIZATION_FAILED,
     [(R.GROUP, GROUP, Op.DELETE), (R.TOPIC, TOPIC, Op.READ)]),
    (ApiKey.DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": [TXN]}, first("transaction_states"),
     ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, [(R.TRANSACTIONAL_ID, TXN, Op.DESCRIBE)]),
    (ApiKey.CONSUMER_GROUP_HEARTBEAT, 0, {"group_id": GROUP, "member_id": "m",
                                          "member_epoch": 0, "instance_id": None,
                                          "rack_id": None, "rebalance_timeout_ms": 10000,
                                          "subscribed_topic_names": [TOPIC],
                                          "server_assignor": None, "topic_partitions": []},
     top, ErrorCode.GROUP_AUTHORIZATION_FAILED, [(R.GROUP, GROUP, Op.READ)]),
    (ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, 1, {"groups": [{"group_id": GROUP, "topics": [
        {"topic_name": TOPIC, "partitions": [0]}]}]},
     first("groups"), ErrorCode.GROUP_AUTHORIZATION_FAILED,
     [(R.GROUP, GROUP, Op.DESCRIBE), (R.TOPIC, TOPIC, Op.DESCRIBE)]),
    (ApiKey.ALTER_SHARE_GROUP_OFFSETS, 0, {"group_id": GROUP, "topics": [
        {"topic_name": TOPIC, "partitions": [{"partition_index": 0, "start_offset": 0}]}]},
     top, ErrorCode.GROUP_AUTHORIZATION_FAILED,
     [(R.GROUP, GROUP, Op.READ), (R.TOPIC, TOPIC, Op.READ)]),
    (ApiKey.DELETE_SHARE_GROUP_OFFSETS, 0, {"group_id": GROUP, "topics": [
        {"topic_name": TOPIC}]},
     top, ErrorCode.GROUP_AUTHORIZATION_FAILED,
     [(R.GROUP, GROUP, Op.DELETE), (R.TOPIC, TOPIC, Op.READ)]),
    (ApiKey.CONSUMER_GROUP_DESCRIBE, 0, {"group_ids": [GROUP],
                                         "include_authorized_operations": False},
     first("groups"), ErrorCode.GROUP_AUTHORIZATION_FAILED, [(R.GROUP, GROUP, Op.DESCRIBE)]),
]


@pytest.mark.parametrize(("api", "version", "body", "error_of", "denied", "acls"), CASES,
                         ids=[f"{c[0].name}-{i}" for i, c in enumerate(CASES)])
async def test_authorization_with_topic_existing(
    start_server: Any, connect: Any, api: ApiKey, version: int, body: dict[str, Any],
    error_of: Errors, denied: ErrorCode, acls: list[tuple[R, str, Op]],
) -> None:
    running = await start_server(
        {**AUTHORIZER, "group.coordinator.rebalance.protocols": "classic,consumer"},
        topics=((TOPIC, 1), ("topic-delete", 1)))
    client = await connect(running.port)
    assert error_of(await client.request(api, version, body)) == denied
    for kind, name, operation in acls:
        running.runtime.security.replay(Record(
            AccessControlEntryKey(uuid.uuid4()), AccessControlEntryValue(
                kind, name, PatternType.LITERAL, "User:ANONYMOUS", "*", operation,
                AclPermissionType.ALLOW)))
    assert error_of(await client.request(api, version, body)) not in AUTH_ERRORS
