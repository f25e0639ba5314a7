"""Storage exceptions and how a failed append becomes a Kafka error code.

Kafka's coordinator maps the *log append* error of its ``__consumer_offsets`` write to the
code it answers with (``GroupMetadataManager.storeGroup`` for group metadata,
``storeOffsets`` for offset commits). kcoord's storage errors stand for the same append
errors, so the server answers with the same codes:

- UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS(_AFTER_APPEND):
  group -> COORDINATOR_NOT_AVAILABLE, offsets -> COORDINATOR_NOT_AVAILABLE
- NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR:
  group -> NOT_COORDINATOR, offsets -> NOT_COORDINATOR
- REQUEST_TIMED_OUT: group -> REBALANCE_IN_PROGRESS, offsets -> unchanged
- MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE, INVALID_FETCH_SIZE:
  group -> UNKNOWN_SERVER_ERROR, offsets -> INVALID_COMMIT_OFFSET_SIZE
- NETWORK_EXCEPTION: group -> unchanged, offsets -> COORDINATOR_LOAD_IN_PROGRESS
- anything else: unchanged

A disk error (ENOSPC, EIO, short write, failed fsync) is Kafka's KAFKA_STORAGE_ERROR, so the
client hears NOT_COORDINATOR and rediscovers the coordinator, as it would with Kafka.
"""

from __future__ import annotations

from typing import Literal

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
    "kafka_error_for",
]


class StorageError(Exception):
    """Base class of everything storage raises on purpose."""

    #: The Kafka log-append error this failure stands for.
    append_error: int = ErrorCode.KAFKA_STORAGE_ERROR


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


_GROUP: dict[int, int] = {
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_LEADER_OR_FOLLOWER: ErrorCode.NOT_COORDINATOR,
    ErrorCode.KAFKA_STORAGE_ERROR: ErrorCode.NOT_COORDINATOR,
    ErrorCode.REQUEST_TIMED_OUT: ErrorCode.REBALANCE_IN_PROGRESS,
    ErrorCode.MESSAGE_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
    ErrorCode.RECORD_LIST_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
    ErrorCode.INVALID_FETCH_SIZE: ErrorCode.UNKNOWN_SERVER_ERROR,
}

_OFFSETS: dict[int, int] = {
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_LEADER_OR_FOLLOWER: ErrorCode.NOT_COORDINATOR,
    ErrorCode.KAFKA_STORAGE_ERROR: ErrorCode.NOT_COORDINATOR,
    ErrorCode.MESSAGE_TOO_LARGE: ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
    ErrorCode.RECORD_LIST_TOO_LARGE: ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
    ErrorCode.INVALID_FETCH_SIZE: ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
    ErrorCode.NETWORK_EXCEPTION: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
}


def append_error_of(exc: BaseException) -> int:
    """The Kafka log-append error an exception stands for (unknown ones: storage error)."""
    if isinstance(exc, StorageError):
        return exc.append_error
    if isinstance(exc, OSError):
        return ErrorCode.KAFKA_STORAGE_ERROR
    return ErrorCode.UNKNOWN_SERVER_ERROR


def kafka_error_for(exc: BaseException, kind: Literal["group", "offsets"]) -> int:
    """The error code to answer with when persisting group metadata (``"group"``: SyncGroup,
    static-member replacement, DeleteGroups) or offsets (``"offsets"``: OffsetCommit,
    OffsetDelete) failed with ``exc``."""
    error = append_error_of(exc)
    if kind == "group":
        return _GROUP.get(error, error)
    if kind == "offsets":
        return _OFFSETS.get(error, error)
    raise ValueError(f"kind must be 'group' or 'offsets', not {kind!r}")
