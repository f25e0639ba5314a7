"""AddPartitionsToTxn (24): a transaction will write to partitions. v0-3 carry one
transactional id (a client's); v4+ batch several (from brokers), each answered on its own.

The handler is ``coordinator/server/txn_apis.py``'s ``add_partitions_to_txn``."""

from __future__ import annotations

from coordinator.server.route import (
    Acl,
    AclOperation,
    Entries,
    OneKey,
    ResourceType,
    Route,
    field_below,
)
from coordinator.server.txn_apis import add_partitions_to_txn
from coordinator.txn.placement import TRANSACTION_STATE_TOPIC
from wire.constants import ApiKey, ErrorCode

__all__ = ["ROUTE"]

_BATCHED_VERSION = 4


ROUTE = Route(
    ApiKey.ADD_PARTITIONS_TO_TXN,
    add_partitions_to_txn,
    acl=(Acl(ResourceType.TRANSACTIONAL_ID, AclOperation.WRITE, "v0-3"),
         # v0-3 (from clients): one denied topic fails the request, the allowed topics'
         # partitions answering OPERATION_NOT_ATTEMPTED (v4+ is from brokers: unchecked).
         Acl(ResourceType.TOPIC, AclOperation.WRITE, entries=(Entries(
             "v3_and_below_topics", rest_error=ErrorCode.OPERATION_NOT_ATTEMPTED),)),
         Acl(ResourceType.CLUSTER, AclOperation.CLUSTER_ACTION, "v4+: from a broker")),
    routing=OneKey(TRANSACTION_STATE_TOPIC,
                   field_below(_BATCHED_VERSION, "v3_and_below_transactional_id")),
)
