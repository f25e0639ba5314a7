"""The error a client hears when the log append behind its answer failed, per operation.

Storage says which Kafka log-append error a failure stands for
(``storage.errors.append_error_of``: a disk error is KAFKA_STORAGE_ERROR, an oversized
entry RECORD_LIST_TOO_LARGE); the coordinator maps it to the code it answers with, as
Kafka's coordinator does.
"""

from __future__ import annotations

from wire.constants import ErrorCode

__all__ = ["group_metadata_error", "offset_commit_error"]

_GROUP_METADATA: dict[ErrorCode, ErrorCode] = {
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    # The Scala coordinator's storeGroup maps it too (testStoreGroupErrorMapping); the Java
    # one leaves it as is, but no Java test pins that.
    ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    # Kafka 4 (Java); the Scala coordinator answered REBALANCE_IN_PROGRESS.
    ErrorCode.REQUEST_TIMED_OUT: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_LEADER_OR_FOLLOWER: ErrorCode.NOT_COORDINATOR,
    ErrorCode.KAFKA_STORAGE_ERROR: ErrorCode.NOT_COORDINATOR,
    ErrorCode.MESSAGE_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
    ErrorCode.RECORD_LIST_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
    ErrorCode.INVALID_FETCH_SIZE: ErrorCode.UNKNOWN_SERVER_ERROR,
}

_OFFSET_COMMIT: dict[ErrorCode, ErrorCode] = {
    # Transaction verification's retriable error, kept for clients that would not retry it.
    ErrorCode.NETWORK_EXCEPTION: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_LEADER_OR_FOLLOWER: ErrorCode.NOT_COORDINATOR,
    ErrorCode.KAFKA_STORAGE_ERROR: ErrorCode.NOT_COORDINATOR,
    ErrorCode.MESSAGE_TOO_LARGE: ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
    ErrorCode.RECORD_LIST_TOO_LARGE: ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
    ErrorCode.INVALID_FETCH_SIZE: ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
}


def group_metadata_error(append_error: ErrorCode) -> ErrorCode:
    """Kafka's appendGroupMetadataErrorToResponseError: group records (SyncGroup from the
    leader, a static member's replacement, DeleteGroups)."""
    return _GROUP_METADATA.get(append_error, append_error)


def offset_commit_error(append_error: ErrorCode) -> ErrorCode:
    """Kafka's maybeConvertOffsetCommitError: offset records (OffsetCommit, OffsetDelete)."""
    return _OFFSET_COMMIT.get(append_error, append_error)
