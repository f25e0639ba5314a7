"""A SASL listener's connection before it has authenticated, as Kafka's
SaslServerAuthenticator: only ApiVersions, SaslHandshake and SaslAuthenticate are answered
(by their route modules, one at a time), anything else closes the connection, and so does
an answer its route marks ``close_after_answer`` (a failed login, an unsupported
mechanism). Once authenticated the connection goes on to the ordinary loop
(``connection.py``) with whatever it had buffered: a PLAINTEXT listener never comes here,
so its requests pay nothing for SASL.

``SaslHandshake`` v0's raw-token exchange (tokens without Kafka framing) is not served:
every client kcoord is tested with sends v1 and then SaslAuthenticate.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol

import trio

from coordinator.server.bad_input import BAD_INPUT
from coordinator.server.context import RequestContext, ServerState
from wire import (
    NEED_DATA,
    ApiKey,
    CorruptFrame,
    FrameReader,
    FrameTooLarge,
    UnsupportedVersion,
    encode_unsupported_api_versions,
)
from wire.fast_codec import decode_request, encode_response

if TYPE_CHECKING:
    import socket

    from coordinator.server.receiving import Receiving

__all__ = ["BEFORE_AUTHENTICATION", "authenticate"]

log = logging.getLogger(__name__)

#: Kafka's ``connection.failed.authentication.delay.ms`` default: a connection whose login
#: failed is closed this long after its answer is written (Kafka's SocketServer delays the
#: close so a client reads the answer, and a brute-force client is slowed down).
FAILED_AUTHENTICATION_DELAY_S = 0.1

#: What a SASL listener answers before authentication (Kafka: ApiVersions and
#: SaslHandshake, then SaslAuthenticate once a mechanism is chosen).
BEFORE_AUTHENTICATION = frozenset(
    {ApiKey.API_VERSIONS, ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE}
)


class Connection(Protocol):
    """What the gate uses of ``connection_socket.Connection``."""

    sock: socket.socket
    connection_id: int
    peer_host: str
    client_host: str
    principal: str
    sasl: Any
    close_after_answer: bool
    last_active: float

    async def receive(self, limit: int = ...) -> bytes: ...

    async def send_all(self, data: bytearray) -> None: ...


async def authenticate(
    server: ServerState, conn: Connection, reader: FrameReader, receiving: Receiving
) -> bool:
    """Serve ``conn``, whose ``sasl`` is its listener's authenticator, until it
    authenticates (True) or must be closed (False)."""
    peer = f"connection {conn.connection_id} from {conn.peer_host}"
    while conn.sasl is not None:
        try:
            payload = reader.next_frame()
        except FrameTooLarge as exc:
            BAD_INPUT.warn("closing %s: %s", peer, exc)
            return False
        if payload is NEED_DATA:
            data = await receiving.more(conn, reader)
            if not data:
                return False
            reader.receive_data(data)
            continue
        if receiving.active:
            receiving.done()
        try:
            request = decode_request(payload)
        except UnsupportedVersion as exc:
            if exc.api_key == ApiKey.API_VERSIONS and exc.correlation_id is not None:
                await conn.send_all(bytearray(encode_unsupported_api_versions(exc.correlation_id)))
                continue
            BAD_INPUT.warn("closing %s: %s", peer, exc)
            return False
        except CorruptFrame as exc:
            BAD_INPUT.warn("closing %s: %s", peer, exc)
            return False
        api_key = request.api_key
        if api_key not in BEFORE_AUTHENTICATION:
            BAD_INPUT.warn("closing %s: unexpected Kafka request of type %s during SASL "
                           "handshake", peer, request.spec.name)
            return False
        handler = server.handlers.get(api_key)
        if handler is None:
            await server.loaded.wait()
            handler = server.handlers[api_key]
        ctx = RequestContext(server, conn.connection_id, conn.client_host, request.client_id,
                             request.api_version, request.correlation_id)
        body = await handler(ctx, request)
        await conn.send_all(bytearray(encode_response(api_key, request.api_version,
                                                      request.correlation_id, body)))
        if conn.close_after_answer:
            # (rate-limited: a flood of failed logins must not flood the log)
            BAD_INPUT.warn("closing %s: SASL authentication failed", peer)
            await trio.sleep(FAILED_AUTHENTICATION_DELAY_S)
            return False
    log.debug("%s authenticated as %s", peer, conn.principal)
    return True
