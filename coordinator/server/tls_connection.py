"""A connection of an SSL or SASL_SSL listener: the same requests and answers as a plain
one (``connection.py``), through Trio's ``SSLStream`` over the standard ``ssl`` module.

The TLS handshake must complete within ``TLS_HANDSHAKE_DEADLINE_S`` of the accept, like a
request frame (a client that connects and sends nothing, or one byte a second, is closed).
A client certificate, when the listener asks for one (``ssl.client.auth``), makes the
connection's principal ``User:`` + its subject's distinguished name (Kafka's default
``ssl.principal.mapping.rules``); a SASL_SSL connection's principal is then its SASL user,
as in Kafka. A TLS connection never parks in the ready reactor (which reads the socket
itself): it waits in its own task. A write's ``socket.send.timeout.ms`` applies to each
64 KiB piece of it: the peer must take that much within the timeout.
"""

from __future__ import annotations

import errno
import logging
import socket
import ssl
from typing import Any

import trio

from coordinator.server.bad_input import BAD_INPUT
from coordinator.server.connection_socket import AnswerUnread, Connection
from coordinator.server.receive_buffer import RECEIVE_BYTES
from coordinator.server.receiving import FRAME_DEADLINE_S

__all__ = ["TLS_HANDSHAKE_DEADLINE_S", "TlsConnection", "TlsHandshakeFailed"]

log = logging.getLogger(__name__)

#: How long the TLS handshake may take from the accept: as long as a request's frame.
TLS_HANDSHAKE_DEADLINE_S = FRAME_DEADLINE_S
_SEND_PIECE = 64 * 1024


class TlsHandshakeFailed(Exception):
    """The client did not complete the TLS handshake (in time, or at all)."""


class TlsConnection(Connection):
    """A ``Connection`` whose bytes go through TLS."""

    __slots__ = ("stream",)
    parks_in_reactor = False

    def __init__(self, sock: socket.socket, connection_id: int, peer_host: str,
                 context: ssl.SSLContext, *args: Any) -> None:
        super().__init__(sock, connection_id, peer_host, *args)
        self.stream = trio.SSLStream(trio.SocketStream(trio.socket.from_stdlib_socket(sock)),
                                     context, server_side=True)

    async def handshake(self) -> bool:
        """Complete the TLS handshake and take the client certificate's principal, if it
        sent one; False (logged, rate-limited) when the handshake fails or is too slow."""
        try:
            await self._handshake()
        except TlsHandshakeFailed as exc:
            BAD_INPUT.warn("closing connection %d from %s: %s", self.connection_id,
                           self.peer_host, exc)
            return False
        return True

    async def _handshake(self) -> None:
        with trio.move_on_after(TLS_HANDSHAKE_DEADLINE_S) as deadline:
            try:
                await self.stream.do_handshake()
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                cause = exc.__cause__
                reason = getattr(cause, "reason", None) or cause or "the client left"
                raise TlsHandshakeFailed(f"TLS handshake failed: {reason}") from None
        if deadline.cancelled_caught:
            raise TlsHandshakeFailed(
                f"TLS handshake not done within {TLS_HANDSHAKE_DEADLINE_S:g} s")
        self.last_active = trio.current_time()
        certificate = self.stream.getpeercert(binary_form=True)
        if certificate:
            from coordinator.security.principal import principal_from_certificate

            try:
                self.principal = principal_from_certificate(certificate)
            except ValueError as exc:  # (the ssl module accepted it: not expected)
                raise TlsHandshakeFailed(f"unreadable client certificate: {exc}") from None
        log.debug("connection %d from %s: %s, client %s", self.connection_id, self.peer_host,
                  self.stream.version(), self.principal)

    async def receive(self, limit: int = RECEIVE_BYTES) -> bytes:
        """The next decrypted bytes, at most ``limit`` (b"" at end of stream, or when the
        peer breaks the TLS session)."""
        try:
            data = await self.stream.receive_some(limit)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return b""
        self.last_active = self.last_yield = trio.current_time()
        self.tally.bytes_in += len(data)
        return bytes(data)

    async def send_all(self, data: bytearray) -> None:
        """Write all of ``data`` encrypted, counted in the answer memory meanwhile;
        ``AnswerUnread`` when the peer takes no piece of it within the send timeout."""
        size = len(data)
        answers = self.answers
        answers.take(size)
        try:
            with memoryview(data) as view:
                for start in range(0, size, _SEND_PIECE):
                    with trio.move_on_after(self.send_timeout) as waited:
                        self.send_scope = waited
                        try:
                            await self.stream.send_all(view[start:start + _SEND_PIECE])
                        finally:
                            self.send_scope = None
                    if waited.cancelled_caught:
                        raise AnswerUnread(errno.ETIMEDOUT, "answer unread")
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            raise ConnectionResetError(f"TLS connection broken: {exc.__cause__ or exc}") from None
        finally:
            answers.give_back(size)
        self.last_active = trio.current_time()
