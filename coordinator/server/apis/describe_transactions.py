"""DescribeTransactions (65): the state of transactions, each on its own coordinator.

The handler is ``coordinator/server/txn_apis.py``'s ``describe_transactions``."""

from __future__ import annotations

from coordinator.server.route import Acl, AclOperation, EachKey, Entries, ResourceType, Route
from coordinator.server.txn_apis import describe_transactions
from coordinator.txn.placement import TRANSACTION_STATE_TOPIC
from wire.constants import ApiKey

__all__ = ["ROUTE"]


ROUTE = Route(
    ApiKey.DESCRIBE_TRANSACTIONS,
    describe_transactions,
    acl=(Acl(ResourceType.TRANSACTIONAL_ID, AclOperation.DESCRIBE,
             entries=(Entries("transactional_ids", ""),)),
         # The partitions of topics one may not DESCRIBE are left out of the answer.
         Acl(ResourceType.TOPIC, AclOperation.DESCRIBE, entries=(
             Entries("topics", "topic", within=Entries("transaction_states"), in_answer=True),))),
    read_only=True,
    routing=EachKey(TRANSACTION_STATE_TOPIC, "transactional_ids", "transaction_states",
                    "transactional_id"),
)
