"""DescribeConfigs (issue 12): a topic's configs with Kafka's defaults and sources, the
broker's own configuration, and Kafka's errors for unknown resources."""

from __future__ import annotations

from typing import Any

import pytest
from broker_support import VERSIONS, FakeState, call

from coordinator.server.apis.describe_configs import TOPIC_CONFIG_DEFAULTS
from wire import ErrorCode

API = 32


async def describe(state: FakeState, version: int, *resources: tuple[int, str, list[str] | None],
                   synonyms: bool = False) -> list[Any]:
    answer = await call(state, API, version, {
        "resources": [{"resource_type": t, "resource_name": n, "configuration_keys": keys}
                      for t, n, keys in resources],
        "include_synonyms": synonyms, "include_documentation": False})
    assert answer is not None
    return list(answer.results)


@pytest.mark.parametrize("version", VERSIONS[API])
async def test_topic_configs_with_defaults_and_overrides(state: FakeState, version: int) -> None:
    state.topics.create_topic("t", 1, {"retention.ms": "1000", "cleanup.policy": "compact"})
    (result,) = await describe(state, version, (2, "t", None), synonyms=True)
    assert (result.error_code, result.resource_name) == (0, "t")
    configs = {c.name: c for c in result.configs}
    assert set(configs) == set(TOPIC_CONFIG_DEFAULTS)
    assert configs["retention.ms"].value == "1000"
    assert configs["segment.bytes"].value == "1073741824"
    if version == 0:
        assert (configs["retention.ms"].is_default, configs["segment.bytes"].is_default) == (
            False, True)
    else:
        assert (configs["retention.ms"].config_source, configs["segment.bytes"].config_source) \
            == (1, 5)
        # Kafka's synonyms: the topic's value, then log.retention.ms' from its first own layer
        # on (configSynonyms' dropWhile: it has none, so log.retention.hours is dropped too).
        assert [(s.name, s.value, s.source) for s in configs["retention.ms"].synonyms] == [
            ("retention.ms", "1000", 1)]
        assert [(s.name, s.value, s.source) for s in configs["segment.bytes"].synonyms] == [
            ("log.segment.bytes", "1073741824", 5)]
    if version >= 3:
        assert (configs["retention.ms"].config_type, configs["cleanup.policy"].config_type) == (
            5, 7)


async def test_selected_keys_and_the_broker_message_size(state: FakeState) -> None:
    state.config["message.max.bytes"] = "2000000"
    state.topics.create_topic("t", 1)
    (result,) = await describe(state, 4, (2, "t", ["max.message.bytes", "no.such.key"]))
    assert [(c.name, c.value) for c in result.configs] == [("max.message.bytes", "2000000")]


async def test_the_broker_resource(state: FakeState) -> None:
    state.config["group.max.size"] = "5"
    node = str(state.identity.node_id)
    mine, defaults, other, garbage = await describe(
        state, 4, (4, node, ["group.max.size"]), (4, "", None), (4, "7", None), (4, "x", None))
    assert [(c.name, c.value, c.read_only) for c in mine.configs] == [
        ("group.max.size", "5", True)]
    assert (defaults.error_code, list(defaults.configs)) == (0, [])
    assert other.error_code == ErrorCode.INVALID_REQUEST
    assert garbage.error_code == ErrorCode.INVALID_REQUEST


async def test_errors(state: FakeState) -> None:
    missing, illegal, unsupported = await describe(
        state, 4, (2, "missing", None), (2, "bad name!", None), (3, "group", None))
    assert missing.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert illegal.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert unsupported.error_code == ErrorCode.INVALID_REQUEST


async def test_topic_defaults_follow_the_broker(state: FakeState) -> None:
    state.config.update({"log.retention.minutes": "5", "log.segment.bytes": "4096"})
    state.topics.create_topic("t", 1)
    (result,) = await describe(state, 4, (2, "t", ["retention.ms", "segment.bytes"]))
    assert {c.name: c.value for c in result.configs} == {
        "retention.ms": "300000", "segment.bytes": "4096"}


async def test_the_broker_keys_clients_read(state: FakeState) -> None:
    node = str(state.identity.node_id)
    address = f"PLAINTEXT://{state.identity.host}:{state.identity.port}"
    (result,) = await describe(state, 4, (4, node, [
        "listeners", "advertised.listeners", "node.id", "broker.id", "log.dirs",
        "process.roles"]))
    assert [(c.name, c.value, c.config_source) for c in result.configs] == [
        ("advertised.listeners", address, 5), ("broker.id", node, 4), ("listeners", address, 4),
        ("log.dirs", None, 5), ("node.id", node, 4), ("process.roles", "broker,controller", 4)]
