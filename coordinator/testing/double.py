"""kcoord as an in-process test double: a real server on 127.0.0.1:0 in a background
thread with its own Trio loop, and controls a real broker does not have.

Virtual time: the server runs on a ``trio.testing.MockClock`` at rate 1.0 (it follows real
time) that :meth:`KcoordServer.advance` jumps forward, so 45 s of *coordinator* time pass
at once: session timeouts expire, rebalance timeouts fire, offsets reach retention.
Clients' own timers are theirs; only the coordinator's time jumps (the connections' idle,
frame and send deadlines move along).
"""

from __future__ import annotations

import contextlib
import logging
import math
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

import trio
import trio.testing

from coordinator.core.consumer.group import ConsumerGroup
from coordinator.core.coordinator import GroupCoordinator, GroupView
from coordinator.core.topics_image import TopicsImage
from coordinator.server.app import RunningServer, serve
from coordinator.server.faults import DropWhen, Fault, FaultInjector
from coordinator.server.options import ServeOptions, build_options
from coordinator.testing.removals import RemovalWatch
from coordinator.testing.security_controls import SecurityControls
from coordinator.testing.share_view import describe_share_group
from wire.consumer_protocol import decode_assignment

__all__ = ["DEFAULT_TEST_CONFIG", "MAX_ADVANCE_SECONDS", "KcoordServer", "advance_seconds",
           "describe_any", "describe_consumer_group", "describe_view", "jump_clock",
           "servers_of"]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Test-friendly defaults: no initial rebalance delay (Kafka's own test setting).
DEFAULT_TEST_CONFIG: dict[str, str] = {
    "group.initial.rebalance.delay.ms": "0",
    # KIP-848 consumers heartbeat every 500 ms in tests (Kafka's minimum is 5 s).
    "group.consumer.heartbeat.interval.ms": "500",
    "group.consumer.min.heartbeat.interval.ms": "500",
}

_START_TIMEOUT_S = 30.0
_STOP_TIMEOUT_S = 30.0


class KcoordServer(SecurityControls):
    """A kcoord server in a background thread. Use as a context manager or start()/stop()."""

    def __init__(
        self,
        config: Mapping[str, str] | None = None,
        *,
        data_dir: str | None = None,
        topics: Mapping[str, int] | None = None,
        fsync: str = "never",
        brokers: int = 1,
    ) -> None:
        self.config = {**DEFAULT_TEST_CONFIG, **(config or {})}
        self._brokers = brokers
        self._broker_ports: tuple[int, ...] = ()
        self._owns_data_dir = data_dir is None
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="kcoord-")
        self._topics = dict(topics or {})
        self._fsync = fsync
        self.faults = FaultInjector()
        self._port = 0
        self._thread: threading.Thread | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._clock: trio.testing.MockClock | None = None
        self._running: RunningServer | None = None
        self._stop: trio.Event | None = None
        self._started = threading.Event()
        self._error: BaseException | None = None

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> KcoordServer:
        """Start the server; returns once it listens (or raises what stopped it)."""
        if self._thread is not None:
            raise RuntimeError("already started")
        options = build_options(
            port=None if "listeners" in self.config else self._port,  # (it names its own)
            data_dir=self.data_dir,
            properties=self.config,
            topics=tuple(self._topics.items()),
            fsync=self._fsync,
            brokers=self._brokers,
            broker_ports=self._broker_ports,
        )
        options = replace(options, host="127.0.0.1", faults=self.faults)
        self._started.clear()
        self._error = None
        self._thread = threading.Thread(
            target=self._run, args=(options,), name="kcoord-server", daemon=True
        )
        self._thread.start()
        if not self._started.wait(_START_TIMEOUT_S):
            raise TimeoutError("kcoord did not start within 30 s")
        if self._error is not None:
            self._thread.join(_STOP_TIMEOUT_S)
            self._thread = None
            raise RuntimeError(f"kcoord failed to start: {self._error}") from self._error
        return self

    def _run(self, options: ServeOptions) -> None:
        clock = trio.testing.MockClock(rate=1.0)
        self._clock = clock
        try:
            trio.run(self._main, options, clock=clock)
        except BaseException as exc:  # reported to start() / stop()
            self._error = exc
            log.exception("kcoord test server stopped with an error")
        finally:
            self._started.set()

    async def _main(self, options: ServeOptions) -> None:
        self._token = trio.lowlevel.current_trio_token()
        self._stop = trio.Event()
        async with trio.open_nursery() as nursery:
            self._running = await nursery.start(serve, options)
            self._port = self._running.port
            if self._running.brokers is not None:
                ports = self._running.brokers.ports
                self._broker_ports = tuple(ports[n] for n in sorted(ports))
            self._started.set()
            await self._stop.wait()
            nursery.cancel_scope.cancel()

    def stop(self) -> None:
        """Stop the server (graceful: the log is flushed and closed) and join its thread."""
        thread = self._thread
        if thread is None:
            return
        if self._token is not None and self._stop is not None and thread.is_alive():
            with contextlib.suppress(trio.RunFinishedError):
                trio.from_thread.run_sync(self._stop.set, trio_token=self._token)
        thread.join(_STOP_TIMEOUT_S)
        if thread.is_alive():
            raise TimeoutError("kcoord did not stop within 30 s")
        self._thread = None
        self._token = None
        self._running = None

    def close(self) -> None:
        """Stop and remove the data directory this object created."""
        self.stop()
        if self._owns_data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def restart(self, kill: bool = False) -> None:
        """Stop and start again on the same port and data directory: what survives is what
        it holds (committed offsets, group metadata, topics and their records). Both ways
        stop by cancellation (in-flight requests abandoned, the log closed); ``kill`` is
        accepted so tests read the same against a crash-restarted server (a real SIGKILL
        is exercised out of process, by the storage crash tests)."""
        del kill
        self.stop()
        self.start()

    def __enter__(self) -> KcoordServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what a test reads --------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port."""
        return self._port

    @property
    def bootstrap(self) -> str:
        """``"127.0.0.1:PORT"`` for a client's bootstrap servers."""
        return f"127.0.0.1:{self._port}"

    @property
    def bootstraps(self) -> list[str]:
        """Every broker's ``"127.0.0.1:PORT"``, by node id (one entry with one broker)."""
        return [f"127.0.0.1:{port}" for port in (self._broker_ports or (self._port,))]

    def _call(self, fn: Callable[[], T]) -> T:
        if self._token is None:
            raise RuntimeError("kcoord is not running")
        return trio.from_thread.run_sync(fn, trio_token=self._token)

    def create_topic(self, name: str, partitions: int = 1) -> None:
        """Create a topic (or keep the existing one)."""
        running = self._require()
        self._call(lambda: running.server.topics.ensure_topic(name, partitions))

    def describe_group(self, group_id: str) -> dict[str, Any] | None:
        """The group straight from the coordinator: state, generation, members (with their
        decoded assignments for consumer groups), leader, protocol, and ``offsets`` (each
        committed partition's offset, log-end offset and lag); None if unknown."""
        running = self._require()
        return self._call(lambda: describe_with_offsets(running.server, group_id))

    def describe_transactions(self) -> list[dict[str, Any]]:
        """Every transactional id the transaction coordinator holds: state, producer id and
        epoch, timeout, partitions in the transaction, and offsets its open transaction
        staged."""
        running = self._require()
        return self._call(lambda: describe_transactions(running.server))

    def group_ids(self) -> list[str]:
        """Every group the coordinator holds (classic and consumer), sorted."""
        running = self._require()
        return sorted(self._call(running.runtime.coordinator.group_ids))

    def committed(self, group_id: str) -> dict[tuple[str, int], int]:
        """The group's committed offsets: {(topic, partition): offset}."""
        running = self._require()
        offsets = self._call(lambda: running.runtime.coordinator.committed_offsets(group_id))
        return {key: value.offset for key, value in offsets.items()}

    def connection_tallies(self, client_id: str | None = None) -> list[dict[str, Any]]:
        """What each connection's peer sent, of every broker (``server/tally.py``): bytes,
        requests, client id, last request time of each API key; ``client_id``'s only."""
        return self._call(lambda: [view for server in self._servers()
                                   for view in server.tallies.views(client_id)])

    def watch_removals(self) -> RemovalWatch:
        """Record each member removed by session timeout with its client's connection
        tallies at that moment (``testing/removals.py``); ``uninstall()`` it after."""
        return RemovalWatch(self._servers).install()

    def server_time(self) -> float:
        """The server's clock (what tallies and removals are stamped with)."""
        return self._call(trio.current_time)

    def _servers(self) -> list[Any]:
        return servers_of(self._require())

    # -- controls -------------------------------------------------------------------------

    def advance(self, seconds: float) -> None:
        """Make ``seconds`` of coordinator time pass now, and let due timers fire
        (ValueError unless a finite number from 0 to ``MAX_ADVANCE_SECONDS``)."""
        seconds = advance_seconds(seconds)
        if self._token is None or self._clock is None:
            raise RuntimeError("kcoord is not running")
        trio.from_thread.run(jump_clock, self._clock, seconds, self._require(),
                             trio_token=self._token)

    def inject(
        self,
        api_key: int | str,
        *,
        error_code: int | str | None = None,
        count: int | None = 1,
        delay_ms: int = 0,
        drop: DropWhen | None = None,
        stall: bool = False,
        group_id: str | None = None,
        client_id: str | None = None,
        node_id: int | None = None,
    ) -> Fault:
        """Arm a fault for the next ``count`` requests of ``api_key`` (see faults.py), to
        broker ``node_id`` only if given."""
        return self.faults.add(
            api_key,
            error_code=error_code,
            count=count,
            delay_ms=delay_ms,
            drop=drop,
            stall=stall,
            group_id=group_id,
            client_id=client_id,
            node_id=node_id,
        )

    # -- several brokers (``brokers=N``) ------------------------------------------------------

    def _brokers_or_fail(self) -> Any:
        brokers = self._require().brokers
        if brokers is None:
            raise RuntimeError("kcoord runs one broker; create it with brokers=N to use this")
        return brokers

    def _call_async(self, fn: Callable[[], Any]) -> Any:
        if self._token is None:
            raise RuntimeError("kcoord is not running")
        return trio.from_thread.run(fn, trio_token=self._token)

    def stop_broker(self, node_id: int) -> dict[str, Any]:
        """Stop broker ``node_id``: its listener closes, its connections are reset, the
        partitions it led fail over and the groups it coordinated move to the next live
        broker (ClusterError for an unknown id, a stopped broker or the last live one)."""
        brokers = self._brokers_or_fail()
        result: dict[str, Any] = self._call_async(lambda: brokers.stop(node_id))
        return result

    def start_broker(self, node_id: int) -> dict[str, Any]:
        """Start a stopped broker again on its port (leadership does not move back)."""
        brokers = self._brokers_or_fail()
        result: dict[str, Any] = self._call_async(lambda: brokers.start(node_id))
        return result

    def move_coordinator(self, group_id: str, node_id: int) -> dict[str, Any]:
        """Move ``group_id``'s ``__consumer_offsets`` partition (with every group on it) to
        broker ``node_id``, as a Kafka leader change would."""
        brokers = self._brokers_or_fail()
        result: dict[str, Any] = self._call(lambda: brokers.move_coordinator(group_id, node_id))
        return result

    def elect_preferred_leaders(self) -> int:
        """Give partitions back to their preferred replicas; how many moved."""
        brokers = self._brokers_or_fail()
        result: dict[str, int] = self._call(brokers.elect_preferred_leaders)
        return result["changed"]

    def coordinator_of(self, group_id: str) -> int:
        """The node id coordinating ``group_id`` (0 with one broker)."""
        brokers = self._require().brokers
        if brokers is None:
            return int(self._require().server.identity.node_id)
        return int(self._call(lambda: brokers.cluster.coordinator("__consumer_offsets",
                                                                  group_id)))

    def _require(self) -> RunningServer:
        if self._running is None:
            raise RuntimeError("kcoord is not running")
        return self._running


#: The largest jump one advance makes (ten years of coordinator time): a larger one would
#: overflow the runtime's deadlines.
MAX_ADVANCE_SECONDS = 10 * 365 * 24 * 3600


def advance_seconds(seconds: object) -> float:
    """``seconds`` as a time jump: ValueError unless a finite number (not a bool) from 0 to
    ``MAX_ADVANCE_SECONDS``. A NaN would hang the clock, 1e308 kill the runtime."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise ValueError(f"seconds must be a number, got {seconds!r}")
    if isinstance(seconds, int) and abs(seconds) > MAX_ADVANCE_SECONDS:  # before float()
        seconds = math.inf if seconds > 0 else -math.inf
    value = float(seconds)
    if not math.isfinite(value) or value > MAX_ADVANCE_SECONDS:
        raise ValueError(f"seconds must be finite and at most {MAX_ADVANCE_SECONDS}")
    if value < 0:
        raise ValueError("time only moves forward")
    return value


def servers_of(running: RunningServer) -> list[Any]:
    """Every broker's ``Server`` of a running kcoord (one without ``--brokers``)."""
    if running.brokers is None:
        return [running.server]
    return list(running.brokers.servers.values())


async def jump_clock(clock: trio.testing.MockClock, seconds: float,
                     running: RunningServer) -> None:
    """Move ``clock`` forward (from inside its Trio run) and let the runtime's timer task
    run the expiries that fall due and their follow-ups. Only coordinator time jumps: the
    connections' idle stamps and deadlines move along in the same step (no task runs in
    between), so no client is closed for time that did not pass."""
    clock.jump(seconds)
    for server in servers_of(running):
        server.clock_jumped(seconds)
    for _ in range(3):
        await trio.testing.wait_all_tasks_blocked()


def group_offsets(server: Any, group_id: str) -> list[dict[str, Any]]:
    """The group's committed offsets with each partition's log-end offset and lag (None
    where the topic or partition is unknown to this broker)."""
    committed = server.groups.coordinator.committed_offsets(group_id)
    out = []
    for (topic, partition), value in sorted(committed.items()):
        log = server.topics.partition(topic, partition) if server.topics is not None else None
        end = None if log is None else log.high_watermark
        out.append({"topic": topic, "partition": partition, "committed": value.offset,
                    "log_end_offset": end,
                    "lag": None if end is None else max(end - value.offset, 0)})
    return out


def describe_with_offsets(server: Any, group_id: str) -> dict[str, Any] | None:
    """``describe_any`` plus the group's ``offsets`` (committed, log-end offset, lag)."""
    described = describe_any(server.groups.coordinator, group_id)
    if described is None:
        return None
    return {**described, "offsets": group_offsets(server, group_id)}


def describe_transactions(server: Any) -> list[dict[str, Any]]:
    """The transaction coordinator's ids as JSON-friendly snapshots (empty without one)."""
    transactions = server.transactions
    if transactions is None:
        return []
    coordinator = transactions.coordinator
    staged = server.groups.coordinator.store.pending_txn
    out: list[dict[str, Any]] = []
    for txn_id in coordinator.transactional_ids():
        metadata = coordinator.transaction_metadata(txn_id)
        if metadata is None:
            continue
        offsets = staged.get(metadata.producer_id, {})
        out.append({
            "transactional_id": txn_id,
            "state": metadata.state.kafka_name,
            "producer_id": metadata.producer_id,
            "producer_epoch": metadata.producer_epoch,
            "timeout_ms": metadata.txn_timeout_ms,
            "partitions": sorted([tp.topic, tp.partition] for tp in metadata.topic_partitions),
            "staged_offsets": {
                group: sorted([t, p, v.offset] for (t, p), v in by_tp.items())
                for group, by_tp in sorted(offsets.items())
            },
        })
    return out


def describe_any(coordinator: GroupCoordinator, group_id: str) -> dict[str, Any] | None:
    """Any group type (classic, consumer, share) as a JSON-friendly snapshot; None if
    unknown."""
    view = coordinator.describe(group_id)
    if view is not None:
        return describe_view(view)
    group = coordinator.consumer_group(group_id)
    if group is not None:
        return describe_consumer_group(group, coordinator.topics_image)
    share_group = coordinator.share_group(group_id)
    return None if share_group is None else describe_share_group(share_group,
                                                                  coordinator.topics_image)


def describe_consumer_group(group: ConsumerGroup, image: TopicsImage) -> dict[str, Any]:
    """A consumer group (KIP-848): epochs, and per member its epoch, reconciliation state,
    assignment and target as sorted (topic, partition) pairs. ``generation_id`` is the
    group epoch."""

    def pairs(partitions: Mapping[Any, frozenset[int]]) -> list[tuple[str, int]]:
        return sorted((image.by_id.get(t, str(t)), p) for t, ps in partitions.items()
                      for p in ps)

    return {
        "group_id": group.group_id,
        "type": "consumer",
        "state": group.state,
        "generation_id": group.group_epoch,
        "group_epoch": group.group_epoch,
        "assignment_epoch": group.assignment_epoch,
        "protocol_type": "consumer",
        "members": [
            {
                "member_id": member.member_id,
                "group_instance_id": member.instance_id,
                "client_id": member.client_id,
                "member_epoch": member.member_epoch,
                "member_state": member.current.state.name,
                "assignment": pairs(member.current.assigned_partitions),
                "target_assignment": pairs(group.target_of(member.member_id)),
            }
            for member in group.members.values()
        ],
    }


def describe_view(view: GroupView) -> dict[str, Any]:
    """A JSON-friendly group snapshot, assignments decoded for consumer groups."""
    return {
        "group_id": view.group_id,
        "type": "classic",
        "state": view.state,
        "generation_id": view.generation_id,
        "protocol_type": view.protocol_type,
        "protocol": view.protocol_name,
        "leader": view.leader_id,
        "members": [
            {
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "client_id": m.client_id,
                "assignment": _decode_assignment(m.assignment),
            }
            for m in view.members
        ],
    }


def _decode_assignment(data: bytes) -> list[tuple[str, int]] | None:
    if not data:
        return []
    try:
        assignment = decode_assignment(data)
    except Exception:
        return None
    return sorted((topic, p) for topic, partitions in assignment for p in partitions)
