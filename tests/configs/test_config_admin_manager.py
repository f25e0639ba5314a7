"""Kafka's ``ConfigAdminManagerTest`` mirrored by name where it applies (see COVERAGE.md):
the broker's preprocessing of AlterConfigs and IncrementalAlterConfigs -- duplicate
resources and keys, null values, the broker resource's name, unknown resource types."""

from __future__ import annotations

from configs_support import error_of, request, store

from coordinator.configs.store import BROKER, TOPIC, AlterOp
from coordinator.core.result import Result
from coordinator.server.config_shard import ConfigShard, alter_configs
from wire import ErrorCode

SET = 0
LEGACY, INCREMENTAL = 33, 44


def answer(shard: ConfigShard, req: object) -> tuple[Result, list[tuple[int, str | None]]]:
    result = alter_configs(shard, None, req, "token", 0)
    (reply,) = result.replies
    response: dict[str, object] = reply.response  # type: ignore[assignment]
    return result, [(r["error_code"], r["error_message"])  # type: ignore[index]
                    for r in response["responses"]]  # type: ignore[attr-defined]


def test_validate_resource_name_is_current_node_id() -> None:
    configs = store(node_id=5)
    assert configs.incremental(BROKER, "5", [AlterOp("log.retention.ms", SET, "1")])
    assert error_of(lambda: configs.incremental(BROKER, "3", [AlterOp("x", SET, "1")])) == (
        ErrorCode.INVALID_REQUEST, "Unexpected broker id, expected 5, but received 3")
    assert error_of(lambda: configs.incremental(BROKER, "e", [AlterOp("x", SET, "1")])) == (
        ErrorCode.INVALID_REQUEST, "Node id must be an integer, but it is: e")


def test_preprocess_incremental_with_nulls() -> None:
    shard = ConfigShard(store(node_id=2))
    _, results = answer(shard, request(INCREMENTAL, (BROKER, "2", [("a.key", SET, None)])))
    assert results == [(ErrorCode.INVALID_REQUEST, "Null value not supported for : a.key")]


def test_preprocess_incremental_with_duplicates() -> None:
    shard = ConfigShard(store(t={}))
    resource = (TOPIC, "t", [("retention.ms", SET, "1")])
    result, results = answer(shard, request(INCREMENTAL, resource, resource))
    assert results == [(ErrorCode.INVALID_REQUEST, "Each resource must appear at most once.")] * 2
    assert result.records == ()


def test_preprocess_legacy_with_broker_logger_changes() -> None:
    shard = ConfigShard(store())
    _, results = answer(shard, request(LEGACY, (8, "1", [("kafka.server", "INFO")])))
    assert results == [(ErrorCode.INVALID_REQUEST, "Unknown resource type 8")]


def test_preprocess_legacy_with_nulls() -> None:
    shard = ConfigShard(store(node_id=2))
    _, results = answer(shard, request(LEGACY, (BROKER, "2", [("a.key", None)])))
    assert results == [(ErrorCode.INVALID_REQUEST, "Null value not supported for : a.key")]


def test_preprocess_legacy_with_duplicates() -> None:
    shard = ConfigShard(store(t={}))
    resource = (TOPIC, "t", [("retention.ms", "1")])
    _, results = answer(shard, request(LEGACY, resource, resource))
    assert results == [(ErrorCode.INVALID_REQUEST, "Each resource must appear at most once.")] * 2


def test_preprocess_incremental_with_unknown_resource() -> None:
    shard = ConfigShard(store())
    _, results = answer(shard, request(INCREMENTAL, (0, "unknown", [("foo", SET, "bar")])))
    assert results == [(ErrorCode.INVALID_REQUEST, "Unknown resource type 0")]


def test_preprocess_legacy_with_unknown_resource() -> None:
    shard = ConfigShard(store())
    _, results = answer(shard, request(LEGACY, (0, "unknown", [("foo", "bar")])))
    assert results == [(ErrorCode.INVALID_REQUEST, "Unknown resource type 0")]


def test_contains_duplicates() -> None:
    configs = store(t={})
    ops = [AlterOp("retention.ms", SET, "1"), AlterOp("retention.ms", SET, "2")]
    assert error_of(lambda: configs.incremental(TOPIC, "t", ops)) == (
        ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
    assert error_of(lambda: configs.legacy(TOPIC, "t", {"retention.ms": "1"},
                                           ["retention.ms", "retention.ms"])) == (
        ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
    assert configs.incremental(TOPIC, "t", [AlterOp("retention.ms", SET, "1"),
                                            AlterOp("segment.ms", SET, "2")])


def test_each_resource_is_answered_on_its_own_and_validate_only_writes_nothing() -> None:
    shard = ConfigShard(store(t={}))
    good = (TOPIC, "t", [("retention.ms", SET, "5000")])
    bad = (TOPIC, "t2", [("retention.ms", SET, "5000")])
    checked, results = answer(shard, request(INCREMENTAL, good, bad, validate_only=True))
    assert results == [(ErrorCode.NONE, None), (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                                                "The topic 't2' does not exist.")]
    assert checked.records == ()
    written, _ = answer(shard, request(INCREMENTAL, good, bad))
    assert len(written.records) == 1
    assert shard.store.configs(TOPIC, "t") == {}  # applied only once durable
    shard.append_done(written, 0)
    assert shard.store.configs(TOPIC, "t") == {"retention.ms": "5000"}


def test_a_failed_append_answers_its_error_and_applies_nothing() -> None:
    shard = ConfigShard(store(t={}))
    written, _ = answer(shard, request(INCREMENTAL, (TOPIC, "t", [("retention.ms", SET, "1")])))
    failed = shard.append_failed(written, ErrorCode.NOT_CONTROLLER, 0)
    (reply,) = failed.replies
    assert [r["error_code"] for r in reply.response["responses"]] == [  # type: ignore[index]
        ErrorCode.NOT_CONTROLLER]
    assert shard.store.configs(TOPIC, "t") == {}
