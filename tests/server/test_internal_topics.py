"""The internal topics (issue 30 item 5) over raw frames: listed in an all-topics Metadata
answer and when named, with ``is_internal`` true, their configured partition counts and
their coordinators as leaders; never auto-created; CreateTopics, DeleteTopics,
Produce and DeleteRecords refuse them; DescribeConfigs reports them compacted."""

from __future__ import annotations

from typing import Any

import pytest
from raw_client import batch

from coordinator.txn.placement import partition_for
from wire import ErrorCode

pytestmark = pytest.mark.trio

PRODUCE, METADATA, CREATE_TOPICS, DELETE_TOPICS, DESCRIBE_CONFIGS = 0, 3, 19, 20, 32
DELETE_RECORDS = 21
INTERNAL = ["__consumer_offsets", "__transaction_state"]
SMALL = {"offsets.topic.num.partitions": "7", "transaction.state.log.num.partitions": "3"}


def metadata_body(names: list[str] | None, auto: bool = True) -> dict[str, Any]:
    return {"topics": None if names is None else [{"name": n} for n in names],
            "allow_auto_topic_creation": auto, "include_topic_authorized_operations": False}


async def test_all_topics_lists_them_with_their_partition_counts(
    start_server: Any, connect: Any
) -> None:
    running = await start_server(SMALL)
    client = await connect(running.port)
    got = await client.request(METADATA, 12, metadata_body(None))
    by_name = {t.name: t for t in got.topics}
    assert sorted(by_name) == sorted(["t", *INTERNAL])
    assert not by_name["t"].is_internal
    for name, count in zip(INTERNAL, (7, 3), strict=True):
        topic = by_name[name]
        assert topic.is_internal and topic.error_code == 0
        assert [(p.partition_index, p.leader_id, p.error_code) for p in topic.partitions] == [
            (i, 0, 0) for i in range(count)]
    named = await client.request(METADATA, 12, metadata_body(INTERNAL, auto=True))
    assert [(t.name, t.is_internal, len(t.partitions)) for t in named.topics] == [
        ("__consumer_offsets", True, 7), ("__transaction_state", True, 3)]
    assert [t.topic_id for t in named.topics] == [by_name[n].topic_id for n in INTERNAL]
    by_id = await client.request(METADATA, 12, {
        "topics": [{"name": None, "topic_id": by_name["__transaction_state"].topic_id}],
        "allow_auto_topic_creation": False, "include_topic_authorized_operations": False})
    assert [(t.name, t.is_internal) for t in by_id.topics] == [("__transaction_state", True)]
    assert "__consumer_offsets" not in running.server.topics  # never an ordinary topic


async def test_the_default_is_fifty_partitions(start_server: Any, connect: Any) -> None:
    running = await start_server({})
    client = await connect(running.port)
    got = await client.request(METADATA, 9, metadata_body(INTERNAL, auto=False))
    assert [(t.error_code, len(t.partitions)) for t in got.topics] == [(0, 50), (0, 50)]


async def test_clients_cannot_create_delete_or_produce_to_them(
    start_server: Any, connect: Any
) -> None:
    running = await start_server(SMALL)
    client = await connect(running.port)
    created = await client.request(CREATE_TOPICS, 7, {
        "topics": [{"name": n, "num_partitions": 1, "replication_factor": 1,
                    "assignments": [], "configs": []} for n in INTERNAL],
        "timeout_ms": 5000, "validate_only": False})
    assert [(t.name, t.error_code, t.error_message) for t in created.topics] == [
        (n, ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{n}' already exists.") for n in INTERNAL]
    deleted = await client.request(DELETE_TOPICS, 5, {"topic_names": INTERNAL,
                                                      "timeout_ms": 5000})
    assert [(r.name, r.error_code) for r in deleted.responses] == [
        (n, ErrorCode.INVALID_REQUEST) for n in INTERNAL]
    assert deleted.responses[0].error_message == (
        "Topic __consumer_offsets is a kafka internal topic and is not allowed to be marked "
        "for deletion.")
    produced = await client.request(PRODUCE, 9, {
        "transactional_id": None, "acks": -1, "timeout_ms": 5000,
        "topic_data": [{"name": "__consumer_offsets", "partition_data": [
            {"index": 0, "records": batch([b"x"], -1, -1, -1, transactional=False)}]}]})
    (answer,) = produced.responses[0].partition_responses
    assert (answer.error_code, answer.error_message) == (
        ErrorCode.INVALID_TOPIC_EXCEPTION, "Cannot append to internal topic __consumer_offsets")
    trimmed = await client.request(DELETE_RECORDS, 2, {"topics": [{
        "name": "__transaction_state", "partitions": [{"partition_index": 0, "offset": -1}]}],
        "timeout_ms": 5000})
    assert trimmed.topics[0].partitions[0].error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    still = await client.request(METADATA, 12, metadata_body(None))
    assert sorted(t.name for t in still.topics) == sorted(["t", *INTERNAL])


async def test_describe_configs_reports_them_compacted(start_server: Any, connect: Any) -> None:
    running = await start_server({})
    client = await connect(running.port)
    got = await client.request(DESCRIBE_CONFIGS, 4, {
        "resources": [{"resource_type": 2, "resource_name": n,
                       "configuration_keys": ["cleanup.policy", "retention.ms"]}
                      for n in INTERNAL],
        "include_synonyms": False, "include_documentation": False})
    for result in got.results:
        assert result.error_code == 0
        assert [(c.name, c.value, c.config_source) for c in result.configs] == [
            ("cleanup.policy", "compact", 1), ("retention.ms", "604800000", 5)]


async def test_several_brokers_each_partition_is_led_by_its_coordinator(
    start_server: Any, connect: Any
) -> None:
    running = await start_server({}, brokers=3)
    partition = partition_for("moved-group", 50)
    stopped = partition % 3
    client = await connect(running.brokers.ports[(stopped + 1) % 3])
    got = await client.request(METADATA, 12, metadata_body(["__consumer_offsets"]))
    (topic,) = got.topics
    assert [p.leader_id for p in topic.partitions] == [p % 3 for p in range(50)]
    await running.brokers.stop(stopped)
    moved = await client.request(METADATA, 12, metadata_body(["__consumer_offsets"]))
    leader = moved.topics[0].partitions[partition].leader_id
    assert leader != stopped and leader in (0, 1, 2)


@pytest.mark.parametrize(("name", "key"), [
    ("__consumer_offsets", "offsets.topic.num.partitions"),
    ("__transaction_state", "transaction.state.log.num.partitions")])
async def test_a_start_up_topic_cannot_be_internal(name: str, key: str) -> None:
    from coordinator.config import ConfigError
    from coordinator.server.options import parse_topic

    with pytest.raises(ConfigError, match=f"{name} is an internal topic.*{key}"):
        parse_topic(f"{name}:3")
    assert parse_topic("__consumer_offsets_copy:3") == ("__consumer_offsets_copy", 3)
