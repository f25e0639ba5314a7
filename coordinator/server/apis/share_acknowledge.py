"""ShareAcknowledge (key 79), versions 1-2 (Kafka 4.2): a share group member acknowledges
records it acquired, as ``KafkaApis.handleShareAcknowledgeRequest`` serves it.

- The share session must exist (SHARE_SESSION_NOT_FOUND) and the epoch be its next one
  (INVALID_SHARE_SESSION_EPOCH; epoch 0 always is: a ShareAcknowledge cannot open a
  session); epoch -1 applies the acknowledgements, releases what the member still holds
  on the session's partitions and closes the session. A session error answers the whole
  request, with nothing done.
- ACCEPT, RELEASE, REJECT (and RENEW in v2) per batch, all of a partition's batches or
  none (INVALID_RECORD_STATE for records the member does not hold, INVALID_REQUEST for
  malformed batches); persisted before the answer. v2 reports
  ``acquisition_lock_timeout_ms``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wire
from coordinator.server.route import Acl, AclOperation, Entries, ResourceType, Route
from coordinator.server.share_support import group_by_topic, share_runtime_of, start_request
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "handle"]


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any]:
    """Serve one ShareAcknowledge."""
    started = await start_request(ctx, "acknowledge", request.body)
    if isinstance(started, dict):
        return started
    parts, session = started
    entries = []
    for key in parts.keys:
        code, message = session.acknowledge_errors.get(key, (ErrorCode.NONE, None))
        error = parts.errors.get(key)
        if error is not None:
            code, message = error, None
        entries.append((key, {"partition_index": key.partition, "error_code": code,
                              "error_message": message}))
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "acquisition_lock_timeout_ms": share_runtime_of(ctx).lock_duration_ms(
            request.body.group_id or ""),
        "responses": group_by_topic(entries),
        "node_endpoints": [],
    }


ROUTE = Route(
    ApiKey.SHARE_ACKNOWLEDGE,
    handle,
    acl=(Acl(ResourceType.GROUP, AclOperation.READ),
         Acl(ResourceType.TOPIC, AclOperation.READ, entries=(Entries("topics", ""),))),
    may_wait=True,  # its acknowledgements are answered once durable
)
