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
from coordinator.core.share_group.offsets import handle_delete_share_group_offsets
from coordinator.server.route import AclOperation
from coordinator.server.share_support import run_group_offsets_step, share_offsets_route
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "delete_share_group_offsets"]


async def delete_share_group_offsets(
    ctx: RequestContext, request: wire.DecodedRequest
) -> dict[str, Any]:
    """Serve one DeleteShareGroupOffsets."""
    body = request.body
    answer: dict[str, Any] = await run_group_offsets_step(
        ctx, handle_delete_share_group_offsets, body.group_id,
        [{"topic_name": topic.topic_name} for topic in body.topics])
    return answer


ROUTE = share_offsets_route(
    ApiKey.DELETE_SHARE_GROUP_OFFSETS, delete_share_group_offsets, AclOperation.DELETE)
