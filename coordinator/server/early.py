"""The listener's first moments: bound and answering ApiVersions before trio is imported.

trio's import alone takes 110-150 ms and construct's 20-50 ms, against the issue's budget
of 150 ms from process start to the first answered ApiVersions. So ``kcoord serve`` binds
its listener with the standard library (as ``trio.open_tcp_listeners`` would: every
address of the host, SO_REUSEADDR, IPv6-only v6 sockets, the same backlog), reports it,
and answers ApiVersions from a thread (``EarlyResponder``) while the main thread imports
trio and the server. ``serve`` then takes the listening sockets over and calls
``EarlyResponder.stop``, which hands every connection the thread accepted to the server
with the bytes it has read but not answered and any answer not yet sent: a client sees
one connection, answered in order.

The thread answers only the well-formed case (``wire.early_api_versions``) and with the
same table as the server (``server/apis/api_versions.advertised_api_versions`` of the served
keys). At the first request it cannot answer -- another API, a bad frame, ApiVersions of
an unsupported version or with an invalid client software name -- it stops reading that
connection and leaves it to the server. It holds at most ``MAX_CONNECTIONS`` connections
(the rest wait in the kernel's backlog) and ``MAX_BUFFERED`` unanswered bytes of each.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import selectors
import socket
import sys
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from coordinator.server.lazy import import_leaf
from wire.early_api_versions import decode_api_versions_request, encode_api_versions_response

__all__ = ["EarlyConnection", "EarlyResponder", "EarlyStart", "bind_listeners", "probe_lock",
           "start_early"]

log = logging.getLogger(__name__)

#: Connections the thread accepts; later ones wait in the backlog for the server.
MAX_CONNECTIONS = 64
#: Unanswered bytes the thread reads from one connection before leaving it to the server.
MAX_BUFFERED = 64 * 1024
#: ``trio.open_tcp_listeners``' default backlog.
BACKLOG = 0xFFFF
_RECEIVE_BYTES = 64 * 1024
_STOP_TIMEOUT_S = 5.0


@dataclass
class EarlyConnection:
    """A connection accepted before the server was up: what it sent that was not answered
    (``unread``) and the answers the socket had no room for yet (``unsent``)."""

    sock: socket.socket
    unread: bytearray = field(default_factory=bytearray)
    unsent: bytearray = field(default_factory=bytearray)
    reading: bool = True


def probe_lock(data_dir: str) -> None:
    """Fail before reporting the address when another kcoord holds the data directory.

    The authoritative lock is taken by ``storage.log.Log.open`` later; this probe takes and
    drops the same ``flock`` (``storage.log.LOCK_NAME``) so that the common mistake is
    reported before clients are told to connect.
    """
    path = os.path.join(data_dir, ".lock")
    try:
        fd = os.open(path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return  # no lock file yet: nobody holds it
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        # Imported here: storage costs about 1 ms of the time to the first ApiVersions.
        from storage.errors import LogLockedError

        raise LogLockedError(
            f"data directory {data_dir} is in use by another kcoord (lock {path}); "
            "stop it or choose another --data-dir"
        ) from None
    finally:
        os.close(fd)  # closing the descriptor releases the probe's lock


def bind_listeners(port: int, host: str | None) -> list[socket.socket]:
    """Listening sockets for every address of ``host`` (None: every interface), bound as
    ``trio.open_tcp_listeners`` binds them; OSError if one cannot be bound."""
    addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in addresses:
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            if sys.platform != "win32":
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(BACKLOG)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def api_versions_answer(served_api_keys: Collection[int],
                        transaction_version: int) -> Callable[[bytes], bytes | None]:
    """The answer to a request payload when it is an ApiVersions request the thread can
    answer exactly as the server would (the same keys and feature fields), else None."""
    api_versions: Any = import_leaf("coordinator.server.apis.api_versions")
    keys = api_versions.advertised_api_versions(served_api_keys)

    def answer(payload: bytes) -> bytes | None:
        request = decode_api_versions_request(payload)
        if request is None or not api_versions.client_software_valid(
            request.api_version, request.client_software_name, request.client_software_version
        ):
            return None
        features = api_versions.feature_fields(transaction_version, request.api_version)
        return encode_api_versions_response(request.api_version, request.correlation_id, 0,
                                            keys, features)

    return answer


class EarlyResponder:
    """A thread accepting on ``listeners`` and answering with ``answer`` until ``stop``."""

    def __init__(self, listeners: list[socket.socket],
                 answer: Callable[[bytes], bytes | None]) -> None:
        self.listeners = listeners
        self.answer = answer
        self.connections: dict[int, EarlyConnection] = {}
        self._selector = selectors.DefaultSelector()
        self._wake_read, self._wake_write = socket.socketpair()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="kcoord-early-listener",
                                        daemon=True)

    def start(self) -> None:
        """Start answering."""
        for sock in self.listeners:
            sock.setblocking(False)
            self._selector.register(sock, selectors.EVENT_READ)
        self._selector.register(self._wake_read, selectors.EVENT_READ)
        self._thread.start()

    def stop(self) -> list[EarlyConnection]:
        """Stop the thread; the connections it holds (the caller serves or closes them)."""
        self._stopping = True
        with contextlib.suppress(OSError):
            self._wake_write.send(b"\x00")
        if self._thread.is_alive():
            self._thread.join(_STOP_TIMEOUT_S)
        self._selector.close()
        self._wake_read.close()
        self._wake_write.close()
        handed = list(self.connections.values())
        self.connections.clear()
        return handed

    def _run(self) -> None:
        try:
            while not self._stopping:
                for key, _ in self._selector.select():
                    sock = key.fileobj
                    assert isinstance(sock, socket.socket)
                    if sock is self._wake_read:
                        return
                    if sock in self.listeners:
                        self._accept(sock)
                    else:
                        self._receive(self.connections[sock.fileno()])
        except Exception:  # the server takes over whatever is left when it is up
            log.exception("the early listener failed; connections wait for the server")

    def _accept(self, listener: socket.socket) -> None:
        try:
            sock, _ = listener.accept()
        except OSError:
            return  # gone before accepted, or out of descriptors: the server retries
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.connections[sock.fileno()] = EarlyConnection(sock)
        self._selector.register(sock, selectors.EVENT_READ)
        if len(self.connections) >= MAX_CONNECTIONS:
            for each in self.listeners:
                self._selector.unregister(each)

    def _receive(self, conn: EarlyConnection) -> None:
        try:
            data = conn.sock.recv(_RECEIVE_BYTES)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:  # the peer left: nothing to hand over
            self._selector.unregister(conn.sock)
            del self.connections[conn.sock.fileno()]
            conn.sock.close()
            return
        conn.unread += data
        try:
            self._answer_frames(conn)
        except OSError:
            conn.reading = False
        if not conn.reading:
            self._selector.unregister(conn.sock)

    def _answer_frames(self, conn: EarlyConnection) -> None:
        buffer = conn.unread
        while len(buffer) >= 4:
            size = int.from_bytes(buffer[:4], "big", signed=True)
            if not 0 <= size <= MAX_BUFFERED - 4:
                conn.reading = False  # not an ApiVersions request: the server judges it
                return
            if len(buffer) < 4 + size:
                return
            reply = self.answer(bytes(buffer[4 : 4 + size]))
            if reply is None:
                conn.reading = False
                return
            del buffer[: 4 + size]
            if not conn.unsent:
                with contextlib.suppress(BlockingIOError):
                    reply = reply[conn.sock.send(reply):]
            conn.unsent += reply
            if conn.unsent:  # the client is not reading: the server sends the rest
                conn.reading = False
                return


@dataclass
class EarlyStart:
    """The listening sockets and their early responder, for ``serve`` to take over."""

    sockets: list[socket.socket]
    responder: EarlyResponder

    @property
    def port(self) -> int:
        """The bound port (the first address's)."""
        return int(self.sockets[0].getsockname()[1])

    def close(self) -> None:
        """Stop answering and close everything not taken over (idempotent)."""
        for conn in self.responder.stop():
            conn.sock.close()
        for sock in self.sockets:
            sock.close()


def start_early(options: Any, served_api_keys: Collection[int]) -> EarlyStart:
    """Check the data directory's lock, bind, and start answering ApiVersions.
    ``options`` is the ``ServeOptions``."""
    if options.sink is None and options.data_dir is not None:
        probe_lock(options.data_dir)
    sockets = bind_listeners(options.port, options.host or None)
    try:
        broker_config: Any = import_leaf("coordinator.broker.config")
        level = broker_config.transaction_version(options.broker_config)
        responder = EarlyResponder(sockets, api_versions_answer(served_api_keys, level))
        responder.start()
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return EarlyStart(sockets, responder)
