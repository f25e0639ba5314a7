"""DescribeConfigs of a GROUP resource with its broker synonyms, over raw frames, as Kafka's
``ConfigHelper.createGroupConfigEntry`` answers: each group key follows the broker key
``group.<key>`` (``GroupCoordinatorConfig.GROUP_PREFIX``), whose layers (dynamic broker,
dynamic cluster default, static, Kafka's default) are its synonyms, each with its own source;
a value set on the group comes first as GROUP_CONFIG (8). The entry's value and source are
the first synonym's. A group key with no broker key (``share.auto.offset.reset``) has its
GroupConfig default as its only synonym, DEFAULT_CONFIG. The broker's ``group.consumer.*``
keys are not dynamic in Kafka (``GroupCoordinatorConfig.RECONFIGURABLE_CONFIGS`` has none of
them): altering them on a broker or the cluster default is refused and changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from wire import ApiKey, ErrorCode
from wire.constants import ConfigSource

pytestmark = pytest.mark.trio

DESCRIBE, INCREMENTAL = ApiKey.DESCRIBE_CONFIGS, ApiKey.INCREMENTAL_ALTER_CONFIGS
BROKER, GROUP = 4, 32
SESSION, BROKER_SESSION = "consumer.session.timeout.ms", "group.consumer.session.timeout.ms"
DEFAULT, STATIC = ConfigSource.DEFAULT_CONFIG, ConfigSource.STATIC_BROKER_CONFIG


async def _describe(client: Any, group: str, synonyms: bool = True,
                    version: int = 4) -> dict[str, Any]:
    body: dict[str, Any] = {"resources": [{"resource_type": GROUP, "resource_name": group,
                                           "configuration_keys": None}]}
    if version >= 1:
        body["include_synonyms"] = synonyms
    if version >= 3:
        body["include_documentation"] = False
    got = await client.request(DESCRIBE, version, body)
    (result,) = got.results
    assert result.error_code == ErrorCode.NONE
    return {c.name: c for c in result.configs}


def _synonyms(config: Any) -> list[tuple[str, str | None, int]]:
    return [(s.name, s.value, s.source) for s in config.synonyms]


async def _alter(client: Any, kind: int, name: str, key: str, value: str | None) -> int:
    operation = 0 if value is not None else 1  # SET / DELETE
    got = await client.request(INCREMENTAL, 1, {"validate_only": False, "resources": [{
        "resource_type": kind, "resource_name": name,
        "configs": [{"name": key, "config_operation": operation, "value": value}]}]})
    (response,) = got.responses
    return int(response.error_code)


async def test_defaults_have_the_broker_key_as_synonym(start_server: Any,
                                                       connect: Any) -> None:
    running = await start_server()
    configs = await _describe(await connect(running.port), "g")
    session = configs[SESSION]
    assert (session.value, session.config_source) == ("45000", DEFAULT)
    assert _synonyms(session) == [(BROKER_SESSION, "45000", DEFAULT)]
    assert _synonyms(configs["consumer.heartbeat.interval.ms"]) == [
        ("group.consumer.heartbeat.interval.ms", "5000", DEFAULT)]
    assert _synonyms(configs["share.record.lock.duration.ms"]) == [
        ("group.share.record.lock.duration.ms", "30000", DEFAULT)]
    # No broker key group.share.auto.offset.reset: the GroupConfig default, under its own name.
    assert _synonyms(configs["share.auto.offset.reset"]) == [
        ("share.auto.offset.reset", "latest", DEFAULT)]


async def test_a_static_broker_key_is_the_group_keys_source(start_server: Any,
                                                            connect: Any) -> None:
    running = await start_server({BROKER_SESSION: "50000",
                                  "group.share.heartbeat.interval.ms": "6000"})
    client = await connect(running.port)
    configs = await _describe(client, "g")
    session = configs[SESSION]
    assert (session.value, session.config_source) == ("50000", STATIC)
    assert _synonyms(session) == [(BROKER_SESSION, "50000", STATIC),
                                  (BROKER_SESSION, "45000", DEFAULT)]
    share = configs["share.heartbeat.interval.ms"]
    assert (share.value, share.config_source) == ("6000", STATIC)
    assert _synonyms(share) == [("group.share.heartbeat.interval.ms", "6000", STATIC),
                                ("group.share.heartbeat.interval.ms", "5000", DEFAULT)]
    assert configs["consumer.heartbeat.interval.ms"].config_source == DEFAULT
    # Without include_synonyms: the same value and source, no synonyms.
    bare = (await _describe(client, "g", synonyms=False))[SESSION]
    assert (bare.value, bare.config_source, bare.synonyms) == ("50000", STATIC, [])
    # v0 has no source: is_default says the value is not Kafka's default.
    old = (await _describe(client, "g", version=0))[SESSION]
    assert (old.value, old.is_default) == ("50000", False)
    # The broker resource shows the same layers: Kafka's static defaults cover every key
    # (DynamicBrokerConfig.staticDefaultConfigs), not only the dynamic ones.
    got = await client.request(DESCRIBE, 4, {"resources": [{
        "resource_type": BROKER, "resource_name": "0", "configuration_keys": [BROKER_SESSION]}],
        "include_synonyms": True, "include_documentation": False})
    (broker,) = got.results[0].configs
    assert (broker.value, broker.config_source, broker.read_only) == ("50000", STATIC, True)
    assert _synonyms(broker) == _synonyms(session)


async def test_a_value_set_on_the_group_comes_first(start_server: Any, connect: Any) -> None:
    running = await start_server({BROKER_SESSION: "50000"})
    client = await connect(running.port)
    assert await _alter(client, GROUP, "g", SESSION, "55000") == ErrorCode.NONE
    configs = await _describe(client, "g")
    session = configs[SESSION]
    assert (session.value, session.config_source) == ("55000", ConfigSource.GROUP_CONFIG)
    assert _synonyms(session) == [(SESSION, "55000", ConfigSource.GROUP_CONFIG),
                                  (BROKER_SESSION, "50000", STATIC),
                                  (BROKER_SESSION, "45000", DEFAULT)]
    assert await _alter(client, GROUP, "g", "share.auto.offset.reset", "earliest") == 0
    reset = (await _describe(client, "g"))["share.auto.offset.reset"]
    assert (reset.value, reset.config_source) == ("earliest", ConfigSource.GROUP_CONFIG)
    assert _synonyms(reset) == [("share.auto.offset.reset", "earliest", 8),
                                ("share.auto.offset.reset", "latest", DEFAULT)]
    # Another group follows the broker; deleting the group's value goes back to it.
    other = (await _describe(client, "other"))[SESSION]
    assert (other.value, other.config_source) == ("50000", STATIC)
    assert await _alter(client, GROUP, "g", SESSION, None) == ErrorCode.NONE
    session = (await _describe(client, "g"))[SESSION]
    assert (session.value, session.config_source) == ("50000", STATIC)
    assert _synonyms(session)[0] == (BROKER_SESSION, "50000", STATIC)


@pytest.mark.parametrize("broker", ["0", ""])
async def test_the_broker_group_keys_are_not_dynamic(start_server: Any, connect: Any,
                                                     broker: str) -> None:
    running = await start_server()
    client = await connect(running.port)
    assert await _alter(client, BROKER, broker, BROKER_SESSION, "50000") == (
        ErrorCode.INVALID_REQUEST)
    session = (await _describe(client, "g"))[SESSION]
    assert (session.value, session.config_source) == ("45000", DEFAULT)
    assert _synonyms(session) == [(BROKER_SESSION, "45000", DEFAULT)]
