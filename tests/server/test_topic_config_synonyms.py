"""DescribeConfigs synonyms of TOPIC and BROKER resources as Kafka's ``ConfigHelper`` lists
them, over raw frames. ``configSynonyms`` walks the sources (dynamic broker, dynamic cluster
default, static, default) and within each the keys of one setting
(``DynamicBrokerConfig.brokerConfigSynonyms``: ``log.retention.ms``, ``.minutes``,
``.hours``), then drops every synonym before the described key's first own one. So a topic's
``retention.ms`` (broker key ``log.retention.ms``, whose default is null) has no synonyms and
is DEFAULT_CONFIG until ``log.retention.ms`` itself is set, as a real Kafka prints
``retention.ms=604800000 sensitive=false synonyms={}``; its value is still the setting's
(``log.retention.hours`` read in ms). A topic key with no broker synonym has none either."""

from __future__ import annotations

from typing import Any

import pytest

from wire import ApiKey, ErrorCode
from wire.constants import ConfigSource

pytestmark = pytest.mark.trio

DESCRIBE, INCREMENTAL = ApiKey.DESCRIBE_CONFIGS, ApiKey.INCREMENTAL_ALTER_CONFIGS
TOPIC, BROKER = 2, 4
DEFAULT, STATIC = ConfigSource.DEFAULT_CONFIG, ConfigSource.STATIC_BROKER_CONFIG
DYNAMIC, CLUSTER = ConfigSource.DYNAMIC_BROKER_CONFIG, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
TOPIC_CONFIG = ConfigSource.TOPIC_CONFIG
WEEK_MS = "604800000"


async def _describe(client: Any, kind: int, name: str) -> dict[str, Any]:
    got = await client.request(DESCRIBE, 4, {"resources": [{
        "resource_type": kind, "resource_name": name, "configuration_keys": None}],
        "include_synonyms": True, "include_documentation": False})
    (result,) = got.results
    assert result.error_code == ErrorCode.NONE
    return {c.name: c for c in result.configs}


def _view(config: Any) -> tuple[str | None, int, list[tuple[str, str | None, int]]]:
    return (config.value, config.config_source,
            [(s.name, s.value, s.source) for s in config.synonyms])


async def _set(client: Any, kind: int, name: str, key: str, value: str) -> None:
    got = await client.request(INCREMENTAL, 1, {"validate_only": False, "resources": [{
        "resource_type": kind, "resource_name": name,
        "configs": [{"name": key, "config_operation": 0, "value": value}]}]})
    assert [r.error_code for r in got.responses] == [ErrorCode.NONE]


async def test_defaults_drop_the_synonyms_before_the_topic_keys_broker_key(
        start_server: Any, connect: Any) -> None:
    running = await start_server(topics=(("t", 1),))
    client = await connect(running.port)
    topic = await _describe(client, TOPIC, "t")
    assert _view(topic["retention.ms"]) == (WEEK_MS, DEFAULT, [])
    assert _view(topic["segment.ms"]) == (WEEK_MS, DEFAULT, [])
    assert _view(topic["segment.bytes"]) == (
        "1073741824", DEFAULT, [("log.segment.bytes", "1073741824", DEFAULT)])
    # No broker synonym: the topic key's default, and no synonym under its own name.
    assert _view(topic["remote.storage.enable"]) == ("false", DEFAULT, [])
    broker = await _describe(client, BROKER, "0")
    assert _view(broker["log.retention.ms"]) == (None, DEFAULT, [])
    assert _view(broker["log.retention.hours"]) == ("168", DEFAULT,
                                                    [("log.retention.hours", "168", DEFAULT)])


async def test_a_static_lesser_unit_sets_the_value_not_the_source(start_server: Any,
                                                                   connect: Any) -> None:
    running = await start_server({"log.retention.hours": "24"}, topics=(("t", 1),))
    client = await connect(running.port)
    topic = await _describe(client, TOPIC, "t")
    assert _view(topic["retention.ms"]) == ("86400000", DEFAULT, [])
    broker = await _describe(client, BROKER, "0")
    assert _view(broker["log.retention.hours"]) == ("24", STATIC, [
        ("log.retention.hours", "24", STATIC), ("log.retention.hours", "168", DEFAULT)])


async def test_config_describe_using_admin_client(start_server: Any, connect: Any) -> None:
    """Kafka's DynamicBrokerReconfigurationTest.testConfigDescribeUsingAdminClient, its log
    configs: started with log.retention.ms and log.retention.hours."""
    running = await start_server({"log.retention.ms": "1680000000", "log.retention.hours": "168"},
                                 topics=(("t", 1), ("kept", 1)))
    client = await connect(running.port)
    broker = await _describe(client, BROKER, "0")

    def synonyms(name: str) -> list[tuple[str, int]]:
        return [(s.name, s.source) for s in broker[name].synonyms]

    assert (broker["log.retention.ms"].value, broker["log.retention.ms"].read_only) == (
        "1680000000", False)
    assert (broker["log.retention.hours"].value, broker["log.retention.hours"].read_only) == (
        "168", True)
    assert broker["log.roll.hours"].read_only is True
    assert broker["log.cleaner.threads"].read_only is False
    assert synonyms("log.retention.ms") == [("log.retention.ms", STATIC),
                                            ("log.retention.hours", STATIC),
                                            ("log.retention.hours", DEFAULT)]
    assert synonyms("log.retention.hours") == [("log.retention.hours", STATIC),
                                               ("log.retention.hours", DEFAULT)]
    assert synonyms("log.roll.hours") == [("log.roll.hours", DEFAULT)]
    assert synonyms("log.cleaner.threads") == [("log.cleaner.threads", DEFAULT)]
    # A topic follows log.retention.ms' synonyms; a dynamic value comes first, its own after.
    await _set(client, BROKER, "0", "log.retention.ms", "60000")
    topic = await _describe(client, TOPIC, "t")
    assert _view(topic["retention.ms"]) == ("60000", DYNAMIC, [
        ("log.retention.ms", "60000", DYNAMIC), ("log.retention.ms", "1680000000", STATIC),
        ("log.retention.hours", "168", STATIC), ("log.retention.hours", "168", DEFAULT)])
    await _set(client, TOPIC, "kept", "retention.ms", "1000")
    kept = await _describe(client, TOPIC, "kept")
    assert _view(kept["retention.ms"])[:2] == ("1000", TOPIC_CONFIG)
    assert _view(kept["retention.ms"])[2][:2] == [("retention.ms", "1000", TOPIC_CONFIG),
                                                  ("log.retention.ms", "60000", DYNAMIC)]


async def test_the_cluster_default_lists_only_its_own_synonyms(start_server: Any,
                                                               connect: Any) -> None:
    running = await start_server({"log.retention.hours": "24"}, topics=(("t", 1),))
    client = await connect(running.port)
    await _set(client, BROKER, "", "log.retention.ms", "7200000")
    await _set(client, BROKER, "0", "log.retention.ms", "3600000")
    defaults = await _describe(client, BROKER, "")
    assert _view(defaults["log.retention.ms"]) == ("7200000", CLUSTER, [
        ("log.retention.ms", "7200000", CLUSTER)])
    broker = await _describe(client, BROKER, "0")
    assert _view(broker["log.retention.ms"]) == ("3600000", DYNAMIC, [
        ("log.retention.ms", "3600000", DYNAMIC), ("log.retention.ms", "7200000", CLUSTER),
        ("log.retention.hours", "24", STATIC), ("log.retention.hours", "168", DEFAULT)])
    topic = await _describe(client, TOPIC, "t")
    assert _view(topic["retention.ms"]) == _view(broker["log.retention.ms"])
