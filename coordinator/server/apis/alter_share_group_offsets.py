"""AlterShareGroupOffsets (key 91), version 0 (Kafka 4.2): set an empty share group's start
offsets, as ``KafkaApis.handleAlterShareGroupOffsetsRequest`` and
``GroupCoordinatorService.alterShareGroupOffsets`` serve it.

Two writes, as Kafka's: the group coordinator checks the group (GROUP_ID_NOT_FOUND,
NON_EMPTY_GROUP: the whole request) and records the partitions as initialized
(``coordinator/core/share_group/offsets.py``); then the share coordinator writes each one's
fresh snapshot (``coordinator/share/offsets.py``, Kafka's persister InitializeShareGroupState).
Each is durable before the next step; a failure of the second answers every partition of
the coordinator's answer with the error, and the whole request too (Kafka's
buildErrorResponse). Topics the broker does not have are answered here,
UNKNOWN_TOPIC_OR_PARTITION per partition, before the coordinator's topics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wire
from coordinator.core.share_group.offsets import (
    UNKNOWN_TOPIC_MESSAGE,
    AlterShareOffsetsOutcome,
    handle_alter_share_group_offsets,
)
from coordinator.server.api_support import TopicView
from coordinator.server.route import AclOperation
from coordinator.server.share_support import (
    run_group_offsets_step,
    share_offsets_route,
    share_runtime_of,
)
from coordinator.share.durable import SharePartitionKey
from coordinator.share.manager import ShareAppendFailed
from coordinator.share.offsets import WriteStartOffsets, handle_write_start_offsets
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "alter_share_group_offsets"]


async def alter_share_group_offsets(
    ctx: RequestContext, request: wire.DecodedRequest
) -> dict[str, Any]:
    """Serve one AlterShareGroupOffsets."""
    body = request.body
    group_id = body.group_id
    view = TopicView(ctx.state.topics)
    refused: list[dict[str, Any]] = []
    topics: list[dict[str, Any]] = []
    for topic in body.topics:
        name = topic.topic_name
        partitions = [{"partition_index": p.partition_index, "start_offset": p.start_offset}
                      for p in topic.partitions]
        if view.partition_count(name) is None:
            refused.append({"topic_name": name, "topic_id": view.id_of(name), "partitions": [
                {"partition_index": p["partition_index"],
                 "error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                 "error_message": UNKNOWN_TOPIC_MESSAGE} for p in partitions]})
        else:
            topics.append({"topic_name": name, "partitions": partitions})
    outcome: AlterShareOffsetsOutcome | dict[str, Any] = await run_group_offsets_step(
        ctx, handle_alter_share_group_offsets, group_id, topics)
    if isinstance(outcome, dict):  # the whole request's error
        return outcome
    answer = {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": None,
              "responses": refused + outcome.responses}
    if not outcome.start_offsets:
        return answer
    written = await share_runtime_of(ctx).call(handle_write_start_offsets, ctx, WriteStartOffsets(
        {SharePartitionKey(group_id, topic_id, index): offset
         for (topic_id, index), offset in outcome.start_offsets.items()},
        outcome.state_epoch))
    if isinstance(written, ShareAppendFailed):
        return _failed(answer, outcome.responses, written.error)
    return answer


def _failed(answer: dict[str, Any], written: list[dict[str, Any]],
            error: ErrorCode) -> dict[str, Any]:
    """The share state could not be written: the request's error, and every partition the
    coordinator answered has it (Kafka's buildErrorResponse on a persister failure)."""
    failed = [{**topic, "partitions": [
        {"partition_index": p["partition_index"], "error_code": error, "error_message": None}
        for p in topic["partitions"]]} for topic in written]
    refused = answer["responses"][:len(answer["responses"]) - len(written)]
    return {**answer, "error_code": error, "responses": refused + failed}


ROUTE = share_offsets_route(
    ApiKey.ALTER_SHARE_GROUP_OFFSETS, alter_share_group_offsets, AclOperation.READ)
