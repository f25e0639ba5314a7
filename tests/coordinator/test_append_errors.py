"""How a failed log append becomes the code a client hears, per operation (Kafka's tests of
the mapping, and the storage failures kcoord can produce)."""

from __future__ import annotations

import errno

import pytest

from coordinator.core.append_errors import group_metadata_error, offset_commit_error
from storage.errors import LogWriteError, RecordTooLargeError, append_error_of
from wire.constants import ErrorCode as E


def test_join_group_append_error_conversion() -> None:
    """GroupMetadataManagerTest.testJoinGroupAppendErrorConversion (Java)."""
    assert group_metadata_error(E.UNKNOWN_TOPIC_OR_PARTITION) == E.COORDINATOR_NOT_AVAILABLE
    assert group_metadata_error(E.NOT_ENOUGH_REPLICAS) == E.COORDINATOR_NOT_AVAILABLE
    assert group_metadata_error(E.REQUEST_TIMED_OUT) == E.COORDINATOR_NOT_AVAILABLE

    assert group_metadata_error(E.NOT_LEADER_OR_FOLLOWER) == E.NOT_COORDINATOR
    assert group_metadata_error(E.KAFKA_STORAGE_ERROR) == E.NOT_COORDINATOR

    assert group_metadata_error(E.MESSAGE_TOO_LARGE) == E.UNKNOWN_SERVER_ERROR
    assert group_metadata_error(E.RECORD_LIST_TOO_LARGE) == E.UNKNOWN_SERVER_ERROR
    assert group_metadata_error(E.INVALID_FETCH_SIZE) == E.UNKNOWN_SERVER_ERROR

    assert group_metadata_error(E.LEADER_NOT_AVAILABLE) == E.LEADER_NOT_AVAILABLE


def test_store_group_error_mapping() -> None:
    """GroupMetadataManagerTest.testStoreGroupErrorMapping (Scala)."""
    assert group_metadata_error(E.NONE) == E.NONE
    assert group_metadata_error(E.UNKNOWN_TOPIC_OR_PARTITION) == E.COORDINATOR_NOT_AVAILABLE
    assert group_metadata_error(E.NOT_ENOUGH_REPLICAS) == E.COORDINATOR_NOT_AVAILABLE
    assert (group_metadata_error(E.NOT_ENOUGH_REPLICAS_AFTER_APPEND)
            == E.COORDINATOR_NOT_AVAILABLE)
    assert group_metadata_error(E.NOT_LEADER_OR_FOLLOWER) == E.NOT_COORDINATOR
    assert group_metadata_error(E.MESSAGE_TOO_LARGE) == E.UNKNOWN_SERVER_ERROR
    assert group_metadata_error(E.RECORD_LIST_TOO_LARGE) == E.UNKNOWN_SERVER_ERROR
    assert group_metadata_error(E.INVALID_FETCH_SIZE) == E.UNKNOWN_SERVER_ERROR
    assert group_metadata_error(E.CORRUPT_MESSAGE) == E.CORRUPT_MESSAGE


def test_commit_offset_failure() -> None:
    """GroupMetadataManagerTest.testCommitOffsetFailure (Scala): the offsets variant."""
    assert offset_commit_error(E.UNKNOWN_TOPIC_OR_PARTITION) == E.COORDINATOR_NOT_AVAILABLE
    assert offset_commit_error(E.NOT_ENOUGH_REPLICAS) == E.COORDINATOR_NOT_AVAILABLE
    assert (offset_commit_error(E.NOT_ENOUGH_REPLICAS_AFTER_APPEND)
            == E.COORDINATOR_NOT_AVAILABLE)
    assert offset_commit_error(E.NOT_LEADER_OR_FOLLOWER) == E.NOT_COORDINATOR
    assert offset_commit_error(E.MESSAGE_TOO_LARGE) == E.INVALID_COMMIT_OFFSET_SIZE
    assert offset_commit_error(E.RECORD_LIST_TOO_LARGE) == E.INVALID_COMMIT_OFFSET_SIZE
    assert offset_commit_error(E.INVALID_FETCH_SIZE) == E.INVALID_COMMIT_OFFSET_SIZE
    assert offset_commit_error(E.CORRUPT_MESSAGE) == E.CORRUPT_MESSAGE


@pytest.mark.parametrize(
    ("append_error", "group", "offsets"),
    [
        (E.KAFKA_STORAGE_ERROR, E.NOT_COORDINATOR, E.NOT_COORDINATOR),
        (E.NETWORK_EXCEPTION, E.NETWORK_EXCEPTION, E.COORDINATOR_LOAD_IN_PROGRESS),
        (E.REQUEST_TIMED_OUT, E.COORDINATOR_NOT_AVAILABLE, E.REQUEST_TIMED_OUT),
        (E.INVALID_REQUEST, E.INVALID_REQUEST, E.INVALID_REQUEST),  # others pass through
    ],
)
def test_the_two_variants_differ_where_kafka_does(
    append_error: E, group: E, offsets: E
) -> None:
    assert group_metadata_error(append_error) == group
    assert offset_commit_error(append_error) == offsets


def test_what_kcoord_storage_failures_answer() -> None:
    disk = append_error_of(LogWriteError("ENOSPC", errno.ENOSPC))
    assert group_metadata_error(disk) == offset_commit_error(disk) == E.NOT_COORDINATOR == 16
    too_large = append_error_of(RecordTooLargeError("big"))
    assert group_metadata_error(too_large) == E.UNKNOWN_SERVER_ERROR == -1
    assert offset_commit_error(too_large) == E.INVALID_COMMIT_OFFSET_SIZE == 28
