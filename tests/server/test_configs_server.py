"""The config APIs over raw frames on an in-process server (issue 30 item 1): changes taking
effect -- a group's consumer.heartbeat.interval.ms and consumer.session.timeout.ms in
ConsumerGroupHeartbeat, a topic's configs in the topic store, dynamic broker keys in the
server's config -- validate_only changing nothing, ListConfigResources, DescribeConfigs'
synonyms and documentation, and the records in the log (key version 107)."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from coordinator.core.timers import ConsumerSessionTimerKey
from storage.config_records import ConfigRecordKey
from wire import ErrorCode

pytestmark = pytest.mark.trio

DESCRIBE, ALTER, INCREMENTAL, CGH, LIST_RESOURCES = 32, 33, 44, 68, 74
TOPIC, BROKER, GROUP = 2, 4, 32
SET, DELETE = 0, 1


def incremental(kind: int, name: str, *ops: tuple[str, int, str | None],
                validate_only: bool = False) -> dict[str, Any]:
    return {"validate_only": validate_only, "resources": [{
        "resource_type": kind, "resource_name": name,
        "configs": [{"name": n, "config_operation": op, "value": v} for n, op, v in ops]}]}


async def test_a_groups_timeouts_take_effect(start_server: Any, connect: Any) -> None:
    running = await start_server({}, topics=(("t", 2),))
    client = await connect(running.port)
    got = await client.request(INCREMENTAL, 1, incremental(
        GROUP, "g", ("consumer.heartbeat.interval.ms", SET, "7000"),
        ("consumer.session.timeout.ms", SET, "50000")))
    assert [r.error_code for r in got.responses] == [ErrorCode.NONE]
    joined = await client.request(CGH, 0, {
        "group_id": "g", "member_id": "m1", "member_epoch": 0, "rebalance_timeout_ms": 30000,
        "subscribed_topic_names": ["t"], "topic_partitions": []})
    assert (joined.error_code, joined.heartbeat_interval_ms) == (0, 7000)
    runtime = running.server.groups
    deadline = runtime.armed_timers()[ConsumerSessionTimerKey("g", joined.member_id)]
    assert deadline - runtime.now_ms() > 45_000  # the group's 50 s, not the broker's 45 s
    other = await client.request(CGH, 0, {
        "group_id": "other", "member_id": "m2", "member_epoch": 0,
        "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["t"],
        "topic_partitions": []})
    assert other.heartbeat_interval_ms == 5000


async def test_topic_and_broker_changes_take_effect(start_server: Any, connect: Any) -> None:
    running = await start_server({}, topics=(("t", 1),))
    client = await connect(running.port)
    checked = await client.request(INCREMENTAL, 1, incremental(
        TOPIC, "t", ("retention.ms", SET, "1000"), validate_only=True))
    assert checked.responses[0].error_code == ErrorCode.NONE
    topic = running.server.topics.get("t")
    assert "retention.ms" not in topic.configs
    before = len(running.server.groups.sink.records)
    await client.request(ALTER, 1, {"validate_only": False, "resources": [{
        "resource_type": TOPIC, "resource_name": "t",
        "configs": [{"name": "retention.ms", "value": "1000"},
                    {"name": "cleanup.policy", "value": "compact,delete"}]}]})
    assert topic.configs == {"retention.ms": "1000", "cleanup.policy": "compact,delete"}
    assert topic.compacted and topic.deletes_records
    got = await client.request(INCREMENTAL, 0, incremental(
        BROKER, "0", ("message.max.bytes", SET, "5000")))
    assert got.responses[0].error_code == ErrorCode.NONE
    assert running.server.config["message.max.bytes"] == "5000"
    await client.request(INCREMENTAL, 0, incremental(BROKER, "0", ("message.max.bytes", DELETE,
                                                                   None)))
    assert running.server.config["message.max.bytes"] == "1048588"
    written = running.server.groups.sink.records[before:]
    assert {type(r.key) for r in written} == {ConfigRecordKey}
    assert len(written) == 4


async def test_describe_synonyms_and_documentation(start_server: Any, connect: Any) -> None:
    running = await start_server({}, topics=(("t", 1),))
    client = await connect(running.port)
    await client.request(INCREMENTAL, 1, incremental(BROKER, "", ("log.retention.ms", SET,
                                                                  "3600000")))
    got = await client.request(DESCRIBE, 4, {"resources": [{
        "resource_type": TOPIC, "resource_name": "t", "configuration_keys": ["retention.ms"]}],
        "include_synonyms": True, "include_documentation": True})
    (entry,) = got.results[0].configs
    assert (entry.value, entry.config_source, entry.config_type) == ("3600000", 3, 5)
    assert [(s.name, s.value, s.source) for s in entry.synonyms] == [
        ("log.retention.ms", "3600000", 3), ("log.retention.hours", "168", 5)]
    assert entry.documentation
    group = await client.request(DESCRIBE, 4, {"resources": [{
        "resource_type": GROUP, "resource_name": "g", "configuration_keys": None}],
        "include_synonyms": False, "include_documentation": False})
    assert {c.name for c in group.results[0].configs} >= {
        "consumer.session.timeout.ms", "consumer.heartbeat.interval.ms",
        "share.session.timeout.ms"}


async def test_list_config_resources(start_server: Any, connect: Any) -> None:
    running = await start_server({}, topics=(("t", 1),))
    client = await connect(running.port)
    await client.request(INCREMENTAL, 1, incremental(GROUP, "cfg-group", (
        "consumer.session.timeout.ms", SET, "50000")))
    v0 = await client.request(LIST_RESOURCES, 0, {})
    assert (v0.error_code, list(v0.config_resources)) == (0, [])
    v1 = await client.request(LIST_RESOURCES, 1, {"resource_types": [TOPIC, GROUP, BROKER]})
    assert [(r.resource_type, r.resource_name) for r in v1.config_resources] == [
        (TOPIC, "__consumer_offsets"), (TOPIC, "__transaction_state"), (TOPIC, "t"),
        (GROUP, "cfg-group"), (BROKER, "0")]
    bad = await client.request(LIST_RESOURCES, 1, {"resource_types": [3]})
    assert bad.error_code == ErrorCode.UNSUPPORTED_VERSION


async def test_concurrent_alters_each_see_the_one_before(start_server: Any,
                                                         connect: Any) -> None:
    running = await start_server({}, topics=(("t", 1),))
    first, second = await connect(running.port), await connect(running.port)
    answers: list[Any] = []
    sink = running.server.groups.sink
    keep = sink.append

    async def slow_append(records: Any) -> None:  # each append takes a while, as on a disk
        await trio.sleep(0.05)
        await keep(records)

    sink.append_nowait = lambda records: False
    sink.append = slow_append

    async def alter(client: Any, op: int, value: str) -> None:
        answers.append(await client.request(INCREMENTAL, 1, incremental(
            TOPIC, "t", ("cleanup.policy", op, value))))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(alter, first, 2, "compact")  # APPEND
        nursery.start_soon(alter, second, 3, "delete")  # SUBTRACT
    assert [a.responses[0].error_code for a in answers] == [0, 0]
    assert running.server.topics.get("t").configs == {"cleanup.policy": "compact"}


async def test_each_broker_alters_its_own_resource(start_server: Any, connect: Any) -> None:
    running = await start_server({}, brokers=2)
    client = await connect(running.brokers.ports[1])
    mine = await client.request(INCREMENTAL, 1, incremental(BROKER, "1", (
        "log.cleaner.threads", SET, "2")))
    other = await client.request(INCREMENTAL, 1, incremental(BROKER, "0", (
        "log.cleaner.threads", SET, "2")))
    assert [(r.error_code, r.error_message) for r in (*mine.responses, *other.responses)] == [
        (ErrorCode.NONE, None),
        (ErrorCode.INVALID_REQUEST, "Unexpected broker id, expected 1, but received 0")]


async def test_the_cluster_min_insync_replicas_of_elr(start_server: Any, connect: Any) -> None:
    """As a Kafka 4.1+ controller on activation (ELR on): a cluster-level
    min.insync.replicas of the static value is written, so every topic reports it as a
    dynamic cluster default (confluent-kafka-python's test_incremental_alter_configs
    expects it); a broker-level one is refused."""
    running = await start_server({}, topics=(("t", 1),))
    client = await connect(running.port)
    got = await client.request(DESCRIBE, 4, {"resources": [{
        "resource_type": TOPIC, "resource_name": "t",
        "configuration_keys": ["min.insync.replicas"]}],
        "include_synonyms": False, "include_documentation": False})
    (entry,) = got.results[0].configs
    # DYNAMIC_DEFAULT_BROKER_CONFIG
    assert (entry.value, entry.config_source, entry.is_default) == ("1", 3, False)
    written = [r for r in running.server.groups.sink.records
               if isinstance(r.key, ConfigRecordKey)]
    assert [(r.key.resource_name, r.key.name, r.value.value) for r in written] == [
        ("", "min.insync.replicas", "1")]
    refused = await client.request(INCREMENTAL, 1, incremental(
        BROKER, "0", ("min.insync.replicas", SET, "1")))
    assert [(r.error_code, r.error_message) for r in refused.responses] == [(
        ErrorCode.INVALID_CONFIG,
        "Broker-level min.insync.replicas cannot be altered while ELR is enabled.")]


async def test_a_brokers_dynamic_configs_apply_to_it_alone(start_server: Any,
                                                          connect: Any) -> None:
    """``--brokers 3``: BROKER "1"'s dynamic value is broker 1's config (what its handlers
    read) and what it describes as DYNAMIC_BROKER_CONFIG; brokers 0 and 2 keep theirs; the
    cluster-wide default reaches every broker, below a broker's own value."""
    running = await start_server({}, brokers=3)
    servers = running.brokers.servers
    one = await connect(running.brokers.ports[1])
    got = await one.request(INCREMENTAL, 1, incremental(
        BROKER, "1", ("message.max.bytes", SET, "5000")))
    assert [r.error_code for r in got.responses] == [ErrorCode.NONE]
    assert [servers[n].config["message.max.bytes"] for n in (0, 1, 2)] == [
        "1048588", "5000", "1048588"]

    async def described(client: Any, name: str) -> tuple[str, int]:
        answer = await client.request(DESCRIBE, 4, {"resources": [{
            "resource_type": BROKER, "resource_name": name,
            "configuration_keys": ["message.max.bytes"]}],
            "include_synonyms": False, "include_documentation": False})
        (entry,) = answer.results[0].configs
        return entry.value, entry.config_source

    zero = await connect(running.brokers.ports[0])
    assert await described(one, "1") == ("5000", 2)  # DYNAMIC_BROKER_CONFIG
    assert await described(zero, "0") == ("1048588", 5)  # DEFAULT_CONFIG
    got = await zero.request(INCREMENTAL, 1, incremental(
        BROKER, "", ("message.max.bytes", SET, "7000")))
    assert [r.error_code for r in got.responses] == [ErrorCode.NONE]
    assert [servers[n].config["message.max.bytes"] for n in (0, 1, 2)] == [
        "7000", "5000", "7000"]
    assert await described(zero, "0") == ("7000", 3)  # DYNAMIC_DEFAULT_BROKER_CONFIG
    await one.request(INCREMENTAL, 1, incremental(BROKER, "1", ("message.max.bytes", DELETE,
                                                                 None)))
    assert servers[1].config["message.max.bytes"] == "7000"


async def test_a_groups_defaults_are_the_brokers_group_keys(start_server: Any,
                                                           connect: Any) -> None:
    """GroupCoordinatorConfig.extractGroupConfigMap: each GroupConfig key with a broker
    default (consumer.* and share.*) reads the broker's value (the share.* ones read
    Kafka's default before, whatever group.share.* the server was given), with that broker
    key's source (ConfigHelper.createGroupConfigEntry: STATIC_BROKER_CONFIG when given)."""
    running = await start_server({"group.share.session.timeout.ms": "50000",
                                  "group.consumer.heartbeat.interval.ms": "6000"})
    client = await connect(running.port)
    got = await client.request(DESCRIBE, 4, {"resources": [{
        "resource_type": GROUP, "resource_name": "g", "configuration_keys": [
            "consumer.heartbeat.interval.ms", "share.session.timeout.ms",
            "share.heartbeat.interval.ms"]}],
        "include_synonyms": False, "include_documentation": False})
    assert [(c.name, c.value, c.config_source) for c in got.results[0].configs] == [
        ("consumer.heartbeat.interval.ms", "6000", 4), ("share.heartbeat.interval.ms", "5000", 5),
        ("share.session.timeout.ms", "50000", 4)]
