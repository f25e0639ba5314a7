"""A broker's listeners once bound: each ``listeners`` entry (or the one unnamed PLAINTEXT
listener of a server started without it) with its sockets, its port and the address it is
advertised with in Metadata and FindCoordinator (``advertised.listeners``, else
``--advertised-host``, else the bound host, a wildcard one as the machine's name).

With ``--brokers`` N, broker i binds every listener on its port + i (ephemeral ports stay
ephemeral), and advertises an ``advertised.listeners`` port + i.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import NamedTuple

import trio

from coordinator.server.listeners import ServedListener

__all__ = ["BoundListener", "advertised_endpoints", "advertised_host", "bind", "bind_broker",
           "rebind", "wrap_early"]

_WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::"})


class BoundListener(NamedTuple):
    served: ServedListener
    host: str
    sockets: list[trio.SocketListener]

    @property
    def port(self) -> int:
        return int(self.sockets[0].socket.getsockname()[1])

    @property
    def name(self) -> str | None:
        return self.served.name


def _served(listeners: Sequence[ServedListener]) -> Sequence[ServedListener]:
    return listeners or (ServedListener(),)


async def bind(listeners: Sequence[ServedListener], host: str,
               port: int) -> list[BoundListener]:
    """Bind every listener (``host``/``port``: the unnamed listener's)."""
    wanted = []
    for served in _served(listeners):
        listener = served.listener
        wanted.append((served, host, port) if listener is None
                      else (served, listener.host, listener.port))
    return await _bind_all(wanted)


async def _bind_all(wanted: Sequence[tuple[ServedListener, str, int]]) -> list[BoundListener]:
    bound: list[BoundListener] = []
    try:
        for served, host, port in wanted:
            sockets = await trio.open_tcp_listeners(port, host=host or None)
            bound.append(BoundListener(served, host, sockets))
    except BaseException:
        for each in bound:
            for sock in each.sockets:
                await trio.aclose_forcefully(sock)
        raise
    return bound


def wrap_early(listeners: Sequence[ServedListener], host: str,
               early: Sequence[Sequence[socket.socket]]) -> list[BoundListener]:
    """The sockets the CLI bound before importing trio (one list per listener)."""
    out = []
    for served, sockets in zip(_served(listeners), early, strict=True):
        at_host = host if served.listener is None else served.listener.host
        out.append(BoundListener(served, at_host, [
            trio.SocketListener(trio.socket.from_stdlib_socket(sock)) for sock in sockets]))
    return out


async def bind_broker(primary: Sequence[BoundListener], node_id: int,
                      first_port: int | None) -> list[BoundListener]:
    """Broker ``node_id``'s listeners beside the primary's: each on its port + ``node_id``
    (0 stays 0); ``first_port``, when given, is the first listener's."""
    ports = []
    for index, each in enumerate(primary):
        configured = each.served.listener.port if each.served.listener is not None else None
        if index == 0 and first_port is not None:
            ports.append(first_port)
        else:
            ports.append(configured + node_id if configured else 0)
    return await rebind(primary, ports)


async def rebind(listeners: Sequence[BoundListener], ports: Sequence[int]) -> list[BoundListener]:
    """``listeners`` bound again on ``ports`` (a restarted broker, or another one)."""
    return await _bind_all([(each.served, each.host, port)
                            for each, port in zip(listeners, ports, strict=True)])


def advertised_host(listener_host: str, advertised: str | None) -> str:
    """The host clients are given for a listener bound on ``listener_host``."""
    if advertised:
        return advertised
    if listener_host in _WILDCARD_HOSTS:
        return socket.gethostname()
    return listener_host


def advertised_endpoints(bound: Sequence[BoundListener], advertised: str | None,
                         node_id: int = 0) -> tuple[tuple[str, str, int], ...]:
    """Each named listener's advertised (name, host, port) for broker ``node_id``."""
    out = []
    for each in bound:
        listener = each.served.listener
        if listener is None:
            continue
        host = advertised_host(each.host, listener.advertised_host or advertised)
        port = (listener.advertised_port + node_id if listener.advertised_port
                else each.port)
        out.append((listener.name, host, port))
    return tuple(out)
