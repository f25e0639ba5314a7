"""EndTxn (26): commit or abort a transaction (v5: a transaction-version-2 client's, answered
with its new producer id and epoch).

The handler is ``coordinator/server/txn_apis.py``'s ``end_txn``."""

from __future__ import annotations

from coordinator.server.route import Acl, AclOperation, OneKey, ResourceType, Route, field
from coordinator.server.txn_apis import end_txn
from coordinator.txn.placement import TRANSACTION_STATE_TOPIC
from wire.constants import ApiKey

__all__ = ["ROUTE"]


ROUTE = Route(
    ApiKey.END_TXN,
    end_txn,
    acl=(Acl(ResourceType.TRANSACTIONAL_ID, AclOperation.WRITE),),
    routing=OneKey(TRANSACTION_STATE_TOPIC, field("transactional_id")),
)
