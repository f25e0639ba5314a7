"""DescribeConfigs' types and documentation over raw frames (issue 30 item 1), as Kafka's
``ConfigHelper`` answers: v3+ carry every reported key's type (its ``ConfigDef`` type, UNKNOWN
for a key Kafka does not define) and, with ``include_documentation``, its documentation, for
a topic, this broker (every key, static or dynamic, and the keys clients read), the
cluster-wide broker default and a group; without it, no documentation. A PASSWORD key or one of
unknown type is sensitive: null value, in the entry and its synonyms."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from coordinator.configs.broker_keys import SERVER_PROPERTIES
from coordinator.configs.definitions import GROUP_KEYS, TOPIC_KEYS, broker_key
from coordinator.server.app import RunningServer, serve
from coordinator.server.options import build_options
from wire import ApiKey, ErrorCode
from wire.constants import ConfigType

pytestmark = pytest.mark.trio

DESCRIBE, INCREMENTAL = ApiKey.DESCRIBE_CONFIGS, ApiKey.INCREMENTAL_ALTER_CONFIGS
TOPIC, BROKER, GROUP = 2, 4, 32
RESOURCES = ((TOPIC, "t"), (BROKER, "0"), (BROKER, ""), (GROUP, "g"))
#: The broker keys clients read, with their Kafka types.
CLIENT_READ_KEYS = {"listeners": ConfigType.STRING, "advertised.listeners": ConfigType.STRING,
                    "node.id": ConfigType.INT, "broker.id": ConfigType.INT,
                    "log.dirs": ConfigType.STRING, "process.roles": ConfigType.LIST}


def describe(docs: bool, synonyms: bool = False) -> dict[str, Any]:
    return {"resources": [{"resource_type": kind, "resource_name": name,
                           "configuration_keys": None} for kind, name in RESOURCES],
            "include_synonyms": synonyms, "include_documentation": docs}


async def _started(start_server: Any, connect: Any) -> Any:
    running = await start_server({"log.retention.hours": "100"}, topics=(("t", 1),))
    client = await connect(running.port)
    altered = await client.request(INCREMENTAL, 1, {"validate_only": False, "resources": [
        {"resource_type": BROKER, "resource_name": "",
         "configs": [{"name": "log.cleaner.threads", "config_operation": 0, "value": "2"}]},
        {"resource_type": GROUP, "resource_name": "g",
         "configs": [{"name": "consumer.session.timeout.ms", "config_operation": 0,
                      "value": "50000"}]}]})
    assert [r.error_code for r in altered.responses] == [ErrorCode.NONE] * 2
    return client


@pytest.mark.parametrize("version", [3, 4])
async def test_every_key_carries_its_type_and_documentation(
        start_server: Any, connect: Any, version: int) -> None:
    client = await _started(start_server, connect)
    got = await client.request(DESCRIBE, version, describe(docs=True))
    assert [r.error_code for r in got.results] == [ErrorCode.NONE] * len(RESOURCES)
    topic, broker, default, group = ({c.name: c for c in r.configs} for r in got.results)
    definitions = ({n: k for n, k in TOPIC_KEYS.items()}, None, None, GROUP_KEYS)
    for configs, known in zip((topic, broker, default, group), definitions, strict=True):
        assert configs
        for name, config in configs.items():
            key = broker_key(name) if known is None else known[name]
            assert key is not None, name
            assert (name, config.config_type) == (name, key.type)
            assert (name, config.documentation) == (name, key.documentation)
            assert key.documentation.strip()
    assert set(topic) == set(TOPIC_KEYS) and set(group) == set(GROUP_KEYS)
    assert set(default) == {"log.cleaner.threads", "min.insync.replicas"}  # (and ELR's)
    # Static keys (read-only) carry their types too, not only the dynamic ones.
    assert broker["log.retention.ms"].read_only is False
    # Kafka's DynamicBrokerReconfigurationTest: log.retention.hours is read-only (only a
    # setting's first key, log.retention.ms, is dynamic).
    assert broker["log.retention.hours"].read_only is True
    assert broker["group.initial.rebalance.delay.ms"].read_only is True
    assert broker["group.initial.rebalance.delay.ms"].config_type == ConfigType.INT
    assert broker["offsets.retention.check.interval.ms"].config_type == ConfigType.LONG
    assert {name: broker[name].config_type for name in CLIENT_READ_KEYS} == CLIENT_READ_KEYS
    assert all(broker[name].documentation for name in CLIENT_READ_KEYS)
    assert (topic["cleanup.policy"].config_type, topic["min.cleanable.dirty.ratio"].config_type,
            topic["preallocate"].config_type, topic["segment.bytes"].config_type) == (
        ConfigType.LIST, ConfigType.DOUBLE, ConfigType.BOOLEAN, ConfigType.INT)
    assert group["consumer.session.timeout.ms"].config_type == ConfigType.INT
    assert group["share.auto.offset.reset"].config_type == ConfigType.STRING
    # Every Kafka key is reported (as KafkaConfig's): the PASSWORD ones sensitive, no value.
    configs = [*topic.values(), *broker.values(), *group.values()]
    assert {c.name for c in configs if c.is_sensitive} == {
        c.name for c in configs if c.config_type == ConfigType.PASSWORD}
    assert all(c.value is None for c in configs if c.is_sensitive)
    assert "log.roll.hours" in broker and broker["log.roll.hours"].read_only


@pytest.mark.parametrize("version", [3, 4])
async def test_no_documentation_unless_asked(start_server: Any, connect: Any,
                                             version: int) -> None:
    client = await _started(start_server, connect)
    got = await client.request(DESCRIBE, version, describe(docs=False, synonyms=True))
    configs = [c for r in got.results for c in r.configs]
    assert len(configs) > len(TOPIC_KEYS) + len(GROUP_KEYS)
    assert all(c.documentation is None for c in configs)
    # The type is always there (v3+): Kafka sets it whether or not documentation is asked.
    assert all(c.config_type != ConfigType.UNKNOWN for c in configs)


async def test_secrets_and_unknown_keys_are_sensitive(nursery: trio.Nursery,
                                                      connect: Any) -> None:
    options = build_options({
        "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config":
            'org.apache.kafka.common.security.plain.PlainLoginModule required '
            'user_admin="admin-secret";',
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:admin",
    }, data_dir=None)
    running: RunningServer = await nursery.start(serve, options)
    client = await connect(running.port)
    shaken = await client.request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
    assert shaken.error_code == ErrorCode.NONE
    login = await client.request(ApiKey.SASL_AUTHENTICATE, 2,
                                 {"auth_bytes": b"\0admin\0admin-secret"})
    assert login.error_code == ErrorCode.NONE
    got = await client.request(DESCRIBE, 4, {"resources": [{
        "resource_type": BROKER, "resource_name": "0", "configuration_keys": None}],
        "include_synonyms": True, "include_documentation": True})
    configs = {c.name: c for c in got.results[0].configs}
    jaas = configs["listener.name.sasl_plaintext.plain.sasl.jaas.config"]
    assert (jaas.value, jaas.is_sensitive, jaas.config_type, jaas.config_source) == (
        None, True, ConfigType.PASSWORD, 4)
    assert [(s.name, s.value) for s in jaas.synonyms] == [(jaas.name, None)]
    # A listener override's synonyms: its own, then the key it overrides
    # (DynamicBrokerConfig.brokerConfigSynonyms); an override has no default of its own.
    mechanisms = configs["listener.name.sasl_plaintext.sasl.enabled.mechanisms"]
    assert [(s.name, s.value, s.source) for s in mechanisms.synonyms] == [
        (mechanisms.name, "PLAIN", 4), ("sasl.enabled.mechanisms", "PLAIN", 4)]
    assert jaas.documentation == SERVER_PROPERTIES["sasl.jaas.config"].documentation
    # super.users is the authorizer's, not KafkaConfig's: its type is unknown.
    users = configs["super.users"]
    assert (users.value, users.is_sensitive, users.config_type, users.documentation) == (
        None, True, ConfigType.UNKNOWN, None)
    authorizer = configs["authorizer.class.name"]
    assert (authorizer.value, authorizer.is_sensitive, authorizer.config_type) == (
        "org.apache.kafka.metadata.authorizer.StandardAuthorizer", False, ConfigType.STRING)
    mechanisms = configs["sasl.enabled.mechanisms"]
    assert (mechanisms.value, mechanisms.config_type) == ("PLAIN", ConfigType.LIST)
    assert not any("admin-secret" in (c.value or "") for c in configs.values())
