"""ListTransactions (66): the transactions this broker coordinates.

The handler is ``coordinator/server/txn_apis.py``'s ``list_transactions``."""

from __future__ import annotations

from coordinator.server.acl_answers import filter_listed
from coordinator.server.route import Acl, AclOperation, ListedKeys, ResourceType, Route
from coordinator.server.txn_apis import list_transactions
from coordinator.txn.placement import TRANSACTION_STATE_TOPIC
from wire.constants import ApiKey

__all__ = ["ROUTE"]


ROUTE = Route(
    ApiKey.LIST_TRANSACTIONS,
    list_transactions,
    acl=(Acl(ResourceType.TRANSACTIONAL_ID, AclOperation.DESCRIBE,
             "only the transactional ids one may describe are listed"),),
    read_only=True,
    routing=ListedKeys(TRANSACTION_STATE_TOPIC, "transaction_states", "transactional_id"),
    answer_filter=filter_listed("transaction_states", "transactional_id",
                                ResourceType.TRANSACTIONAL_ID, cluster_lists_all=False),
)
