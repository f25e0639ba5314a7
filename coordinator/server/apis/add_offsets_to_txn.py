"""AddOffsetsToTxn (25): a transaction will commit offsets of a group (adds the group's
``__consumer_offsets`` partition to it).

The handler is ``coordinator/server/txn_apis.py``'s ``add_offsets_to_txn``."""

from __future__ import annotations

from coordinator.server.route import Acl, AclOperation, OneKey, ResourceType, Route, field
from coordinator.server.txn_apis import add_offsets_to_txn
from coordinator.txn.placement import TRANSACTION_STATE_TOPIC
from wire.constants import ApiKey

__all__ = ["ROUTE"]


ROUTE = Route(
    ApiKey.ADD_OFFSETS_TO_TXN,
    add_offsets_to_txn,
    acl=(Acl(ResourceType.TRANSACTIONAL_ID, AclOperation.WRITE),
         Acl(ResourceType.GROUP, AclOperation.READ)),
    routing=OneKey(TRANSACTION_STATE_TOPIC, field("transactional_id")),
)
