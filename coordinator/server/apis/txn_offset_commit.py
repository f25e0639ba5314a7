"""TxnOffsetCommit (28): offsets committed inside a transaction, through the group
coordinator as in Kafka (v5 adds the group's offsets partition to the transaction itself).

The handler is ``coordinator/server/txn_apis.py``'s ``txn_offset_commit``."""

from __future__ import annotations

from coordinator.server.route import Acl, AclOperation, Entries, OneKey, ResourceType, Route, field
from coordinator.server.txn_apis import txn_offset_commit
from coordinator.txn.placement import OFFSETS_TOPIC
from wire.constants import ApiKey

__all__ = ["ROUTE"]


ROUTE = Route(
    ApiKey.TXN_OFFSET_COMMIT,
    txn_offset_commit,
    acl=(Acl(ResourceType.TRANSACTIONAL_ID, AclOperation.WRITE),
         Acl(ResourceType.GROUP, AclOperation.READ),
         Acl(ResourceType.TOPIC, AclOperation.READ, entries=(Entries("topics"),))),
    routing=OneKey(OFFSETS_TOPIC, field("group_id")),
)
