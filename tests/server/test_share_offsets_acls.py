"""The share-group offsets APIs with an authorizer, over TCP: Kafka's KafkaApis checks --
Describe: DESCRIBE on the group, then per topic (a denied named topic answers
TOPIC_AUTHORIZATION_FAILED, a denied topic of the group's every-topic answer is left out);
Alter: READ on the group, READ per topic; Delete: DELETE on the group, READ per topic (a
denied topic answers TOPIC_AUTHORIZATION_FAILED, the others are served)."""

from __future__ import annotations

import uuid
from typing import Any

from coordinator.server.app import RunningServer
from storage.records import Record
from storage.security_records import AccessControlEntryKey, AccessControlEntryValue
from wire import ApiKey, ErrorCode
from wire.constants import AclOperation, AclPermissionType, PatternType, ResourceType

AUTHORIZER = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer"}
GROUP = "g"
DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED


def _allow(running: RunningServer, kind: ResourceType, name: str,
           *operations: AclOperation) -> None:
    for operation in operations:
        running.runtime.security.replay(Record(
            AccessControlEntryKey(uuid.uuid4()), AccessControlEntryValue(
                kind, name, PatternType.LITERAL, "User:ANONYMOUS", "*", operation,
                AclPermissionType.ALLOW)))


def _partitions(answer: Any) -> dict[str, list[tuple[int, int]]]:
    return {t.topic_name: [(p.partition_index, p.error_code) for p in t.partitions]
            for t in answer.responses}


async def test_share_offsets_answer_denied_topics_alone(start_server: Any, connect: Any) -> None:
    running = await start_server(AUTHORIZER, topics=(("t", 1), ("u", 1)))
    client = await connect(running.port)
    describe = {"groups": [{"group_id": GROUP, "topics": [
        {"topic_name": "u", "partitions": [0]}, {"topic_name": "t", "partitions": [0]}]}]}
    refused = await client.request(ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, 1, describe)
    assert refused.groups[0].error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
    _allow(running, ResourceType.GROUP, GROUP, AclOperation.READ, AclOperation.DESCRIBE,
           AclOperation.DELETE)
    _allow(running, ResourceType.TOPIC, "t", AclOperation.READ, AclOperation.DESCRIBE)
    member = {"group_id": GROUP, "member_id": "0" * 22, "rack_id": None}
    joined = await client.request(ApiKey.SHARE_GROUP_HEARTBEAT, 1, {
        **member, "member_epoch": 0, "subscribed_topic_names": ["t", "u"]})
    assert joined.error_code == 0
    left = await client.request(ApiKey.SHARE_GROUP_HEARTBEAT, 1, {
        **member, "member_epoch": -1, "subscribed_topic_names": None})
    assert left.error_code == 0

    altered = await client.request(ApiKey.ALTER_SHARE_GROUP_OFFSETS, 0, {
        "group_id": GROUP, "topics": [
            {"topic_name": name, "partitions": [{"partition_index": 0, "start_offset": 0}]}
            for name in ("u", "t")]})
    assert altered.error_code == 0
    assert _partitions(altered) == {"t": [(0, 0)], "u": [(0, DENIED)]}

    described = await client.request(ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, 1, describe)
    (group,) = described.groups
    assert [(t.topic_name, t.partitions[0].start_offset, t.partitions[0].error_code)
            for t in group.topics] == [("t", 0, 0), ("u", -1, DENIED)]
    every = await client.request(ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, 1, {
        "groups": [{"group_id": GROUP, "topics": None}]})
    assert [t.topic_name for t in every.groups[0].topics] == ["t"]  # u is initialized too

    deleted = await client.request(ApiKey.DELETE_SHARE_GROUP_OFFSETS, 0, {
        "group_id": GROUP, "topics": [{"topic_name": "u"}, {"topic_name": "t"}]})
    assert deleted.error_code == 0
    assert sorted((t.topic_name, t.error_code) for t in deleted.responses) == [
        ("t", 0), ("u", DENIED)]
