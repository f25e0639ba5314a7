"""Storage exceptions, and which Kafka log-append error each stands for.

Kafka's coordinator answers a failed ``__consumer_offsets`` append with a code mapped from
the append's error, per operation; that mapping is the coordinator's
(``coordinator/core/append_errors.py``). Storage only says which append error a failure
is (``append_error_of``): a disk error (ENOSPC, EIO, short write, failed fsync) is Kafka's
KAFKA_STORAGE_ERROR -- the client then hears NOT_COORDINATOR and rediscovers the
coordinator, as it would with Kafka -- and an entry over the size limit is
RECORD_LIST_TOO_LARGE.
"""

from __future__ import annotations

from wire.constants import ErrorCode

__all__ = [
    "CompactionError",
    "CorruptLogError",
    "LogClosedError",
    "LogLockedError",
    "LogWriteError",
    "RecordTooLargeError",
    "StorageError",
    "UnsupportedFormatError",
    "append_error_of",
]


class StorageError(Exception):
    """Base class of everything storage raises on purpose."""

    #: The Kafka log-append error this failure stands for.
    append_error: ErrorCode = ErrorCode.KAFKA_STORAGE_ERROR


class LogWriteError(StorageError):
    """An append or fsync failed (ENOSPC, EIO, a short write, ...). The log was cut back to
    its last good entry, so the failed records are not in it; when even that failed, or an
    fsync failed, the log refuses further appends until it is reopened."""

    def __init__(self, message: str, errno: int | None = None) -> None:
        super().__init__(message)
        self.errno = errno


class LogClosedError(LogWriteError):
    """An append to a closed log."""


class RecordTooLargeError(StorageError):
    """A record whose entry exceeds the maximum entry size; nothing was written."""

    append_error = ErrorCode.RECORD_LIST_TOO_LARGE


class CompactionError(StorageError):
    """A compaction failed before its commit point; the log is as it was."""


class CorruptLogError(StorageError):
    """Corruption that recovery will not repair on its own: names the file and byte offset."""

    def __init__(self, path: str, offset: int, reason: str) -> None:
        super().__init__(
            f"corrupt log segment {path} at byte offset {offset}: {reason} "
            "(start with --recover=truncate to drop the damaged data)"
        )
        self.path = path
        self.offset = offset
        self.reason = reason


class UnsupportedFormatError(StorageError):
    """A segment or entry in a format this kcoord does not read (written by a newer one)."""


class LogLockedError(StorageError):
    """Another process (or another open Log in this one) holds the data directory."""


def append_error_of(exc: BaseException) -> ErrorCode:
    """The Kafka log-append error an exception stands for (unknown ones: storage error)."""
    if isinstance(exc, StorageError):
        return exc.append_error
    if isinstance(exc, OSError):
        return ErrorCode.KAFKA_STORAGE_ERROR
    return ErrorCode.UNKNOWN_SERVER_ERROR
