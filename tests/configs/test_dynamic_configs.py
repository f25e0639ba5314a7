"""The dynamic config store (``coordinator.configs.store``): Kafka's
ConfigurationControlManager semantics (SET/DELETE/APPEND/SUBTRACT, legacy replacement with
implicit deletions), LogConfig/GroupConfig/DynamicBrokerConfig validation and messages,
replay rebuilding the same state, and the ConfigRecord's bytes (key version 107)."""

from __future__ import annotations

import pytest
from configs_support import FakeTopics, apply_all, error_of, store

from coordinator.configs.store import BROKER, GROUP, TOPIC, AlterOp, DynamicConfigs
from storage import record_codec
from storage.config_records import NO_TOPIC_ID, ConfigRecordKey, ConfigRecordValue
from storage.record_types import CONFIG_RECORD_KEY_VERSION, RECORD_TYPES
from wire import ErrorCode

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def test_incremental_set_delete_append_subtract() -> None:
    configs = store(t={"retention.ms": "1000"})
    apply_all(configs, configs.incremental(TOPIC, "t", [
        AlterOp("retention.ms", DELETE, None), AlterOp("cleanup.policy", APPEND, "compact"),
        AlterOp("segment.ms", SET, "60000")]))
    assert configs.configs(TOPIC, "t") == {"cleanup.policy": "delete,compact",
                                           "segment.ms": "60000"}
    apply_all(configs, configs.incremental(TOPIC, "t", [
        AlterOp("cleanup.policy", SUBTRACT, "delete")]))
    assert configs.configs(TOPIC, "t")["cleanup.policy"] == "compact"
    # an unchanged value writes nothing (Kafka writes records only for changes to topics)
    assert configs.incremental(TOPIC, "t", [AlterOp("segment.ms", SET, "60000")]) == []


def test_append_and_subtract_need_a_list_key() -> None:
    configs = store(t={})
    assert error_of(lambda: configs.incremental(TOPIC, "t", [
        AlterOp("retention.ms", APPEND, "1")])) == (
        ErrorCode.INVALID_CONFIG, "Can't APPEND to key retention.ms because its type is not LIST.")
    assert error_of(lambda: configs.incremental(TOPIC, "t", [
        AlterOp("segment.ms", SUBTRACT, "1")])) == (
        ErrorCode.INVALID_CONFIG,
        "Can't SUBTRACT to key segment.ms because its type is not LIST.")
    assert error_of(lambda: configs.incremental(BROKER, "0", [
        AlterOp("log.retention.ms", APPEND, "1")])) == (
        ErrorCode.INVALID_CONFIG,
        "Config value append is not allowed for config key: log.retention.ms")
    assert error_of(lambda: configs.incremental(TOPIC, "t", [AlterOp("x", 9, "1")])) == (
        ErrorCode.INVALID_REQUEST, "Unknown operations type 9")


@pytest.mark.parametrize(("key", "value", "message"), [
    ("no.such.key", "1", "Unknown topic config name: no.such.key"),
    ("retention.ms", "soon", "Invalid value soon for configuration retention.ms: Not a number "
     "of type LONG"),
    ("retention.ms", "-2", "Invalid value -2 for configuration retention.ms: Value must be at "
     "least -1"),
    ("cleanup.policy", "forever", "Invalid value forever for configuration cleanup.policy: "
     "String must be one of: compact, delete"),
    ("message.timestamp.type", "Now", "Invalid value Now for configuration "
     "message.timestamp.type: String must be one of: CreateTime, LogAppendTime"),
    ("min.cleanable.dirty.ratio", "1.5", "Invalid value 1.5 for configuration "
     "min.cleanable.dirty.ratio: Value must be no more than 1"),
    ("preallocate", "yes", "Invalid value yes for configuration preallocate: Expected value "
     "to be either true or false"),
    ("max.message.bytes", "3000000000", "Invalid value 3000000000 for configuration "
     "max.message.bytes: Not a number of type INT"),
])
def test_topic_validation_is_log_configs(key: str, value: str, message: str) -> None:
    configs = store(t={})
    assert error_of(lambda: configs.incremental(TOPIC, "t", [AlterOp(key, SET, value)])) == (
        ErrorCode.INVALID_CONFIG, message)


def test_topic_names_and_existence() -> None:
    configs = store(t={})
    assert error_of(lambda: configs.incremental(TOPIC, "bad!", [
        AlterOp("retention.ms", SET, "1")]))[0] == ErrorCode.INVALID_TOPIC_EXCEPTION
    # the configs are validated before the topic's existence (ConfigurationControlManager)
    assert error_of(lambda: configs.incremental(TOPIC, "gone", [
        AlterOp("no.such", SET, "1")]))[0] == ErrorCode.INVALID_CONFIG
    assert error_of(lambda: configs.incremental(TOPIC, "gone", [
        AlterOp("retention.ms", SET, "1")])) == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'gone' does not exist.")


def test_legacy_alter_configs_deletes_the_keys_left_out() -> None:
    configs = store(t={"retention.ms": "1000", "segment.ms": "5000"})
    records = configs.legacy(TOPIC, "t", {"segment.ms": "6000"}, ["segment.ms"])
    assert [(r.key.name, r.value.value) for r in records] == [  # type: ignore[union-attr]
        ("segment.ms", "6000"), ("retention.ms", None)]
    apply_all(configs, records)
    assert configs.configs(TOPIC, "t") == {"segment.ms": "6000"}


def test_broker_keys_kafka_makes_dynamic() -> None:
    configs = store()
    assert error_of(lambda: configs.incremental(BROKER, "0", [
        AlterOp("message.max.bytes", SET, "big")])) == (
        ErrorCode.INVALID_REQUEST,
        "Invalid value big for configuration message.max.bytes: Not a number of type INT")
    assert error_of(lambda: configs.incremental(BROKER, "0", [
        AlterOp("node.id", SET, "1"), AlterOp("auto.create.topics.enable", SET, "false")])) == (
        ErrorCode.INVALID_REQUEST,
        "Cannot update these configs dynamically: Set(auto.create.topics.enable, node.id)")
    assert error_of(lambda: configs.incremental(BROKER, "", [
        AlterOp("listeners", SET, "PLAINTEXT://h:1")])) == (
        ErrorCode.INVALID_REQUEST, "Cannot update these configs at default cluster level, "
        "broker id must be specified: Set(listeners)")
    assert error_of(lambda: configs.incremental(BROKER, "0", [
        AlterOp("advertised.listeners", SET, "PLAINTEXT://h:1")])) == (
        ErrorCode.INVALID_REQUEST,
        "Cannot update these configs dynamically: Set(advertised.listeners)")
    apply_all(configs, configs.incremental(BROKER, "", [
        AlterOp("message.max.bytes", SET, "2000")]))
    apply_all(configs, configs.incremental(BROKER, "0", [
        AlterOp("log.cleanup.policy", APPEND, "compact")]))
    assert configs.brokers == {"": {"message.max.bytes": "2000"},
                               "0": {"log.cleanup.policy": "delete,compact"}}
    # a broker record is written even when the value is unchanged (KAFKA-14136)
    assert len(configs.incremental(BROKER, "", [AlterOp("message.max.bytes", SET, "2000")])) == 1


@pytest.mark.parametrize(("key", "value", "message"), [
    ("no.such", "1", "Unknown group config name: no.such"),
    ("consumer.session.timeout.ms", "x", "Invalid value x for configuration "
     "consumer.session.timeout.ms: Not a number of type INT"),
    ("consumer.session.timeout.ms", "40000", "consumer.session.timeout.ms must be greater "
     "than or equal to group.consumer.min.session.timeout.ms"),
    ("consumer.session.timeout.ms", "70000", "consumer.session.timeout.ms must be less than "
     "or equal to group.consumer.max.session.timeout.ms"),
    ("consumer.heartbeat.interval.ms", "16000", "consumer.heartbeat.interval.ms must be less "
     "than or equal to group.consumer.max.heartbeat.interval.ms"),
    ("share.auto.offset.reset", "middle", "Invalid value middle for configuration "
     "share.auto.offset.reset: String must be one of: latest, earliest"),
])
def test_group_validation_is_group_configs(key: str, value: str, message: str) -> None:
    configs = store()
    assert error_of(lambda: configs.incremental(GROUP, "g", [AlterOp(key, SET, value)])) == (
        ErrorCode.INVALID_CONFIG, message)


def test_group_configs_apply_and_delete() -> None:
    configs = store()
    apply_all(configs, configs.incremental(GROUP, "g", [
        AlterOp("consumer.session.timeout.ms", SET, "50000")]))
    assert configs.groups == {"g": {"consumer.session.timeout.ms": "50000"}}
    assert configs.resources(GROUP) == ["g"]
    apply_all(configs, configs.incremental(GROUP, "g", [
        AlterOp("consumer.session.timeout.ms", DELETE, None)]))
    assert configs.groups == {}


def test_replay_rebuilds_the_same_state_and_skips_a_deleted_topics_records() -> None:
    live = store(t={})
    log = []
    for resource, name, ops in (
        (TOPIC, "t", [AlterOp("retention.ms", SET, "9")]),
        (BROKER, "", [AlterOp("log.retention.bytes", SET, "7")]),
        (GROUP, "g", [AlterOp("consumer.heartbeat.interval.ms", SET, "6000")]),
        (TOPIC, "t", [AlterOp("cleanup.policy", APPEND, "compact")]),
    ):
        records = live.incremental(resource, name, ops)
        log += records
        apply_all(live, records)
    encoded = [record_codec.encode_record(r) for r in log]
    topics = FakeTopics(t={})
    topics.topics["t"] = (live.topics.topic_configs("t")[0], {})  # type: ignore[index]
    replayed = DynamicConfigs(0, topics)
    apply_all(replayed, [record_codec.decode_record(k, v) for k, v in encoded])
    assert (replayed.brokers, replayed.groups) == (live.brokers, live.groups)
    assert replayed.configs(TOPIC, "t") == live.configs(TOPIC, "t") == {
        "retention.ms": "9", "cleanup.policy": "delete,compact"}
    recreated = DynamicConfigs(0, FakeTopics(t={}))  # same name, a new topic id
    apply_all(recreated, [record_codec.decode_record(k, v) for k, v in encoded])
    assert recreated.configs(TOPIC, "t") == {}


def test_the_config_record_bytes() -> None:
    assert RECORD_TYPES[CONFIG_RECORD_KEY_VERSION].key_type is ConfigRecordKey
    key = record_codec.encode_key(ConfigRecordKey(2, "t", "retention.ms"))
    assert key.hex() == (
        "006b"  # key version 107: ConfigRecordKey
        "02"  # resource_type: TOPIC
        "0001" "74"  # resource_name: "t"
        "000c" + b"retention.ms".hex())  # name
    value = record_codec.encode_value(ConfigRecordValue(None))
    assert value is not None and value.hex() == (
        "0000"  # value version 0
        "00"  # value: null (compact string length 0)
        + NO_TOPIC_ID.hex  # topic_id
        + "00")  # no tagged fields
    assert record_codec.decode_value(ConfigRecordKey(2, "t", "x"), value) == ConfigRecordValue(
        None)
