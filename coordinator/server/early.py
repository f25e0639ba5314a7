"""The listener bound before trio is imported.

``kcoord serve`` binds its listening sockets with the standard library (as
``trio.open_tcp_listeners`` would: every address of the host, SO_REUSEADDR, IPv6-only v6
sockets, the same backlog) and prints its "listening" line before importing trio and the
server, about 100 ms on an idle machine; ``serve`` then takes the sockets over
(``options.early``). Meanwhile the kernel's backlog accepts connections and holds what
clients send: a client that connects at the "listening" line is answered, in order, once
the server is up, instead of being refused and backing off (librdkafka waits
``reconnect.backoff.ms``, 100 ms, doubling, before it tries again).

Until issue 33 a thread also answered ApiVersions from here before trio was imported. It
made ApiVersions about 100 ms sooner but not the first Metadata, which is what a client
waits for before doing anything (instructions until the first Metadata, callgrind: 895 M
with the thread, 904 M without; ``tests/benchmarks/bench_startup.py``), so it went, with
its hand-over of half-read connections and its second ApiVersions encoder.
"""

from __future__ import annotations

import fcntl
import os
import socket
import sys

__all__ = ["BACKLOG", "bind_listeners", "probe_lock"]

#: ``trio.open_tcp_listeners``' default backlog.
BACKLOG = 0xFFFF


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
        # Imported here: storage costs about 1 ms of the time to the listening line.
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
