"""errors: which Kafka log-append error each storage failure stands for (the coordinator
maps it to the code it answers with: tests/coordinator/test_append_errors.py)."""

from __future__ import annotations

import errno

from storage.errors import (
    CorruptLogError,
    ErrorCode,
    LogWriteError,
    RecordTooLargeError,
    StorageError,
    append_error_of,
)


def test_disk_errors_are_kafka_storage_errors() -> None:
    assert append_error_of(LogWriteError("ENOSPC", errno.ENOSPC)) == ErrorCode.KAFKA_STORAGE_ERROR
    assert append_error_of(OSError(errno.EIO, "eio")) == ErrorCode.KAFKA_STORAGE_ERROR == 56
    assert append_error_of(CorruptLogError("f", 1, "x")) == ErrorCode.KAFKA_STORAGE_ERROR


def test_too_large_is_record_list_too_large() -> None:
    assert append_error_of(RecordTooLargeError("big")) == ErrorCode.RECORD_LIST_TOO_LARGE == 18


def test_a_storage_error_names_its_append_error() -> None:
    class Custom(StorageError):
        append_error = ErrorCode.NOT_ENOUGH_REPLICAS

    assert append_error_of(Custom()) == ErrorCode.NOT_ENOUGH_REPLICAS


def test_other_exceptions_are_unknown_server_errors() -> None:
    assert append_error_of(ValueError("bug")) == ErrorCode.UNKNOWN_SERVER_ERROR == -1
