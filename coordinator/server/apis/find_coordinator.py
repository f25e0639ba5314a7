"""FindCoordinator (key 10), versions 0-6: this broker coordinates every group, or, with
several brokers, the leader of the key's ``__consumer_offsets`` / ``__transaction_state``
partition does (``cluster.Cluster``; every broker answers the same).

- key_type 0 (group): this broker. v0-3 carry one ``key``; v4+ batch ``coordinator_keys``
  into ``coordinators[]``.
- key_type 1 (transaction): this broker, which runs the transaction coordinator. A server
  without one (no topic store) answers COORDINATOR_NOT_AVAILABLE, as a Kafka broker whose
  ``__transaction_state`` topic is unavailable does.
- key_type 2 (share, KIP-932) and unknown key types: INVALID_REQUEST, as Kafka does without
  a share coordinator.

v1-3 answers carry ``error_message``; like Kafka, success says "NONE". ErrorCode before v4
report node -1, host "" and port -1 (Kafka's ``Node.noNode()``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wire
from coordinator.server.context import listener_of
from coordinator.server.route import Acl, AclOperation, Entries, ResourceType, Route
from coordinator.txn.placement import OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import BrokerIdentity, RequestContext

__all__ = ["ROUTE", "handle"]

KEY_TYPE_GROUP = 0
KEY_TYPE_TRANSACTION = 1
_BATCHED_VERSION = 4

_TRANSACTIONS_MESSAGE = "The coordinator is not available."


def _lookup(key_type: int, transactions: bool) -> tuple[ErrorCode, str | None]:
    if key_type == KEY_TYPE_GROUP:
        return ErrorCode.NONE, None
    if key_type == KEY_TYPE_TRANSACTION:
        if transactions:
            return ErrorCode.NONE, None
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, _TRANSACTIONS_MESSAGE
    return ErrorCode.INVALID_REQUEST, f"Unsupported coordinator key type {key_type}."


def _node(ctx: RequestContext, key_type: int, key: str, error: ErrorCode) -> dict[str, Any]:
    if error != ErrorCode.NONE:
        return {"node_id": -1, "host": "", "port": -1}
    identity: BrokerIdentity = ctx.state.identity
    cluster = ctx.state.cluster
    if cluster is not None:
        topic = OFFSETS_TOPIC if key_type == KEY_TYPE_GROUP else TRANSACTION_STATE_TOPIC
        identity = cluster.identities[cluster.coordinator(topic, key)]
    host, port = identity.address(listener_of(ctx))  # the listener the request came on
    return {"node_id": identity.node_id, "host": host, "port": port}


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """Name the coordinator of each key."""
    body = request.body
    error, message = _lookup(body.key_type, getattr(ctx.state, "transactions", None) is not None)
    if request.api_version >= _BATCHED_VERSION:
        return {
            "throttle_time_ms": 0,
            "coordinators": [
                {
                    "key": key,
                    "error_code": error,
                    "error_message": message,
                    **_node(ctx, body.key_type, key, error),
                }
                for key in body.coordinator_keys
            ],
        }
    return {
        "throttle_time_ms": 0,
        "error_code": error,
        "error_message": message if message is not None else "NONE",
        **_node(ctx, body.key_type, body.key, error),
    }


ROUTE = Route(
    ApiKey.FIND_COORDINATOR,
    handle,
    # v4+: each key on its own (a denied one answers its error, the others are found).
    acl=(Acl(ResourceType.GROUP, AclOperation.DESCRIBE, "key_type 0",
             entries=(Entries("coordinator_keys", ""),)),
         Acl(ResourceType.TRANSACTIONAL_ID, AclOperation.DESCRIBE, "key_type 1",
             entries=(Entries("coordinator_keys", ""),))),
)
