"""``serve``: the kcoord server -- listener, connections, coordinator runtime, record sink.

Startup is staged so that a client can work as soon as possible. The CLI binds before
importing trio (``early.py``, ``options.early``; connections wait in the backlog) and
``serve`` takes those sockets over; otherwise it binds itself. Either way it reports the
address (``options.on_listening``). Either way it answers ApiVersions at once from the
handler route modules' names (``apis.served_api_keys``). A worker thread then imports the
broker surface's routes (Metadata, FindCoordinator, DescribeConfigs:
``startup_stages.BROKER_SURFACE``) and loads the topic store: those are answered from then
on (issue 33's measure is exec to the first answered Metadata,
``tests/benchmarks/bench_startup.py``), and the coordinator APIs
COORDINATOR_LOAD_IN_PROGRESS (``loading.py``) until the coordinator is loaded: every
route imported (``apis.load_routes``: the coordinator, the runtime and storage's writer),
the log opened (locked, recovered) and replayed, the transaction coordinator started
(``Server.loaded``); any other request waits for its handler (``Server.wait_for_handler``).
The functions below and ``startup_stages.py`` import those modules where they use them.
``task_status.started`` reports a fully loaded server. Shutdown is cancellation: stop
accepting, cancel in-flight requests, then flush and close the log.
"""

from __future__ import annotations

import base64
import itertools
import logging
import os
import time
import uuid
from collections.abc import Collection, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any

import trio

from coordinator.server.answer_memory import AnswerLimits, AnswerMemory
from coordinator.server.apis import SERVED_API_KEYS, served_api_keys
from coordinator.server.bad_input import BAD_INPUT
from coordinator.server.connection import serve_connection
from coordinator.server.connection_socket import Connection
from coordinator.server.context import ApiTraits, BrokerIdentity, Handler
from coordinator.server.descriptors import descriptor_budget
from coordinator.server.early import probe_lock
from coordinator.server.listeners import UNNAMED, ServedListener, is_secret_key
from coordinator.server.listening import (
    BoundListener,
    advertised_endpoints,
    advertised_host,
    bind,
    bind_broker,
    wrap_early,
)
from coordinator.server.loading import CoordinatorApis
from coordinator.server.options import ServeOptions
from coordinator.server.request_memory import RequestMemory
from coordinator.server.security_setup import security_shard
from coordinator.server.startup_stages import import_deferred, load_broker_surface, open_sink
from coordinator.server.tally import Tallies
from wire.constants import ApiKey

if TYPE_CHECKING:
    from coordinator.broker.topics import TopicStore
    from coordinator.server.cluster import Cluster
    from coordinator.server.faults import FaultInjector
    from coordinator.server.runtime import CoordinatorRuntime
    from coordinator.server.share_runtime import ShareRuntime
    from coordinator.server.txn_runtime import TransactionRuntime

__all__ = ["RunningServer", "Server", "serve"]

log = logging.getLogger(__name__)


class Server:
    """The state every connection and handler shares (``context.ServerState``)."""

    def __init__(
        self,
        identity: BrokerIdentity,
        config: dict[str, str],
        handlers: Mapping[int, Handler],
        *,
        max_request_bytes: int,
        idle_ms: int,
        faults: FaultInjector | None = None,
        served_api_keys: Collection[int] = SERVED_API_KEYS,
    ) -> None:
        self.identity = identity
        #: Injected misbehaviour for tests (``coordinator.server.faults.FaultInjector``).
        self.faults = faults
        self.config = config
        self.topics: TopicStore | None = None
        self.groups: CoordinatorRuntime | None = None
        self.transactions: TransactionRuntime | None = None
        self.shares: ShareRuntime | None = None
        self.cluster: Cluster | None = None  # the brokers, when there are several
        #: Config keys the user gave (DescribeConfigs: STATIC_BROKER_CONFIG, not a default).
        self.explicit_config_keys: frozenset[str] = frozenset()
        #: What DescribeConfigs reports as listeners, advertised.listeners and log.dirs: the
        #: address the listeners are bound to, whether the advertised one was given, the
        #: data directory (None: in memory).
        self.bind_host = "0.0.0.0"
        self.advertised_given = False
        self.data_dir: str | None = None
        #: queued.max.request.bytes: the memory partially received requests share.
        self.request_memory = RequestMemory(-1)
        #: The memory and time answers being written may take (``answer_memory.py``).
        self.answer_limits = AnswerLimits(AnswerMemory(-1))
        #: Updated in place when loading completes (connections hold a reference).
        self.handlers: dict[int, Handler] = dict(handlers)
        #: What connections read off the routes (set with the handlers once loaded).
        self.traits = ApiTraits()
        #: The handler table's keys: what ApiVersions advertises, already before loading.
        self.served_api_keys = served_api_keys
        self.loaded = trio.Event()
        #: Set (and replaced) whenever handlers are added: connections waiting for one.
        self._handlers_added = trio.Event()
        #: What a connection answers a coordinator API while the coordinator loads.
        self.coordinator_apis = CoordinatorApis()
        self.max_request_bytes = max_request_bytes
        # Kafka: -1 (or 0) disables the idle check.
        self.idle_seconds = idle_ms / 1000 if idle_ms > 0 else float("inf")
        self._connection_ids = itertools.count(1)
        self.open_connections = 0
        #: ``max.connections`` (Kafka's name; unbounded by default).
        self.max_connections = 2**31 - 1
        self.refused_connections = 0
        #: What each connection's peer sent (``tally.py``).
        self.tallies = Tallies()
        #: Open connections by id (the idle sweep walks them).
        self.connections: dict[int, Connection] = {}

    def add_handlers(self, handlers: Mapping[int, Handler], traits: ApiTraits) -> None:
        """Serve ``handlers`` from now on, as ``traits`` says (a stage of loading is done)."""
        self.handlers.update(handlers)
        self.traits = traits
        self._handlers_added.set()
        self._handlers_added = trio.Event()

    async def wait_for_handler(self, api_key: int) -> Handler | None:
        """``api_key``'s handler once loaded; None when loading ended without one."""
        while (handler := self.handlers.get(api_key)) is None and not self.loaded.is_set():
            await self._handlers_added.wait()
        return handler

    @property
    def runtime(self) -> CoordinatorRuntime:
        """The coordinator runtime (once loaded; RuntimeError before)."""
        if self.groups is None:
            raise RuntimeError("the group coordinator is not loaded")
        return self.groups

    def clock_jumped(self, seconds: float) -> None:
        """The Trio clock was jumped ``seconds`` ahead (the test double's ``advance``): that
        is coordinator time; the connections' idle stamps and deadlines move with it, so no
        client is closed as idle or slow for time that did not pass."""
        for conn in self.connections.values():
            conn.shift(seconds)

    async def sweep_idle_connections(self) -> None:
        """Close connections that did nothing for ``connections.max.idle.ms`` (checked
        every tenth of it, at most every second): Kafka's idle-expiry manager."""
        idle = self.idle_seconds
        if idle == float("inf"):
            return
        interval = min(max(idle / 10, 0.001), 1.0)
        while True:
            await trio.sleep(interval)
            cutoff = trio.current_time() - idle
            for conn in list(self.connections.values()):
                if not conn.busy and conn.last_active <= cutoff:
                    conn.expire()

    async def handle_stream(self, stream: trio.SocketStream,
                            served: ServedListener = UNNAMED) -> None:
        """trio.serve_listeners' handler for the listener ``served``: one task per
        connection (closed at once beyond ``max.connections``)."""
        if self.open_connections >= self.max_connections:
            self.refused_connections += 1
            BAD_INPUT.warn("refusing a connection: %d open (max.connections)",
                           self.open_connections)
            return
        self.open_connections += 1
        try:
            await serve_connection(self, stream, next(self._connection_ids), served)
        finally:
            self.open_connections -= 1


@dataclass(frozen=True)
class RunningServer:
    """What ``serve`` reports once it is loaded."""

    host: str
    port: int
    server: Server
    #: With ``--brokers`` N > 1: every broker (``coordinator.server.brokers.BrokerSet``).
    brokers: Any = None
    #: Each listener's bound port by name (None: the unnamed listener), in order.
    listener_ports: Mapping[str | None, int] = field(default_factory=dict)

    @property
    def runtime(self) -> CoordinatorRuntime:
        """The coordinator runtime."""
        return self.server.runtime

    @property
    def address(self) -> tuple[str, int]:
        """(host, port) clients should connect to."""
        return self.server.identity.host, self.port


def _cluster_id(data_dir: str | None) -> str:
    """A Kafka-style (22-character base64) cluster id, stable for a data directory."""
    seed = os.path.abspath(data_dir) if data_dir else f"kcoord-memory-{os.getpid()}"
    raw = uuid.uuid5(uuid.NAMESPACE_URL, "kcoord:" + seed).bytes
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


async def serve(
    options: ServeOptions, *, task_status: trio.TaskStatus[RunningServer] = trio.TASK_STATUS_IGNORED
) -> None:
    """Run the server until cancelled; ``task_status.started`` once it is fully loaded."""
    early = options.early
    if early is None and options.sink is None and options.data_dir is not None:
        probe_lock(options.data_dir)
    from coordinator.server.apis import api_versions
    async with AsyncExitStack() as stack:
        if early is None:
            bound = await bind(options.listeners, options.host, options.port)
        else:  # bound before trio was imported (``early.py``)
            bound = wrap_early(options.listeners, options.host, early)
        stack.push_async_callback(_close_listeners, bound)
        port = bound[0].port
        host = options.host or "0.0.0.0"
        identity = BrokerIdentity(
            node_id=options.node_id if options.brokers == 1 else 0,
            host=advertised_host(options.host, options.advertised_host),
            port=port,
            cluster_id=_cluster_id(options.data_dir if options.sink is None else None),
            endpoints=advertised_endpoints(bound, options.advertised_host),
        )
        if identity.endpoints:  # the first listener's advertised address
            identity = replace(identity, host=identity.endpoints[0][1],
                               port=identity.endpoints[0][2])
        config = {  # (passwords and keys are not configuration DescribeConfigs shows)
            **{k: v for k, v in options.properties.items() if not is_secret_key(k)},
            **options.broker_config,
            **options.coordinator_config.to_properties(),
            "socket.request.max.bytes": str(options.socket_request_max_bytes),
            "connections.max.idle.ms": str(options.connections_max_idle_ms),
            "queued.max.request.bytes": str(options.queued_max_request_bytes),
        }
        server = Server(
            identity,
            config,
            {ApiKey.API_VERSIONS: api_versions.handle},
            max_request_bytes=options.socket_request_max_bytes,
            idle_ms=options.connections_max_idle_ms,
            faults=options.faults,
            served_api_keys=served_api_keys(options.coordinator_config.consumer_protocol_enabled),
        )
        server.explicit_config_keys = frozenset(options.properties)
        server.bind_host, server.advertised_given = host, bool(options.advertised_host)
        server.data_dir = options.data_dir if options.sink is None else None
        server.request_memory = RequestMemory(options.queued_max_request_bytes)
        server.answer_limits = AnswerLimits(AnswerMemory(options.queued_max_response_bytes),
                                            options.socket_send_buffer_bytes,
                                            options.socket_send_timeout_ms / 1000)
        budget = descriptor_budget(options.max_open_segment_files)
        # The process's descriptors are shared by its brokers (max.connections is each one's).
        server.max_connections = min(options.max_connections,
                                     max(1, budget.connections // options.brokers))
        _quiet_accept_errors()
        brokers = None
        if options.brokers > 1:
            brokers = await _open_brokers(server, bound, options)
            stack.push_async_callback(brokers.close)
        async with trio.open_nursery() as nursery:
            if brokers is None:
                for each in bound:
                    await nursery.start(trio.serve_listeners,
                                        partial(server.handle_stream, served=each.served),
                                        each.sockets)
            else:
                await brokers.run(nursery)
            for broker in (brokers.servers.values() if brokers is not None else (server,)):
                nursery.start_soon(broker.sweep_idle_connections)
            for each in bound:
                at_host, at_port = identity.address(each.name)
                ca = each.served.generated_ca
                log.info("listening on %s:%d%s (advertised as %s:%d)%s", each.host or "0.0.0.0",
                         each.port, f" ({each.name})" if each.name else "", at_host, at_port,
                         f"; TLS with the certificate generated in {os.path.dirname(ca)}, "
                         f"clients trust {ca}" if ca else "")
                if options.on_listening is not None:
                    options.on_listening(each.host or "0.0.0.0", each.port, each.name)
            if brokers is not None:
                _report_brokers(brokers, options)
            # The broker surface first: Metadata, FindCoordinator and DescribeConfigs are
            # answered from here on, the coordinator APIs COORDINATOR_LOAD_IN_PROGRESS.
            surface, topics = await trio.to_thread.run_sync(
                load_broker_surface, options, budget.segment_files)
            server.topics = topics
            if topics.files is not None:
                stack.callback(topics.files.close)
            if brokers is None:
                server.add_handlers(surface.handlers, surface.traits)
            else:
                brokers.loaded(surface)
            log.debug("broker surface ready: %d topics", len(topics))
            await topics.open_logs(None)  # the logs not opened yet (configured topics)
            routes = await trio.to_thread.run_sync(import_deferred, options)
            for broker in [server] if brokers is None else brokers.servers.values():
                broker.coordinator_apis.imported(routes.coordinator_routing)
            log.debug("handlers imported")
            from coordinator.core import GroupCoordinator
            from coordinator.server.runtime import CoordinatorRuntime, wall_clock_ms
            from storage.live_snapshot import pack_offsets

            async with open_sink(options) as sink:
                coordinator = GroupCoordinator(
                    options.coordinator_config, lambda: str(uuid.uuid4())
                )
                coordinator.pack_offsets_with(pack_offsets)
                runtime = CoordinatorRuntime(
                    coordinator, sink, clock_ms=options.clock_ms or wall_clock_ms,
                    reads=routes.read_only_core_handlers,
                )
                runtime.security = security_shard(
                    options.properties, [each.sasl for each in options.listeners if each.sasl])
                server.groups = runtime
                async with trio.open_nursery() as core_nursery:
                    await core_nursery.start(runtime.run)
                    from coordinator.server.config_shard import attach_configs
                    from coordinator.server.share_runtime import start_share_runtime
                    from coordinator.server.txn_runtime import start_transaction_runtime

                    server.transactions = await start_transaction_runtime(
                        core_nursery, topics, runtime, server.config, options.node_id)

                    primary = server.identity.node_id
                    attach_configs(runtime, topics, {n: b.config for n, b in (
                        brokers.servers if brokers else {primary: server}).items()}, primary)
                    server.shares = await start_share_runtime(
                        core_nursery, topics, runtime, options.coordinator_config)
                    if topics.files is not None and options.fsync == "interval":
                        core_nursery.start_soon(_flush_topics, topics.files)
                    if topics.files is not None:
                        core_nursery.start_soon(_enforce_retention, server, topics, runtime)
                        core_nursery.start_soon(_run_log_cleaner, server, topics, runtime)
                    if brokers is None:
                        server.add_handlers(routes.handlers, routes.traits)
                    else:
                        brokers.loaded(routes)
                    server.loaded.set()
                    log.debug("loaded")
                    task_status.started(RunningServer(
                        host, port, server, brokers, {each.name: each.port for each in bound}))


async def _open_brokers(
    primary: Server, listeners: list[BoundListener], options: ServeOptions
) -> Any:
    """Brokers 1..N-1 beside the primary (broker 0): their listeners bound, each a
    ``Server`` with a copy of its config (its own), sharing its limits, faults, load event."""
    from coordinator.server.brokers import BrokerSet, broker_identity
    from coordinator.server.cluster import Cluster
    from coordinator.server.internal_topics import partition_count
    from coordinator.txn.placement import OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC

    props = options.properties
    cluster = Cluster(
        options.brokers,
        replication_factor=options.default_replication_factor,
        offsets_partitions=partition_count(OFFSETS_TOPIC, props),
        transaction_partitions=partition_count(TRANSACTION_STATE_TOPIC, props),
        load_delay_ms=options.coordinator_load_delay_ms,
    )
    data_dir = options.data_dir if options.sink is None else None
    brokers = BrokerSet(primary, cluster, options.host or None, data_dir)
    brokers.add(0, primary, listeners)
    for node_id in range(1, options.brokers):
        if len(options.broker_ports) > node_id:
            port: int | None = options.broker_ports[node_id]
        else:
            port = None if options.listeners else (
                options.port + node_id if options.port else 0)
        bound = await bind_broker(listeners, node_id, port)
        identity = broker_identity(primary.identity, node_id, bound[0].port,
                                   advertised_endpoints(bound, options.advertised_host, node_id))
        server = Server(identity, dict(primary.config), {ApiKey.API_VERSIONS:
                                                   primary.handlers[ApiKey.API_VERSIONS]},
                        max_request_bytes=primary.max_request_bytes,
                        idle_ms=options.connections_max_idle_ms, faults=primary.faults,
                        served_api_keys=primary.served_api_keys)
        server.loaded = primary.loaded
        server.explicit_config_keys = primary.explicit_config_keys
        server.bind_host, server.advertised_given = primary.bind_host, primary.advertised_given
        server.data_dir = primary.data_dir
        server.request_memory = primary.request_memory
        server.answer_limits = primary.answer_limits
        server.max_connections = primary.max_connections
        brokers.add(node_id, server, bound)
    return brokers


def _report_brokers(brokers: Any, options: ServeOptions) -> None:
    """A line for each listener of each broker after the first."""
    for node_id in sorted(brokers.servers)[1:]:
        for each in brokers.bound(node_id):
            host = each.host or "0.0.0.0"
            log.info("broker %d listening on %s:%d%s", node_id, host, each.port,
                     f" ({each.name})" if each.name else "")
            if options.on_broker_listening is not None:
                options.on_broker_listening(node_id, host, each.port, each.name)


class _AcceptErrorFilter(logging.Filter):
    """trio logs every failed accept (out of file descriptors: every 0.1 s, each with a
    traceback): let one through per ``window_s`` seconds, without the traceback, with the
    number of failures since the last one."""

    def __init__(self, window_s: float = 10.0) -> None:
        super().__init__()
        self.window_s = window_s
        self.last = -float("inf")
        self.since = 0

    def filter(self, record: logging.LogRecord) -> bool:
        self.since += 1
        now = time.monotonic()
        if now - self.last < self.window_s:
            return False
        record.msg = f"{record.getMessage()} ({self.since} failed accepts since the last report)"
        record.args = ()
        record.exc_info = None
        record.exc_text = None
        self.last, self.since = now, 0
        return True


def _quiet_accept_errors() -> None:
    accept_log = logging.getLogger("trio.serve_listeners")
    if not any(isinstance(f, _AcceptErrorFilter) for f in accept_log.filters):
        accept_log.addFilter(_AcceptErrorFilter())


async def _enforce_retention(server: Server, topics: TopicStore,
                             runtime: CoordinatorRuntime) -> None:
    """Topic retention every ``log.retention.check.interval.ms`` (on the event loop: it
    moves partitions' log start offsets; deleting segment files is a few unlinks)."""
    from coordinator.broker.config import retention_check_interval_ms

    interval_s = retention_check_interval_ms(server.config) / 1000
    while True:
        await trio.sleep(interval_s)
        try:
            changed = topics.enforce_retention(runtime.now_ms(), server.config)
        except Exception:
            log.exception("topic retention failed (it runs again at the next check)")
            continue
        for line in changed:
            log.info("retention: %s", line)


async def _run_log_cleaner(server: Server, topics: TopicStore,
                           runtime: CoordinatorRuntime) -> None:
    """Compacted topics' log cleaner (``coordinator.broker.log_cleaning``)."""
    from coordinator.broker.log_cleaning import run_log_cleaner

    await run_log_cleaner(topics, server.config, runtime.now_ms)


async def _flush_topics(files: Any, interval_s: float = 1.0) -> None:
    """``--fsync interval`` for topic data: fsync the partitions written since the last
    tick, every second (off the event loop)."""
    while True:
        await trio.sleep(interval_s)
        try:
            await trio.to_thread.run_sync(files.sync)
        except Exception as exc:  # a failing disk: the next appends report it
            log.error("interval fsync of topic data failed: %s", exc)


async def _close_listeners(listeners: list[BoundListener]) -> None:
    for listener in listeners:
        for sock in listener.sockets:
            await trio.aclose_forcefully(sock)
