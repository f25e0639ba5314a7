"""The socket side of one client connection: its identity, activity stamps, and the raw
non-blocking reads and writes ``connection.py`` serves requests with.

Reads go straight to the non-blocking socket and wait with ``trio.lowlevel.wait_readable``
/ ``wait_writable`` only when the kernel has nothing (or no room); a connection that has
kept the loop for ``FAIR_SLICE_S`` yields before going on (``receive_buffer.py``). A write counts
in the server's answer memory while it is under way, and one the peer does not read for
``socket.send.timeout.ms`` raises ``AnswerUnread`` (``answer_memory.py``).

Those deadlines and the idle sweep's stamps are on the Trio clock, which the test double's
``advance()`` jumps to move coordinator time; ``shift`` moves them along with a jump, so a
connection only ever sees real time pass (``Server.clock_jumped``).
"""

from __future__ import annotations

import errno
import socket
from typing import Any

import trio

from coordinator.server.answer_memory import DEFAULT_SEND_TIMEOUT_MS, AnswerMemory
from coordinator.server.receive_buffer import FAIR_SLICE_S, RECEIVE_BYTES, receive_view
from coordinator.server.tally import ConnectionTally

__all__ = ["ANONYMOUS", "AnswerUnread", "Connection"]

#: The principal of a connection that has not authenticated (Kafka's KafkaPrincipal.ANONYMOUS).
ANONYMOUS = "User:ANONYMOUS"


class Connection:
    """One accepted connection: its socket, identity and activity (for the idle sweep)."""

    __slots__ = (
        "answers",
        "busy",
        "client_host",
        "close_after_answer",
        "connection_id",
        "expired",
        "last_active",
        "last_yield",
        "listener",
        "peer_host",
        "principal",
        "receiving",
        "sasl",
        "scope",
        "send_scope",
        "send_timeout",
        "session",
        "sock",
        "tally",
    )

    def __init__(self, sock: socket.socket, connection_id: int, peer_host: str,
                 answers: AnswerMemory | None = None,
                 send_timeout: float = DEFAULT_SEND_TIMEOUT_MS / 1000,
                 tally: ConnectionTally | None = None) -> None:
        self.sock = sock
        #: The server's memory for answers being written (``answer_memory.py``).
        self.answers = answers if answers is not None else AnswerMemory(-1)
        self.send_timeout = send_timeout
        self.connection_id = connection_id
        self.peer_host = peer_host
        # The client's address as Kafka reports it (InetAddress.toString): "/127.0.0.1".
        self.client_host = "/" + peer_host
        self.last_active = trio.current_time()
        self.last_yield = self.last_active
        self.busy = False
        self.expired = False
        self.scope = trio.CancelScope()
        #: What the peer sent (``tally.py``).
        self.tally = tally or ConnectionTally(connection_id, self.last_active)
        #: Who the client is, for ACL checks: ``User:`` + its SASL authorization id once
        #: authenticated on a SASL listener; ``User:ANONYMOUS`` on PLAINTEXT.
        self.principal = ANONYMOUS
        #: A SASL listener's authenticator until the client has authenticated
        #: (``sasl_gate.py``); None after, and always on PLAINTEXT.
        self.sasl: Any = None
        #: An authenticated session that expires (``sasl_gate.SaslSession``, KIP-368).
        self.session: Any = None
        #: Set by a route whose answer ends the connection (a failed SASL login).
        self.close_after_answer = False
        #: The request being received (``receiving.Receiving``), set by ``connection.py``.
        self.receiving: Any = None
        #: The wait for room to write an answer, while one is under way.
        self.send_scope: trio.CancelScope | None = None
        #: The name of the listener it arrived on (None: the unnamed PLAINTEXT listener).
        self.listener: str | None = None

    #: Whether it may wait between requests in the ready reactor, which reads the socket
    #: itself (a TLS connection may not: ``tls_connection.py``).
    parks_in_reactor = True

    async def handshake(self) -> bool:
        """Whether the connection may be served (a TLS one completes its handshake first)."""
        return True

    def shift(self, seconds: float) -> None:
        """The Trio clock jumped ``seconds`` ahead without real time passing (the test
        double's ``advance``): move this connection's stamps and deadlines with it."""
        self.last_active += seconds
        self.last_yield += seconds
        if self.send_scope is not None:
            self.send_scope.deadline += seconds
        if self.receiving is not None:
            self.receiving.shift(seconds)
        if self.session is not None:
            self.session.shift(seconds)

    def expire(self) -> None:
        """Close this connection: idle for longer than connections.max.idle.ms."""
        self.expired = True
        self.scope.cancel()

    async def receive(self, limit: int = RECEIVE_BYTES) -> bytes:
        """The next bytes from the peer, at most ``limit`` (b"" at end of stream)."""
        sock = self.sock
        await self.maybe_yield()
        view = receive_view()
        if limit < len(view):
            view = view[:limit]
        while True:
            try:
                size = sock.recv_into(view)
            except BlockingIOError:
                await trio.lowlevel.wait_readable(sock)
                self.last_yield = trio.current_time()
                continue
            self.last_active = trio.current_time()
            self.tally.bytes_in += size
            return view[:size].tobytes()

    async def maybe_yield(self) -> None:
        """Let other tasks run if this connection has had the loop for a whole slice."""
        now = trio.current_time()
        if now - self.last_yield >= FAIR_SLICE_S:
            await trio.lowlevel.checkpoint()
            self.last_yield = trio.current_time()

    async def send_all(self, data: bytearray) -> None:
        """Write all of ``data``, waiting for room when the socket buffer is full; counted in
        the server's answer memory meanwhile. ``AnswerUnread`` when the peer takes none of
        it for ``send_timeout`` seconds (``answer_memory.py``)."""
        sock = self.sock
        size = len(data)
        answers = self.answers
        answers.take(size)
        try:
            with memoryview(data) as view:
                sent = 0
                while sent < size:
                    try:
                        sent += sock.send(view[sent:])
                    except BlockingIOError:
                        with trio.move_on_after(self.send_timeout) as waited:
                            self.send_scope = waited
                            try:
                                await trio.lowlevel.wait_writable(sock)
                            finally:
                                self.send_scope = None
                        if waited.cancelled_caught:
                            raise AnswerUnread(errno.ETIMEDOUT, "answer unread") from None
        finally:
            answers.give_back(size)
        self.last_active = trio.current_time()


class AnswerUnread(OSError):
    """The peer took no byte of an answer for ``socket.send.timeout.ms``."""
