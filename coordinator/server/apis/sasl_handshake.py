"""SaslHandshake (key 17), versions 0-1.

On a SASL listener, before the client has authenticated (``sasl_gate.py``): the
connection's authenticator (``coordinator.security.sasl``) takes the mechanism; one that is
not enabled answers UNSUPPORTED_SASL_MECHANISM with the enabled list, and the connection
closes after the answer; a re-authentication (KIP-368) comes here through the gate too
(``sasl_gate.py``). Elsewhere -- a PLAINTEXT listener, or a connection already
authenticated whose session does not expire or re-authenticated less than a second ago --
as Kafka's
``KafkaApis.handleSaslHandshakeRequest``: ILLEGAL_SASL_STATE and no mechanisms, so a client
configured for SASL reports a clear configuration error instead of a dropped connection.
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
    """Choose the mechanism, or refuse the handshake where no SASL exchange is due."""
    conn = ctx.state.connections.get(ctx.connection_id)
    if conn is None or conn.sasl is None:
        return {"error_code": ErrorCode.ILLEGAL_SASL_STATE, "mechanisms": []}
    answer = conn.sasl.handshake(request.body.mechanism)
    if answer.close:
        conn.close_after_answer = True
    return {"error_code": answer.error_code, "mechanisms": list(answer.mechanisms)}


ROUTE = Route(
    ApiKey.SASL_HANDSHAKE,
    handle,
    acl=ALLOWED,
)
