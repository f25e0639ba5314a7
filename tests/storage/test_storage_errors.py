"""errors: storage failures become the error codes Kafka's coordinator answers with."""

from __future__ import annotations

import errno

import pytest

from storage.errors import (
    CorruptLogError,
    ErrorCode,
    LogWriteError,
    RecordTooLargeError,
    StorageError,
    kafka_error_for,
)


def test_disk_errors_are_not_coordinator() -> None:
    exc = LogWriteError("ENOSPC", errno.ENOSPC)
    assert kafka_error_for(exc, "group") == ErrorCode.NOT_COORDINATOR == 16
    assert kafka_error_for(exc, "offsets") == ErrorCode.NOT_COORDINATOR
    assert kafka_error_for(OSError(errno.EIO, "eio"), "offsets") == 16


def test_too_large() -> None:
    exc = RecordTooLargeError("big")
    assert kafka_error_for(exc, "group") == ErrorCode.UNKNOWN_SERVER_ERROR == -1
    assert kafka_error_for(exc, "offsets") == ErrorCode.INVALID_COMMIT_OFFSET_SIZE == 28


@pytest.mark.parametrize(
    ("append_error", "group", "offsets"),
    [
        (3, 15, 15),  # UNKNOWN_TOPIC_OR_PARTITION -> COORDINATOR_NOT_AVAILABLE
        (19, 15, 15),  # NOT_ENOUGH_REPLICAS
        (20, 15, 15),  # NOT_ENOUGH_REPLICAS_AFTER_APPEND
        (6, 16, 16),  # NOT_LEADER_OR_FOLLOWER -> NOT_COORDINATOR
        (56, 16, 16),  # KAFKA_STORAGE_ERROR
        (7, 27, 7),  # REQUEST_TIMED_OUT -> REBALANCE_IN_PROGRESS (group only)
        (10, -1, 28),  # MESSAGE_TOO_LARGE
        (18, -1, 28),  # RECORD_LIST_TOO_LARGE
        (4, -1, 28),  # INVALID_FETCH_SIZE
        (13, 13, 14),  # NETWORK_EXCEPTION -> COORDINATOR_LOAD_IN_PROGRESS (offsets)
        (42, 42, 42),  # anything else passes through
    ],
)
def test_kafka_mapping_table(append_error: int, group: int, offsets: int) -> None:
    class Custom(StorageError):
        pass

    Custom.append_error = append_error
    assert kafka_error_for(Custom(), "group") == group
    assert kafka_error_for(Custom(), "offsets") == offsets


def test_other_exceptions_and_bad_kind() -> None:
    assert kafka_error_for(ValueError("bug"), "group") == -1
    assert kafka_error_for(CorruptLogError("f", 1, "x"), "offsets") == 16
    with pytest.raises(ValueError):
        kafka_error_for(LogWriteError("x"), "members")  # type: ignore[arg-type]
