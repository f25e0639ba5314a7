"""The brokers of one process (``kcoord serve --brokers N``): a listener, connections and
an identity each, sharing the coordinator runtime, the topic store and the clock.

Each broker is a ``Server`` of its own (so connections, ``max.connections`` and the idle
sweep are per broker, and handlers see which node they run on); the shared parts are the
primary's. ``Cluster`` decides leadership and coordinator placement; this module does what
follows from it: stopping a broker resets its connections and closes its listener, and the
groups whose ``__consumer_offsets`` partition moved are unloaded and loaded again
(``CoordinatorRuntime.reload_groups``), as they are when a Kafka coordinator moves.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import struct
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

import trio

from coordinator.server.apis import RouteTable
from coordinator.server.cluster import Cluster
from coordinator.server.context import ApiTraits, BrokerIdentity, Handler
from coordinator.server.listeners import ServedListener
from coordinator.server.listening import BoundListener, rebind
from coordinator.server.loading import CoordinatorApis
from coordinator.server.routing import routed_handlers
from coordinator.txn.placement import OFFSETS_TOPIC
from storage.fs import OsFileSystem, write_atomically

if TYPE_CHECKING:
    from coordinator.broker.topics import TopicStore
    from coordinator.server.connection_socket import Connection
    from coordinator.server.runtime import CoordinatorRuntime
    from coordinator.server.share_runtime import ShareRuntime
    from coordinator.server.txn_runtime import TransactionRuntime

__all__ = ["BrokerSet"]

log = logging.getLogger(__name__)

_RESET = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close sends RST
STATE_FILE = "cluster.json"


class Server(Protocol):
    """What this module uses of ``coordinator.server.app.Server`` (one per broker)."""

    identity: BrokerIdentity
    cluster: Cluster | None
    topics: TopicStore | None
    groups: CoordinatorRuntime | None
    transactions: TransactionRuntime | None
    shares: ShareRuntime | None
    handlers: dict[int, Handler]
    traits: ApiTraits
    connections: dict[int, Connection]
    coordinator_apis: CoordinatorApis

    async def handle_stream(self, stream: trio.SocketStream,
                            served: ServedListener = ...) -> None: ...

    def add_handlers(self, handlers: dict[int, Handler], traits: ApiTraits) -> None: ...


class BrokerSet:
    """Every broker of the process, by node id (``servers[0]`` is the bootstrap)."""

    def __init__(self, primary: Server, cluster: Cluster, bind_host: str | None,
                 data_dir: str | None = None) -> None:
        self.cluster = cluster
        cluster.changed = self._save
        self._saving = trio.Lock()
        self._fs = OsFileSystem()
        self.bind_host = bind_host
        #: ``DATA_DIR/cluster.json``: leadership that moved survives a restart.
        self.state_path = None if data_dir is None else os.path.join(data_dir, STATE_FILE)
        self._restore()
        self.servers: dict[int, Server] = {0: primary}
        self.ports: dict[int, int] = {}
        self._listeners: dict[int, list[BoundListener]] = {}
        self._scopes: dict[int, trio.CancelScope] = {}
        #: Each broker's listeners' ports, in order (a stopped broker binds them again).
        self._listener_ports: dict[int, list[int]] = {}
        self._stopped: dict[int, list[BoundListener]] = {}
        self._nursery: trio.Nursery | None = None
        primary.cluster = cluster

    def add(self, node_id: int, server: Server, listeners: list[BoundListener]) -> None:
        """Register broker ``node_id`` with its bound listeners."""
        server.cluster = self.cluster
        self.servers[node_id] = server
        self._listeners[node_id] = listeners
        self.ports[node_id] = listeners[0].port
        self._listener_ports[node_id] = [each.port for each in listeners]
        self.cluster.identities[node_id] = server.identity

    def bound(self, node_id: int) -> list[BoundListener]:
        """Broker ``node_id``'s listeners (none while it is stopped)."""
        return self._listeners.get(node_id, [])

    def loaded(self, routes: RouteTable) -> None:
        """Every broker gets the loaded handlers (routed by coordinator) and the shared
        runtime, topic store and transaction runtime of the primary."""
        primary = self.servers[0]
        routed = routed_handlers(routes.handlers, routes)
        traits = routes.traits
        for server in self.servers.values():
            server.topics = primary.topics
            server.groups = primary.groups
            server.transactions = primary.transactions
            server.shares = primary.shares
            server.add_handlers(routed, traits)

    async def run(self, nursery: trio.Nursery) -> None:
        """Serve every broker's listener in ``nursery`` (each under its own cancel scope)."""
        self._nursery = nursery
        for node_id in sorted(self.servers):
            await nursery.start(self._serve, node_id)

    async def _serve(self, node_id: int, *,
                     task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        server = self.servers[node_id]
        with trio.CancelScope() as scope:
            self._scopes[node_id] = scope
            async with trio.open_nursery() as nursery:
                for each in self._listeners[node_id]:
                    await nursery.start(trio.serve_listeners,
                                        partial(server.handle_stream, served=each.served),
                                        each.sockets)
                task_status.started()

    # ------------------------------------------------------------------ persistence

    def _restore(self) -> None:
        if self.state_path is None or not os.path.exists(self.state_path):
            return
        try:
            with open(self.state_path, encoding="utf-8") as f:
                state = json.load(f)
        except (OSError, ValueError) as exc:
            log.warning("%s unreadable (%s): leadership starts from the preferred replicas",
                        self.state_path, exc)
            return
        if not self.cluster.restore(state):
            log.warning("%s is for another broker count: leadership starts from the "
                        "preferred replicas", self.state_path)

    async def _save(self) -> None:
        """Write the cluster state atomically (a few hundred bytes, on each control) in a
        worker thread: its fsyncs on the event loop held every broker of the process for as
        long as the disk took (a CI run saw both consumers' Heartbeats time out in flight
        after a coordinator move). Saves run one at a time, each writing the state as it is
        when its turn comes, so the file ends with the newest. A failed write is reported,
        not raised: the control has taken effect, and only the next restart's leader epochs
        depend on the file."""
        if self.state_path is None:
            return
        async with self._saving:
            data = json.dumps(self.cluster.state()).encode()
            path = self.state_path
            try:
                await trio.to_thread.run_sync(write_atomically, self._fs, os.path.dirname(path),
                                              path, path + ".tmp", data)
            except OSError as exc:
                log.warning("cannot write %s (%s): after a restart leadership starts from the "
                            "preferred replicas", path, exc.strerror or exc)

    # ------------------------------------------------------------------ controls

    def _partitions(self) -> list[tuple[str, int, int]]:
        """Every topic partition with its topic's replication factor."""
        store = self.servers[0].topics
        if store is None:
            return []
        out: list[tuple[str, int, int]] = []
        for name in store.names():
            topic = store.get(name)
            if topic is not None:
                out.extend((name, p.index, topic.replication_factor) for p in topic.partitions)
        return out

    async def stop(self, node_id: int) -> dict[str, Any]:
        """Stop broker ``node_id`` (ClusterError when it cannot be stopped)."""
        moved = self.cluster.stop(node_id, self._partitions(), trio.current_time())
        server = self.servers[node_id]
        reset = len(server.connections)
        for conn in list(server.connections.values()):
            with contextlib.suppress(OSError):
                conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET)
        self._scopes.pop(node_id).cancel()
        self._stopped[node_id] = self._listeners.pop(node_id)
        await _close(self._stopped[node_id])
        reloaded = self._reload(moved)
        await self._save()
        log.warning("broker %d stopped: %d connections reset, %d coordinator partitions "
                    "moved, %d groups reloaded", node_id, reset,
                    len(moved), len(reloaded))
        return {"node_id": node_id, "moved_offsets_partitions": moved, "groups": reloaded}

    async def start(self, node_id: int) -> dict[str, Any]:
        """Start broker ``node_id`` again on its port."""
        self.cluster.check_stopped(node_id)  # before binding its port again
        assert self._nursery is not None
        listeners = await rebind(self._stopped[node_id], self._listener_ports[node_id])
        del self._stopped[node_id]
        self.cluster.start(node_id, self._partitions())
        self._listeners[node_id] = listeners
        await self._nursery.start(self._serve, node_id)
        await self._save()
        log.warning("broker %d started on port %d", node_id, self.ports[node_id])
        return {"node_id": node_id, "port": self.ports[node_id]}

    async def move_coordinator(self, group_id: str, node_id: int) -> dict[str, Any]:
        """Move ``group_id``'s ``__consumer_offsets`` partition (and every group on it)."""
        partition = self.cluster.move_group(group_id, node_id, trio.current_time())
        moved = [] if partition is None else [partition]
        reloaded = self._reload(moved)  # (in the same step as the move: no request between)
        await self._save()
        return {"group_id": group_id, "node_id": node_id, "groups": reloaded}

    async def elect_preferred_leaders(self) -> dict[str, Any]:
        """Give partitions back to their preferred replicas."""
        changed = self.cluster.elect_preferred_leaders(self._partitions())
        await self._save()
        return {"changed": changed}

    async def close(self) -> None:
        """Close every listener still open (shutdown)."""
        for listeners in self._listeners.values():
            await _close(listeners)
        self._listeners.clear()

    def _reload(self, offsets_partitions: list[int]) -> list[str]:
        runtime = self.servers[0].groups
        if not offsets_partitions or runtime is None:
            return []
        wanted = set(offsets_partitions)
        group_ids = [
            g for g in runtime.coordinator.group_ids()
            if self.cluster.coordinator_partition(OFFSETS_TOPIC, g) in wanted
        ]
        runtime.reload_groups(group_ids)
        return sorted(group_ids)


def broker_identity(primary: BrokerIdentity, node_id: int, port: int,
                    endpoints: tuple[tuple[str, str, int], ...] = ()) -> BrokerIdentity:
    """Broker ``node_id``'s identity: the primary's host and cluster id, its own port (and
    its listeners' advertised endpoints)."""
    if endpoints:
        return BrokerIdentity(node_id=node_id, host=endpoints[0][1], port=endpoints[0][2],
                              cluster_id=primary.cluster_id, endpoints=endpoints)
    return BrokerIdentity(node_id=node_id, host=primary.host, port=port,
                          cluster_id=primary.cluster_id)


async def _close(listeners: list[BoundListener]) -> None:
    for each in listeners:
        for sock in each.sockets:
            await trio.aclose_forcefully(sock)
