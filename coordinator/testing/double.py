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

from coordinator.server.app import RunningServer, serve
from coordinator.server.faults import DropWhen, Fault, FaultInjector
from coordinator.server.loop_watchdog import LoopStall, LoopWatchdog
from coordinator.server.options import ServeOptions, build_options
from coordinator.testing.group_views import (
    describe_transactions,
    describe_with_offsets,
    join_waits,
)
from coordinator.testing.removals import RemovalWatch
from coordinator.testing.security_controls import SecurityControls

__all__ = ["DEFAULT_TEST_CONFIG", "MAX_ADVANCE_SECONDS", "KcoordServer", "advance_seconds",
           "jump_clock", "servers_of"]

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
        #: What held the server's event loop longer than its threshold (``loop_stalls``).
        self.watchdog = LoopWatchdog()

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
        self.watchdog.start()
        try:
            await self._serve_until_stopped(options)
        finally:
            self.watchdog.stop()

    async def _serve_until_stopped(self, options: ServeOptions) -> None:
        assert self._stop is not None
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
        topics = self._require().server.topics
        assert topics is not None, "kcoord serves no topics"
        self._call(lambda: topics.ensure_topic(name, partitions))

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

    def join_waits(self) -> list[str]:
        """Each classic group preparing a rebalance and the members whose JoinGroup it
        still waits for (``group_views.join_waits``), as lines."""
        runtime = self._require().runtime
        return self._call(lambda: join_waits(runtime.coordinator, runtime.now_ms()))

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

    def loop_stalls(self) -> list[LoopStall]:
        """The times the server's event loop was held longer than the watchdog's
        threshold (``loop_watchdog.py``), the last ``KEPT``, with where it was."""
        return list(self.watchdog.stalls)

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
        result: dict[str, Any] = self._call_async(
            lambda: brokers.move_coordinator(group_id, node_id))
        return result

    def elect_preferred_leaders(self) -> int:
        """Give partitions back to their preferred replicas; how many moved."""
        brokers = self._brokers_or_fail()
        result: dict[str, int] = self._call_async(brokers.elect_preferred_leaders)
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
