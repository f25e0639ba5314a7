"""SaslAuthenticate (key 36), versions 0-2 (KIP-152; v1's session lifetime is KIP-368's).

On a SASL listener before authentication (``sasl_gate.py``): the client's bytes go to the
connection's authenticator (``coordinator.security.sasl``) and its answer comes back. A
completed exchange sets the connection's principal (``User:`` + the authorization id) and
ends the gate, and when the session expires (``connections.max.reauth.ms``, an OAUTHBEARER
token's ``exp``) keeps the authenticator for re-authentication (KIP-368,
``sasl_gate.SaslSession``); v1+ answers carry the session lifetime. An error answer
(SASL_AUTHENTICATION_FAILED with Kafka's message, ILLEGAL_SASL_STATE) is sent and then the
connection closes. Elsewhere -- PLAINTEXT, or after authentication -- Kafka's
``KafkaApis.handleSaslAuthenticateRequest`` answer: ILLEGAL_SASL_STATE.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import wire
from coordinator.server.route import ALLOWED, Route
from coordinator.server.sasl_gate import start_session
from wire import ErrorCode
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext

__all__ = ["ILLEGAL_SASL_STATE_MESSAGE", "ROUTE", "handle"]

#: Kafka's Errors.ILLEGAL_SASL_STATE message.
ILLEGAL_SASL_STATE_MESSAGE = "Request is not valid given the current SASL state."


async def handle(ctx: RequestContext, request: wire.DecodedRequest) -> dict[str, Any] | None:
    """One step of the SASL exchange."""
    conn = ctx.state.connections.get(ctx.connection_id)
    if conn is None or conn.sasl is None:
        return {"error_code": ErrorCode.ILLEGAL_SASL_STATE,
                "error_message": ILLEGAL_SASL_STATE_MESSAGE, "auth_bytes": b""}
    if not ctx.state.loaded.is_set():  # SCRAM users created by AlterUserScramCredentials
        await ctx.state.loaded.wait()  # are known once the log is replayed
    answer = conn.sasl.authenticate(request.body.auth_bytes, int(time.time() * 1000))
    if answer.close:
        conn.close_after_answer = True
    elif answer.principal is not None:
        conn.principal = answer.principal
        if answer.expires_at_ms is not None:
            start_session(conn, answer.session_lifetime_ms)
        conn.sasl = None  # authenticated: the gate lets the connection through
    return {"error_code": answer.error_code, "error_message": answer.error_message,
            "auth_bytes": answer.auth_bytes, "session_lifetime_ms": answer.session_lifetime_ms}


ROUTE = Route(
    ApiKey.SASL_AUTHENTICATE,
    handle,
    acl=ALLOWED,
)
