"""One config style (issue 28): every broker-level key is one ConfigKey, and the server's
options, the cores' frozen configs and the broker surface's defaults are derived from it.

A key's reader decides where the server's static configuration sends it: a bad value is
refused in that reader's words, an ignored key is accepted with a warning, a dynamic-only
key is unknown to the static configuration."""

from __future__ import annotations

import logging
from dataclasses import fields

import pytest
from configs_support import error_of, store

import storage.log_cleaner
import storage.open_files
from coordinator.broker.config import BROKER_CONFIG_DEFAULTS, OPTIONAL_KEYS
from coordinator.config import KNOWN_KEYS, ConfigError, CoordinatorConfig
from coordinator.configs.broker_keys import GROUP_COORDINATOR_KEYS, SERVER_PROPERTIES
from coordinator.configs.config_key import Reader, field_key
from coordinator.configs.definitions import (
    BROKER_KEYS,
    GROUP_BROKER_DEFAULTS,
    GROUP_KEYS,
    TOPIC_KEYS,
)
from coordinator.configs.store import BROKER, AlterOp
from coordinator.server.options import IGNORED_BROKER_KEYS, SERVER_KEYS, ServeOptions, build_options
from coordinator.txn.config import TxnConfig
from wire import ErrorCode

SET = 0
_BAD = "not-a-value"


@pytest.mark.parametrize("name", sorted(SERVER_PROPERTIES))
def test_a_bad_static_value_is_refused_by_the_keys_reader(
        name: str, caplog: pytest.LogCaptureFixture) -> None:
    reader = SERVER_PROPERTIES[name].reader
    if reader in (Reader.LISTENERS, Reader.AUTHORIZER):  # (test_listener_options.py,
        return  # test_security_apis.py)
    if reader is Reader.IGNORED:
        with caplog.at_level(logging.WARNING):
            build_options({name: _BAD})
        assert f"configuration key {name} does not apply to kcoord" in caplog.text
        return
    with pytest.raises(ConfigError) as info:
        build_options({name: _BAD})
    message = str(info.value)
    if reader is None:  # dynamic only: AlterConfigs knows it, a properties file does not
        assert message.startswith(f"unknown configuration key {name!r}")
    elif reader in (Reader.BROKER, Reader.TRANSACTIONS):
        assert message.startswith(f"invalid value {_BAD!r} for {name}: expected ")
    else:
        assert message.startswith(f"{name}")
        assert name in (KNOWN_KEYS if reader is Reader.GROUPS else SERVER_KEYS)


@pytest.mark.parametrize("name", sorted(n for n, k in SERVER_PROPERTIES.items()
                                        if k.reader is not None and k.default is not None))
def test_every_read_key_accepts_its_default(name: str) -> None:
    build_options({name: str(SERVER_PROPERTIES[name].default)})


def test_the_frozen_configs_take_their_keys_defaults() -> None:
    assert CoordinatorConfig().to_properties() == {
        name: key.default for name, key in GROUP_COORDINATOR_KEYS.items()}
    txn = TxnConfig()
    for f in fields(TxnConfig):
        if f.name != "broker_id":
            assert getattr(txn, f.name) == SERVER_PROPERTIES[field_key(f.name)].typed_default
    options = ServeOptions()
    served = 0
    for name in SERVER_KEYS:
        field_name = name.removeprefix("kcoord.").replace(".", "_")
        if hasattr(options, field_name):
            served += 1
            assert getattr(options, field_name) == SERVER_PROPERTIES[name].typed_default
    assert served == 10
    readers = (Reader.BROKER, Reader.TRANSACTIONS)
    broker = {n: k.default for n, k in SERVER_PROPERTIES.items()
              if k.reader in readers and k.default is not None}
    assert broker == BROKER_CONFIG_DEFAULTS
    assert sorted(OPTIONAL_KEYS) == ["log.retention.minutes", "log.retention.ms"]


def test_the_derived_key_sets() -> None:
    assert set(BROKER_KEYS) == {n for n, k in SERVER_PROPERTIES.items() if k.dynamic}
    assert set(IGNORED_BROKER_KEYS) & set(BROKER_CONFIG_DEFAULTS) == set()
    for group_key, broker_key in GROUP_BROKER_DEFAULTS.items():
        assert GROUP_KEYS[group_key].default == SERVER_PROPERTIES[broker_key].default


def test_storage_defaults_equal_their_keys() -> None:
    # storage cannot import coordinator: its own defaults are checked against the keys'.
    dedupe = SERVER_PROPERTIES["log.cleaner.dedupe.buffer.size"].typed_default
    assert dedupe == storage.log_cleaner.DEFAULT_DEDUPE_BUFFER_SIZE
    open_files = SERVER_PROPERTIES["kcoord.max.open.segment.files"].typed_default
    assert open_files == storage.open_files.DEFAULT_MAX_OPEN_SEGMENT_FILES


def test_the_log_cleaner_switch_is_read_not_ignored(caplog: pytest.LogCaptureFixture) -> None:
    # It was both a broker key (default true) and an ignored one: a file's false was dropped.
    with caplog.at_level(logging.WARNING):
        options = build_options({"log.cleaner.enable": "FALSE"})
    assert options.broker_config["log.cleaner.enable"] == "false"
    assert "does not apply" not in caplog.text


def test_a_dynamic_broker_value_has_the_static_bounds() -> None:
    """One validator per key: AlterConfigs refuses what the properties file refuses (it
    accepted log.segment.bytes=14..63 and negative retentions the file refused)."""
    configs = store(node_id=0)
    assert error_of(lambda: configs.incremental(
        BROKER, "", [AlterOp("log.segment.bytes", SET, "63")])) == (
        ErrorCode.INVALID_REQUEST,
        "Invalid value 63 for configuration log.segment.bytes: Value must be at least 64")
    assert error_of(lambda: configs.incremental(
        BROKER, "", [AlterOp("log.retention.ms", SET, "-2")])) == (
        ErrorCode.INVALID_REQUEST,
        "Invalid value -2 for configuration log.retention.ms: Value must be at least -1")
    # Only a setting's first key is dynamic (DynamicLogConfig: TOPIC_CONFIG_SYNONYMS' values).
    for key in ("log.retention.hours", "log.retention.minutes", "log.roll.hours"):
        assert error_of(lambda key=key: configs.incremental(
            BROKER, "", [AlterOp(key, SET, "2")])) == (
            ErrorCode.INVALID_REQUEST, f"Cannot update these configs dynamically: Set({key})")
    assert configs.incremental(BROKER, "", [AlterOp("log.segment.bytes", SET, "64")])


def test_every_key_has_a_kafka_type_and_documentation() -> None:
    """What DescribeConfigs reports for a key (v3+): its type and, when asked, its doc."""
    from wire.constants import ConfigType

    for keys in (SERVER_PROPERTIES, TOPIC_KEYS, GROUP_KEYS):
        for name, key in keys.items():
            assert key.type is not ConfigType.UNKNOWN, name
            assert key.documentation.strip(), name  # Kafka's text: not always a sentence
