"""A SASL listener's connection before it has authenticated, as Kafka's
SaslServerAuthenticator: before the handshake, one ApiVersions and the SaslHandshake are
answered (by their route modules, one at a time) and anything else closes the connection
unanswered; once the handshake has chosen the mechanism, only SaslAuthenticate is, anything
else being answered ILLEGAL_SASL_STATE before the connection closes; and an answer its
route marks ``close_after_answer`` (a failed login, an unsupported mechanism) closes it
too. The same holds while re-authenticating, which starts at the handshake. Once
authenticated the connection goes on to the ordinary loop (``connection.py``) with whatever
it had buffered: a PLAINTEXT listener never comes here, so its requests pay nothing for
SASL.

Re-authentication (KIP-368), as Kafka's ``SocketServer``/``KafkaChannel``: when
``connections.max.reauth.ms`` is positive, or the credential expires (an OAUTHBEARER
token), the authenticated connection keeps a ``SaslSession`` with its expiry. A SaslHandshake
on it then starts a re-authentication -- the gate again, principal and mechanism unchanged
-- unless the last one started less than a second ago (Kafka's
``MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS``: the handshake is then answered as on any
authenticated connection, ILLEGAL_SASL_STATE). Any other request reaching a session past
its expiry closes the connection; a connection that sends nothing stays until
``connections.max.idle.ms``. Without an expiry a SaslHandshake is ILLEGAL_SASL_STATE, as in
Kafka. Such a connection does not park in the ready reactor, so every request passes the
expiry check (``connection.py``).

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
    ErrorCode,
    FrameReader,
    FrameTooLarge,
    UnsupportedVersion,
    encode_unsupported_api_versions,
)
from wire.error_response import error_response
from wire.fast_codec import decode_request, encode_response

if TYPE_CHECKING:
    import socket

    from coordinator.server.receiving import Receiving
    from wire import DecodedRequest

__all__ = [
    "EXPIRED",
    "MIN_REAUTH_INTERVAL_S",
    "REAUTHENTICATE",
    "SaslSession",
    "authenticate",
    "session_verdict",
    "start_session",
]

log = logging.getLogger(__name__)

#: Kafka's ``connection.failed.authentication.delay.ms`` default: a connection whose login
#: failed is closed this long after its answer is written (Kafka's SocketServer delays the
#: close so a client reads the answer, and a brute-force client is slowed down).
FAILED_AUTHENTICATION_DELAY_S = 0.1

#: Kafka's KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS: a re-authentication may start
#: at most once a second.
MIN_REAUTH_INTERVAL_S = 1.0

#: ``session_verdict``: the request starts a re-authentication / the session has expired.
REAUTHENTICATE = 1
EXPIRED = 2


class SaslSession:
    """An authenticated connection's session that expires (KIP-368): its authenticator,
    kept for re-authentication, and times on the Trio clock."""

    __slots__ = ("authenticator", "expires_at", "reauth_started_at", "reauthentications")

    def __init__(self, authenticator: Any, expires_at: float) -> None:
        self.authenticator = authenticator
        self.expires_at = expires_at
        #: When the last re-authentication started (None: none yet).
        self.reauth_started_at: float | None = None
        #: Completed re-authentications.
        self.reauthentications = 0

    def shift(self, seconds: float) -> None:
        """The Trio clock jumped without real time passing (``Connection.shift``)."""
        self.expires_at += seconds
        if self.reauth_started_at is not None:
            self.reauth_started_at += seconds


class Connection(Protocol):
    """What the gate uses of ``connection_socket.Connection``."""

    sock: socket.socket
    connection_id: int
    peer_host: str
    client_host: str
    principal: str
    sasl: Any
    session: SaslSession | None
    close_after_answer: bool
    last_active: float

    async def receive(self, limit: int = ...) -> bytes: ...

    async def send_all(self, data: bytearray) -> None: ...


def start_session(conn: Connection, lifetime_ms: int) -> None:
    """A (re-)authentication of ``conn`` completed with a session of ``lifetime_ms``: keep
    its authenticator for re-authentication and note when the session ends."""
    expires_at = trio.current_time() + lifetime_ms / 1000
    if conn.session is None:
        conn.session = SaslSession(conn.sasl, expires_at)
    else:
        conn.session.expires_at = expires_at
        conn.session.reauthentications += 1


def session_verdict(session: SaslSession, api_key: int) -> int | None:
    """What a request of ``api_key`` on a connection with ``session`` leads to, as Kafka's
    ``SocketServer.processCompletedReceives``: REAUTHENTICATE (a SaslHandshake at least a
    second after the last re-authentication started), EXPIRED (the connection closes) or
    None (served as usual)."""
    now = trio.current_time()
    if api_key == ApiKey.SASL_HANDSHAKE and (
        session.reauth_started_at is None
        or now - session.reauth_started_at >= MIN_REAUTH_INTERVAL_S
    ):
        session.reauth_started_at = now
        return REAUTHENTICATE
    if now > session.expires_at:
        return EXPIRED
    return None


async def authenticate(
    server: ServerState, conn: Connection, reader: FrameReader, receiving: Receiving,
    first: DecodedRequest | None = None,
) -> bool:
    """Serve ``conn``, whose ``sasl`` is its listener's authenticator, until it
    authenticates (True) or must be closed (False). ``first``: the SaslHandshake that
    starts a re-authentication, already read."""
    peer = f"connection {conn.connection_id} from {conn.peer_host}"
    # (a re-authentication starts at its handshake: no ApiVersions before it, as in Kafka)
    exchange = _Exchange(versions_answered=first is not None)
    while conn.sasl is not None:
        if first is not None:
            request, first = first, None
            if not await _answer(server, conn, request, peer, exchange):
                return False
            continue
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
        if not await _answer(server, conn, request, peer, exchange):
            return False
    if conn.session is not None and conn.session.reauth_started_at is not None:
        log.debug("%s re-authenticated as %s", peer, conn.principal)
    else:
        log.debug("%s authenticated as %s", peer, conn.principal)
    return True


class _Exchange:
    """Where one connection's (re-)authentication is, beyond its authenticator's state."""

    __slots__ = ("versions_answered",)

    def __init__(self, versions_answered: bool) -> None:
        self.versions_answered = versions_answered


async def _answer(server: ServerState, conn: Connection, request: DecodedRequest,
                  peer: str, exchange: _Exchange) -> bool:
    """Answer one request of the exchange; False when the connection must close. What may
    come is Kafka's SaslServerAuthenticator's: before the handshake, one ApiVersions and
    the SaslHandshake (anything else closes the connection unanswered); after it, only
    SaslAuthenticate (anything else is answered ILLEGAL_SASL_STATE, then the connection
    closes)."""
    api_key = request.api_key
    if conn.sasl.exchanging:
        if api_key != ApiKey.SASL_AUTHENTICATE:
            BAD_INPUT.warn("closing %s: unexpected Kafka request of type %s during SASL "
                           "authentication", peer, request.spec.name)
            await conn.send_all(bytearray(encode_response(
                api_key, request.api_version, request.correlation_id,
                error_response(request, ErrorCode.ILLEGAL_SASL_STATE))))
            return False
    elif api_key == ApiKey.API_VERSIONS and not exchange.versions_answered:
        exchange.versions_answered = True
    elif api_key != ApiKey.SASL_HANDSHAKE:
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
    return True
