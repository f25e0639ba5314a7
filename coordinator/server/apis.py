"""The one handler table: every API this broker serves, keyed by API key.

Each route names the function that answers the API:

- group APIs: a core handler (``coordinator/core/<api>.py``, ``core=True``) that the
  runtime runs against the coordinator (``runtime.group_api``), or a function of
  ``group_apis.py`` where Kafka's ``KafkaApis`` does something around the coordinator
  (topic ids, unknown topics, version-shaped answers);
- broker APIs: ``coordinator/broker/<api>.py``'s ``handle``.

Routes name their handlers instead of importing them: importing every handler (the core,
the broker surface, the runtime and storage's writer) takes about 120 ms on an idle machine
(``load_handlers``, measured after trio and wire are in), while the whole startup to the
first answered ApiVersions takes about 200 ms; the server answers ApiVersions from
``SERVED_API_KEYS`` before that, while a worker thread runs ``load_handlers``. ``routes``
refuses a key given twice; ApiVersions advertises exactly the versions that are both
decoded by ``wire`` and routed here (``broker/api_versions.py``).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from wire import ApiKey
from wire.registry import implemented

if TYPE_CHECKING:
    from coordinator.server.context import Handler

__all__ = ["CONSUMER_PROTOCOL_API_KEYS", "ROUTES", "SERVED_API_KEYS", "Route", "load_handlers",
           "routes", "served_api_keys"]


class Route(NamedTuple):
    """``api_key`` is answered by ``module.function`` (a core handler when ``core``).
    A NamedTuple, not a dataclass: this module is imported before the listener binds."""

    api_key: ApiKey
    module: str
    function: str
    core: bool = False

    def resolve(self) -> Handler:
        """Import the handler (a core handler wrapped to run in the coordinator runtime)."""
        target: Any = getattr(importlib.import_module(self.module), self.function)
        if self.core:
            from coordinator.server.runtime import group_api

            return group_api(target)
        handler: Handler = target
        return handler


def routes(entries: Iterable[Route]) -> Mapping[int, Route]:
    """A table of routes by API key; a key given twice, or one wire cannot decode, is a
    programming error."""
    table: dict[int, Route] = {}
    for route in entries:
        key = route.api_key
        if key in table:
            raise ValueError(f"API key {key} ({key.name}) has two handlers")
        if not implemented(key):
            raise ValueError(f"API key {key} ({key.name}) has no wire codec")
        table[key] = route
    return table


_CORE = "coordinator.core"
_GLUE = "coordinator.server.group_apis"
_TXN = "coordinator.server.txn_apis"

ROUTES: Mapping[int, Route] = routes([
    # The broker surface.
    Route(ApiKey.PRODUCE, "coordinator.broker.produce", "handle"),
    Route(ApiKey.FETCH, "coordinator.broker.fetch", "handle"),
    Route(ApiKey.LIST_OFFSETS, "coordinator.broker.list_offsets", "handle"),
    Route(ApiKey.METADATA, "coordinator.broker.metadata", "handle"),
    Route(ApiKey.FIND_COORDINATOR, "coordinator.broker.find_coordinator", "handle"),
    Route(ApiKey.API_VERSIONS, "coordinator.broker.api_versions", "handle"),
    Route(ApiKey.CREATE_TOPICS, "coordinator.broker.create_topics", "handle"),
    Route(ApiKey.DELETE_TOPICS, "coordinator.broker.delete_topics", "handle"),
    Route(ApiKey.CREATE_PARTITIONS, "coordinator.broker.create_partitions", "handle"),
    Route(ApiKey.DELETE_RECORDS, "coordinator.broker.delete_records", "handle"),
    Route(ApiKey.DESCRIBE_CONFIGS, "coordinator.broker.describe_configs", "handle"),
    Route(ApiKey.INIT_PRODUCER_ID, "coordinator.broker.init_producer_id", "handle"),
    Route(ApiKey.SASL_HANDSHAKE, "coordinator.broker.sasl_handshake", "handle"),
    # The group coordinator.
    Route(ApiKey.JOIN_GROUP, _GLUE, "join_group"),
    Route(ApiKey.SYNC_GROUP, f"{_CORE}.sync", "handle_sync_group", core=True),
    Route(ApiKey.HEARTBEAT, f"{_CORE}.heartbeat", "handle_heartbeat", core=True),
    Route(ApiKey.LEAVE_GROUP, f"{_CORE}.leave", "handle_leave_group", core=True),
    Route(ApiKey.OFFSET_COMMIT, _GLUE, "offset_commit"),
    Route(ApiKey.OFFSET_FETCH, _GLUE, "offset_fetch"),
    Route(ApiKey.DESCRIBE_GROUPS, _GLUE, "describe_groups"),
    Route(ApiKey.LIST_GROUPS, f"{_CORE}.list_groups", "handle_list_groups", core=True),
    Route(ApiKey.DELETE_GROUPS, f"{_CORE}.delete_groups", "handle_delete_groups", core=True),
    Route(ApiKey.OFFSET_DELETE, _GLUE, "offset_delete"),
    # Transactions (the transaction coordinator; TxnOffsetCommit reaches the groups').
    Route(ApiKey.ADD_PARTITIONS_TO_TXN, _TXN, "add_partitions_to_txn"),
    Route(ApiKey.ADD_OFFSETS_TO_TXN, _TXN, "add_offsets_to_txn"),
    Route(ApiKey.END_TXN, _TXN, "end_txn"),
    Route(ApiKey.TXN_OFFSET_COMMIT, _TXN, "txn_offset_commit"),
    Route(ApiKey.DESCRIBE_TRANSACTIONS, _TXN, "describe_transactions"),
    Route(ApiKey.LIST_TRANSACTIONS, _TXN, "list_transactions"),
    Route(ApiKey.CONSUMER_GROUP_HEARTBEAT, _GLUE, "consumer_group_heartbeat"),
    Route(ApiKey.CONSUMER_GROUP_DESCRIBE, _GLUE, "consumer_group_describe"),
])

SERVED_API_KEYS: frozenset[int] = frozenset(ROUTES)
"""What ApiVersions advertises (intersected with what wire decodes)."""

CONSUMER_PROTOCOL_API_KEYS: frozenset[int] = frozenset(
    {ApiKey.CONSUMER_GROUP_HEARTBEAT, ApiKey.CONSUMER_GROUP_DESCRIBE}
)
"""Not advertised when ``group.coordinator.rebalance.protocols`` leaves out ``consumer``."""


def served_api_keys(consumer_protocol_enabled: bool) -> frozenset[int]:
    """What ApiVersions advertises, given whether the consumer protocol is enabled."""
    if consumer_protocol_enabled:
        return SERVED_API_KEYS
    return SERVED_API_KEYS - CONSUMER_PROTOCOL_API_KEYS


def load_handlers(table: Mapping[int, Route] = ROUTES) -> dict[int, Handler]:
    """Import every routed handler (blocking: the server runs it in a worker thread)."""
    return {key: route.resolve() for key, route in table.items()}
