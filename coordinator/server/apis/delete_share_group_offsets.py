"""DeleteShareGroupOffsets (key 92), version 0 (Kafka 4.2): delete an empty share group's
share state of whole topics, as ``KafkaApis.handleDeleteShareGroupOffsetsRequest`` and
``GroupCoordinatorService.deleteShareGroupOffsets`` serve it, answered by the group core
(``coordinator/core/share_group/offsets.py``): GROUP_ID_NOT_FOUND and NON_EMPTY_GROUP answer
the whole request; per topic NONE, or UNKNOWN_TOPIC_OR_PARTITION for a topic the broker does
not have or the group never initialized. The share state's tombstones and the group's
shrunk initialized topics are durable before the answer; a ShareFetch afterwards starts the
share partition again by ``share.auto.offset.reset``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wire
from coordinator.core.share_group.offsets import (
    INVALID_GROUP_ID_MESSAGE,
    handle_delete_share_group_offsets,
    top_level_error,
)
from coordinator.server.api_support import with_current_topics
from coordinator.server.route import (
    Acl,
    AclOperation,
    Entries,
    OneKey,
    ResourceType,
    Route,
    field,
)
from coordinator.txn.placement import OFFSETS_TOPIC
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "delete_share_group_offsets"]


async def delete_share_group_offsets(
    ctx: RequestContext, request: wire.DecodedRequest
) -> dict[str, Any]:
    """Serve one DeleteShareGroupOffsets."""
    body = request.body
    if not body.group_id:
        return top_level_error(ErrorCode.INVALID_GROUP_ID, INVALID_GROUP_ID_MESSAGE)
    core = {"group_id": body.group_id,
            "topics": [{"topic_name": topic.topic_name} for topic in body.topics]}
    answer: dict[str, Any] = await with_current_topics(ctx).call(
        handle_delete_share_group_offsets, ctx, core)
    return answer


ROUTE = Route(
    ApiKey.DELETE_SHARE_GROUP_OFFSETS,
    delete_share_group_offsets,
    acl=(Acl(ResourceType.GROUP, AclOperation.DELETE),
         Acl(ResourceType.TOPIC, AclOperation.READ, entries=(Entries("topics", "topic_name"),))),
    routing=OneKey(OFFSETS_TOPIC, field("group_id")),
)
