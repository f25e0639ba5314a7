"""Kafka's RuntimeLoggerManagerTest (core/src/test/java/kafka/server/logger) and the
BROKER_LOGGER cases of ConfigAdminManagerTest, mirrored by name (see COVERAGE.md): a
BROKER_LOGGER resource of IncrementalAlterConfigs sets or unsets a logger's level at once,
unless validate_only, and writes nothing."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from configs_support import error_of, request, store

from coordinator.server.broker_loggers import ROOT_LOGGER, alter_logger_levels, logger_levels
from coordinator.server.config_shard import ConfigShard, alter_configs
from wire import ErrorCode

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
BROKER_LOGGER = 8
LEGACY, INCREMENTAL = 33, 44
NAME = "kcoord.test.runtime_logger_manager"


@pytest.fixture
def log() -> Iterator[logging.Logger]:
    logger = logging.getLogger(NAME)
    root_level = logging.getLogger().level
    yield logger
    logger.setLevel(logging.NOTSET)
    logging.getLogger().setLevel(root_level)


def test_validate_set_log_level_config(log: logging.Logger) -> None:
    alter_logger_levels(5, "5", [(NAME, SET, "TRACE")], validate_only=True)
    assert log.level == logging.NOTSET  # validated only
    alter_logger_levels(5, "5", [(NAME, SET, "TRACE")], validate_only=False)
    assert log.level == 5 and logger_levels()[NAME] == "TRACE"


def test_validate_delete_log_level_config(log: logging.Logger) -> None:
    log.setLevel(logging.ERROR)
    alter_logger_levels(5, "5", [(NAME, DELETE, "")], validate_only=False)
    assert log.level == logging.NOTSET


@pytest.mark.parametrize("op", [APPEND, SUBTRACT])
def test_operation_not_allowed(log: logging.Logger, op: int) -> None:
    name = "APPEND" if op == APPEND else "SUBTRACT"
    assert error_of(lambda: alter_logger_levels(5, "5", [(NAME, op, "TRACE")], False)) == (
        ErrorCode.INVALID_REQUEST, f"{name} operation is not allowed for the BROKER_LOGGER "
                                   "resource")


def test_validate_bogus_log_level_name_not_allowed(log: logging.Logger) -> None:
    assert error_of(lambda: alter_logger_levels(5, "5", [(NAME, SET, "BOGUS")], False)) == (
        ErrorCode.INVALID_CONFIG, f"Cannot set the log level of {NAME} to BOGUS as it is not "
        "a supported log level. Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN")


def test_validate_set_root_log_level_config(log: logging.Logger) -> None:
    alter_logger_levels(5, "5", [(ROOT_LOGGER, SET, "WARN")], validate_only=False)
    assert logging.getLogger().level == logging.WARNING


def test_validate_remove_root_log_level_config_not_allowed(log: logging.Logger) -> None:
    assert error_of(lambda: alter_logger_levels(5, "5", [(ROOT_LOGGER, DELETE, "")],
                                                False)) == (
        ErrorCode.INVALID_REQUEST, "Removing the log level of the root logger is not allowed")


def test_unknown_logger_and_node_id(log: logging.Logger) -> None:
    assert error_of(lambda: alter_logger_levels(5, "5", [("no.such.logger.xyz", SET,
                                                          "INFO")], False)) == (
        ErrorCode.INVALID_CONFIG, "Logger no.such.logger.xyz does not exist!")
    assert error_of(lambda: alter_logger_levels(5, "x", [], False)) == (
        ErrorCode.INVALID_REQUEST, "Node id must be an integer, but it is: x")
    assert error_of(lambda: alter_logger_levels(5, "3", [], False)) == (
        ErrorCode.INVALID_REQUEST, "Unexpected node id. Expected 5, but received 5")


def answer(shard: ConfigShard, req: object) -> list[tuple[int, str | None]]:
    result = alter_configs(shard, None, req, "token", 0)
    assert result.records == ()  # a logger's level is never written
    (reply,) = result.replies
    return [(r["error_code"], r["error_message"])  # type: ignore[index]
            for r in reply.response["responses"]]  # type: ignore[index]


def test_preprocess_incremental_with_logger_changes(log: logging.Logger) -> None:
    shard = ConfigShard(store(node_id=1))
    assert answer(shard, request(INCREMENTAL, (BROKER_LOGGER, "1", [(NAME, SET, "ERROR")]))) == [
        (ErrorCode.NONE, None)]
    assert log.level == logging.ERROR


def test_preprocess_incremental_logger_with_nulls(log: logging.Logger) -> None:
    """testPreprocessIncrementalWithNulls, on the BROKER_LOGGER resource Kafka uses."""
    shard = ConfigShard(store(node_id=2))
    assert answer(shard, request(INCREMENTAL, (BROKER_LOGGER, "2", [(NAME, SET, None)]))) == [
        (ErrorCode.INVALID_REQUEST, f"Null value not supported for : {NAME}")]


def test_preprocess_legacy_with_broker_logger_changes(log: logging.Logger) -> None:
    shard = ConfigShard(store(node_id=1))
    assert answer(shard, request(LEGACY, (BROKER_LOGGER, "1", [(NAME, "ERROR")]))) == [
        (ErrorCode.INVALID_REQUEST, "Unknown resource type 8")]
    assert log.level == logging.NOTSET
