"""InitProducerId (key 22), versions 0-5: producer ids.

As Kafka's ``TransactionCoordinator.handleInitProducerId`` does for a null
``transactional_id``: a fresh producer id with epoch 0 every time (v3+ ``producer_id`` /
``producer_epoch`` are checked for consistency, then ignored: given one without the other
is INVALID_REQUEST). A transactional id goes to the transaction coordinator
(``coordinator/server/txn_apis.py``): the id's producer id and next epoch, fencing the
previous producer; an empty one is INVALID_REQUEST as in Kafka.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wire
from coordinator.server.api_support import store_of
from coordinator.server.route import Acl, AclOperation, AnyOf, OneKey, ResourceType, Route, field
from coordinator.txn.placement import TRANSACTION_STATE_TOPIC
from wire import ErrorCode
from wire.constants import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "handle"]


def _error(code: ErrorCode) -> dict[str, Any]:
    return {
        "throttle_time_ms": 0,
        "error_code": code,
        "producer_id": NO_PRODUCER_ID,
        "producer_epoch": NO_PRODUCER_EPOCH,
    }


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """A new producer id for an idempotent producer; an error for a transactional one."""
    body = request.body
    if (body.producer_id == NO_PRODUCER_ID) != (body.producer_epoch == NO_PRODUCER_EPOCH):
        return _error(ErrorCode.INVALID_REQUEST)
    if body.transactional_id is not None:
        if body.transactional_id == "":
            return _error(ErrorCode.INVALID_REQUEST)
        from coordinator.server.txn_apis import init_producer_id

        return await init_producer_id(ctx, request)
    return {
        "throttle_time_ms": 0,
        "error_code": ErrorCode.NONE,
        "producer_id": store_of(ctx).next_producer_id(),
        "producer_epoch": 0,
    }


ROUTE = Route(
    ApiKey.INIT_PRODUCER_ID,
    handle,
    acl=(Acl(ResourceType.TRANSACTIONAL_ID, AclOperation.WRITE, "with a transactional id"),
         AnyOf((Acl(ResourceType.CLUSTER, AclOperation.IDEMPOTENT_WRITE, "without one"),
               Acl(ResourceType.TOPIC, AclOperation.WRITE, "without one: on any topic")))),
    routing=OneKey(TRANSACTION_STATE_TOPIC, field("transactional_id")),
)
