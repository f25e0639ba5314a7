"""What a client hears when the records behind its answer could not be persisted.

Kafka maps the ``__consumer_offsets`` append error to the code it answers with
(``GroupMetadataManager.storeGroup`` / ``storeOffsets``); ``storage.errors.kafka_error_for``
holds that table. Here the mapped code is put into each reply of the failed Result.
"""

from __future__ import annotations

import dataclasses

from coordinator.core.messages import (
    DeletableGroupResult,
    DeleteGroupsResponse,
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
    OffsetDeleteResponse,
    Response,
    SyncGroupResponse,
)

__all__ = ["append_failed_response", "error_code_for"]

_UNKNOWN_SERVER_ERROR = -1
_NOT_COORDINATOR = 16


def error_code_for(exc: BaseException, kind: str) -> int:
    """The Kafka error code for a failed append of group (``"group"``) or offset records."""
    try:
        from storage.errors import kafka_error_for
    except ImportError:  # storage not installed: Kafka's answer to a storage error
        return _NOT_COORDINATOR if isinstance(exc, OSError) else _UNKNOWN_SERVER_ERROR
    return kafka_error_for(exc, "offsets" if kind == "offsets" else "group")


def append_failed_response(response: Response, exc: BaseException) -> Response:
    """``response`` rewritten to carry the error Kafka answers when its append fails."""
    if isinstance(response, OffsetCommitResponse):
        code = error_code_for(exc, "offsets")
        return OffsetCommitResponse(
            topics=tuple(
                OffsetCommitResponseTopic(
                    name=t.name,
                    partitions=tuple(
                        OffsetCommitResponsePartition(
                            partition_index=p.partition_index,
                            error_code=p.error_code or code,
                        )
                        for p in t.partitions
                    ),
                )
                for t in response.topics
            )
        )
    if isinstance(response, OffsetDeleteResponse):
        return OffsetDeleteResponse(error_code=error_code_for(exc, "offsets"))
    code = error_code_for(exc, "group")
    if isinstance(response, DeleteGroupsResponse):
        return DeleteGroupsResponse(
            results=tuple(
                DeletableGroupResult(group_id=r.group_id, error_code=r.error_code or code)
                for r in response.results
            )
        )
    if isinstance(response, JoinGroupResponse):
        return JoinGroupResponse(error_code=code, member_id=response.member_id)
    if isinstance(response, SyncGroupResponse):
        return SyncGroupResponse(error_code=code)
    if isinstance(response, HeartbeatResponse | LeaveGroupResponse):
        if response.error_code == 0:
            return dataclasses.replace(response, error_code=code)
        return response
    # Reads (OffsetFetch, DescribeGroups, ListGroups) never carry records of their own.
    return response
