"""DescribeConfigs of BROKER_LOGGER resources (KIP-412) and of the internal topics over raw
frames (issue 30): the process's loggers with their levels in log4j's names and
DYNAMIC_BROKER_LOGGER_CONFIG, ConfigHelper's errors for the broker id, CLUSTER
DESCRIBE_CONFIGS enforced; ``__consumer_offsets`` and ``__transaction_state`` with the configs
Kafka creates them with; an empty key list selecting every key, as Kafka's."""

from __future__ import annotations

import logging
from typing import Any

from wire import ApiKey, ErrorCode

DESCRIBE = ApiKey.DESCRIBE_CONFIGS
BROKER_LOGGER, TOPIC = 8, 2


def describe(kind: int, name: str, keys: list[str] | None = None) -> dict[str, Any]:
    return {"resources": [{"resource_type": kind, "resource_name": name,
                           "configuration_keys": keys}],
            "include_synonyms": True, "include_documentation": True}


async def test_broker_loggers_and_their_levels(server: Any, connect: Any) -> None:
    logging.getLogger("kcoord.test.quiet").setLevel(logging.ERROR)
    logging.getLogger("kcoord.test.quiet.child")  # no level of its own: its parent's
    client = await connect(server.port)
    got = await client.request(DESCRIBE, 4, describe(BROKER_LOGGER, "0"))
    (result,) = got.results
    assert result.error_code == ErrorCode.NONE
    levels = {c.name: c.value for c in result.configs}
    assert levels["root"] in {"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"}
    assert levels["kcoord.test.quiet"] == levels["kcoord.test.quiet.child"] == "ERROR"
    assert "coordinator.server.runtime" in levels
    entry = next(c for c in result.configs if c.name == "kcoord.test.quiet")
    assert (entry.config_source, entry.read_only, entry.is_sensitive, list(entry.synonyms),
            entry.config_type, entry.documentation) == (6, False, False, [], 0, None)
    some = await client.request(DESCRIBE, 4, describe(BROKER_LOGGER, "0", ["root"]))
    assert [c.name for c in some.results[0].configs] == ["root"]
    every = await client.request(DESCRIBE, 4, describe(BROKER_LOGGER, "0", []))
    assert len(every.results[0].configs) >= len(result.configs)  # loggers only come
    errors = [(await client.request(DESCRIBE, 4, describe(BROKER_LOGGER, name))).results[0]
              for name in ("", "x", "7")]
    assert [(r.error_code, r.error_message) for r in errors] == [
        (ErrorCode.INVALID_REQUEST, "Broker id must not be empty"),
        (ErrorCode.INVALID_REQUEST, "Broker id must be an integer, but it is: x"),
        (ErrorCode.INVALID_REQUEST, "Unexpected broker id, expected 0 but received 7")]


async def test_broker_loggers_need_cluster_describe_configs(start_server: Any,
                                                            connect: Any) -> None:
    running = await start_server({
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer"})
    client = await connect(running.port)
    got = await client.request(DESCRIBE, 4, describe(BROKER_LOGGER, "0"))
    assert [r.error_code for r in got.results] == [ErrorCode.CLUSTER_AUTHORIZATION_FAILED]


async def test_internal_topics_report_their_creation_configs(server: Any,
                                                             connect: Any) -> None:
    client = await connect(server.port)
    got = await client.request(DESCRIBE, 4, {"resources": [
        {"resource_type": TOPIC, "resource_name": name, "configuration_keys": None}
        for name in ("__consumer_offsets", "__transaction_state")],
        "include_synonyms": False, "include_documentation": False})
    offsets, transactions = ({c.name: (c.value, c.config_source) for c in r.configs}
                             for r in got.results)
    dynamic_topic = 1
    assert offsets["cleanup.policy"] == ("compact", dynamic_topic)
    assert offsets["compression.type"] == ("producer", dynamic_topic)
    assert offsets["segment.bytes"] == ("104857600", dynamic_topic)
    assert transactions["cleanup.policy"] == ("compact", dynamic_topic)
    assert transactions["compression.type"] == ("uncompressed", dynamic_topic)
    assert transactions["min.insync.replicas"] == ("2", dynamic_topic)
    assert transactions["unclean.leader.election.enable"] == ("false", dynamic_topic)
    assert offsets["min.insync.replicas"][1] != dynamic_topic  # the broker's default


async def test_incremental_alter_sets_a_loggers_level(server: Any, connect: Any) -> None:
    """KIP-412: IncrementalAlterConfigs on BROKER_LOGGER changes the level at once (and
    DescribeConfigs shows it); validate_only changes nothing; nothing is written."""
    logger = logging.getLogger("kcoord.test.altered")
    client = await connect(server.port)
    before = len(server.server.groups.sink.records)

    async def alter(op: int, level: str | None, validate_only: bool = False) -> Any:
        return await client.request(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
            "validate_only": validate_only, "resources": [{
                "resource_type": BROKER_LOGGER, "resource_name": "0",
                "configs": [{"name": "kcoord.test.altered", "config_operation": op,
                             "value": level}]}]})

    try:
        checked = await alter(0, "DEBUG", validate_only=True)
        assert checked.responses[0].error_code == 0 and logger.level == logging.NOTSET
        done = await alter(0, "DEBUG")
        assert done.responses[0].error_code == 0 and logger.level == logging.DEBUG
        got = await client.request(DESCRIBE, 4, describe(BROKER_LOGGER, "0",
                                                         ["kcoord.test.altered"]))
        assert [(c.name, c.value) for c in got.results[0].configs] == [
            ("kcoord.test.altered", "DEBUG")]
        bad = await alter(0, "LOUD")
        assert bad.responses[0].error_code == ErrorCode.INVALID_CONFIG
        await alter(1, None)
        assert logger.level == logging.NOTSET
        assert len(server.server.groups.sink.records) == before
    finally:
        logger.setLevel(logging.NOTSET)
