"""SaslHandshake (key 17), versions 0-1, on kcoord's PLAINTEXT listener.

As Kafka's ``KafkaApis.handleSaslHandshakeRequest`` answers on a listener without SASL:
ILLEGAL_SASL_STATE and no mechanisms, so a client configured for SASL reports a clear
configuration error instead of a dropped connection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import wire
from coordinator.server.route import ALLOWED, Route
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["ROUTE", "handle"]


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """Refuse the handshake: this listener speaks PLAINTEXT only."""
    return {"error_code": ErrorCode.ILLEGAL_SASL_STATE, "mechanisms": []}


ROUTE = Route(
    ApiKey.SASL_HANDSHAKE,
    handle,
    acl=ALLOWED,
)
