"""The coordinator runtime: the one owner of the sans-I/O coordinator shards in a server --
the group coordinator and, once attached, the transaction coordinator, the dynamic configs
and the share coordinator -- as Kafka's ``CoordinatorRuntime`` runs its shards.

Every shard has the same contract (``coordinator.server.shard.Shard``) and Result
vocabulary (``coordinator.core.result``); one timer heap and loop, one append queue. Every
shard call happens synchronously on the Trio thread, so no request ever sees a half-applied
change (Trio never switches tasks inside a sync call: the event loop is the lock). For each
``Result``:

1. its timer changes are applied at once (a later reschedule of the same key wins), and its
   transaction markers handed to the marker writer (after a durable PrepareCommit/Abort);
2. its records join a FIFO queue that one persister task writes, every Result queued so
   far in one append (group commit), so the log holds records in call order. Once the
   append is durable the shard that made the Result applies the records (``append_done``)
   and the replies go out in that same order; if it failed, the shard answers instead
   (``append_failed``: Kafka's mapped error, state reverted). A Result without records is
   delivered at once when nothing is queued or being written, otherwise after it, so no
   answer reveals state the log could still lose; if that append fails, a read behind it
   (describe, list, fetch) is run again once the shard has reverted;
3. a reply whose requester went away (connection closed, request cancelled) is dropped.

The fast lane is these same steps: an ``at_once`` Result (the usual OffsetCommit, a steady
heartbeat: ``coordinator.core.result``) is appended, applied and answered before ``submit``
returns when nothing is queued or being written and the sink writes at once (a
``ReadyReply``, no pending reply); otherwise it is queued like any other, counted in flight.

Time: ``now_ms`` is wall-clock milliseconds *advanced by the Trio clock* (wall clock read
once, at start): timestamps mean something across restarts, MockClock drives tests. A timer
key (one ``TimerHeap``) fires its shard: transaction, share, else the group shard.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

import trio

from coordinator.core import (
    CancelTimer,
    GroupCoordinator,
    Reply,
    ReplyToken,
    RequestContext,
    Result,
)
from coordinator.core.group_reload import reload_groups
from coordinator.core.result import EMPTY_RESULT, ScheduleTimer, ShardTimerKey
from coordinator.server.group_events import log_group_events
from coordinator.server.shard import MarkerWriter, Shard, wall_clock_ms
from coordinator.server.sink import RecordSink
from coordinator.server.timer_heap import TimerHeap
from coordinator.server.waiters import PendingReply, ReadyReply, RuntimeClosed
from coordinator.txn.timers import TxnTimerKey
from storage.config_records import CONFIG_KEY_TYPES
from storage.errors import append_error_of
from storage.records import Record, TransactionStateKey
from storage.security_records import SECURITY_KEY_TYPES
from storage.share_records import SHARE_KEY_TYPES

__all__ = [
    "CoordinatorRuntime",
    "MarkerWriter",
    "PendingReply",
    "ReadyReply",
    "RuntimeClosed",
    "Shard",
    "log_group_events",
    "wall_clock_ms",
]

log = logging.getLogger(__name__)
RequestT = TypeVar("RequestT")
ShardHandler = Callable[[Any, RequestContext, RequestT, ReplyToken, int], Result]
"""A handler of any shard: (shard, context, request, reply token, now_ms) -> Result."""

# Event-loop turns the persister waits, while its queue keeps growing, before a write.
_GATHER_YIELDS = 3


class CoordinatorRuntime:
    """Feeds requests and timer expiries to the shards; persists, answers and re-arms."""

    def __init__(
        self,
        coordinator: GroupCoordinator,
        sink: RecordSink,
        *,
        clock_ms: Callable[[], int] = wall_clock_ms,
        reads: frozenset[Any] = frozenset(),
    ) -> None:
        self.coordinator = coordinator
        #: Core handlers that only read (the routes' ``read_only_core_handlers``): run again
        #: when an append they were answered behind fails (their answer may show what it lost).
        self._reads = reads
        #: The transaction shard, once attached (``attach_transactions``).
        self.transactions: Shard | None = None
        self._markers: MarkerWriter | None = None
        self.security: Shard | None = None  # ACLs, SCRAM credentials (coordinator.security)
        self.sink = sink
        self._clock_ms = clock_ms
        self._epoch_ms = 0
        self._t0 = 0.0
        self._now_s: Callable[[], float] = trio.current_time  # the run clock's (now_ms is hot)
        self._last_token = 0
        self._waiters: dict[ReplyToken, PendingReply] = {}
        self._timer_heap = TimerHeap(self._wake_timers)
        #: Whether ``at_once`` Results are answered inline when they may be (tests compare
        #: both ways).
        self.answers_at_once = True
        self._serving = False  # loaded and not closed (an Event's is_set is a call)
        self._timer_scope: trio.CancelScope | None = None
        self._nursery: trio.Nursery | None = None
        self._queue: list[tuple[Result, Shard | None]] = []  # awaiting durability; shard
        # Record-less Results queued behind an append (by id): what ran them (to run again).
        self._reruns: dict[int, tuple[ShardHandler[Any], RequestContext, Any, ReplyToken]] = {}
        self._reruns_due: set[int] = set()  # those answered while an append failed
        self._writing = self._closed = False
        self._work = trio.Event()
        self._loaded = trio.Event()
        self.replayed_records = 0
        self.append_failures = 0
        #: The transaction and config shards' records met during replay, until attached.
        self.transaction_records: list[Record] = []
        self.configs: Shard | None = None  # the dynamic config shard, once attached
        self.config_records: list[Record] = []
        self.share_records: list[Record] = []  # the share shard's, likewise
        self._timer_shards: dict[type, Shard] = {}  # shards by the timer keys they own

    @property
    def dropped_events(self) -> int:  # RebalanceEvent history records lost to failed appends
        return self.coordinator.dropped_events

    # ------------------------------------------------------------------ lifecycle

    @property
    def loaded(self) -> bool:
        """Whether replay finished and requests are being served."""
        return self._loaded.is_set()

    async def wait_loaded(self) -> None:
        """Return once replay has finished."""
        await self._loaded.wait()

    def now_ms(self) -> int:
        """The coordinator's notion of now (see the module docstring)."""
        return self._epoch_ms + int((self._now_s() - self._t0) * 1000)

    def _deadline_seconds(self, deadline_ms: int) -> float:
        # Half a millisecond late, so now_ms() at wake-up is never below the deadline.
        return self._t0 + (deadline_ms - self._epoch_ms) / 1000 + 0.0005

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Replay the sink, report started, then drive timers until cancelled.

        ``task_status.started()`` is called as soon as requests can be *accepted*; they wait
        for the end of replay (``loaded``) before reaching the core."""
        self._epoch_ms = self._clock_ms()
        self._now_s = trio.lowlevel.current_clock().current_time
        self._t0 = self._now_s()
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._persister)
                task_status.started()
                await self._load()
                await self._timer_loop()
        finally:
            self._closed = True
            self._serving = False
            for waiter in self._waiters.values():
                if waiter.event is not None:
                    waiter.event.set()

    async def _load(self) -> None:
        started = time.perf_counter()
        blocking = self.sink.blocking_replay
        count = await trio.to_thread.run_sync(self._replay_all) if blocking else self._replay_all()
        self.replayed_records = count
        self._process(self.coordinator.on_loaded(self.now_ms()))
        self._loaded.set()
        self._serving = not self._closed
        log.info(
            "coordinator loaded: %d records replayed, %d groups, in %.1f ms",
            count,
            len(self.coordinator.group_ids()),
            (time.perf_counter() - started) * 1000,
        )

    def _replay_all(self) -> int:
        records = self.sink.replay()  # first: a log sink may load its snapshot (packed groups)
        if packed := self.sink.packed_offsets():  # (stand-in coordinators in tests have none)
            self.coordinator.replay_packed(packed)
        replay = self.coordinator.replay  # the group shard's, unless the key type says
        security = self.security or self.coordinator
        by_key_type = {TransactionStateKey: self.transaction_records.append,
                       **dict.fromkeys(CONFIG_KEY_TYPES, self.config_records.append),
                       **dict.fromkeys(SHARE_KEY_TYPES, self.share_records.append),
                       **dict.fromkeys(SECURITY_KEY_TYPES, security.replay)}
        count = 0
        for count, record in enumerate(records, 1):  # noqa: B007 (the count is returned)
            by_key_type.get(type(record.key), replay)(record)
        return count

    def attach_transactions(self, shard: Shard, markers: MarkerWriter) -> None:
        """Serve the transaction shard (after the group load): replay its records, load it
        (re-sending the markers of prepared transactions) and arm its periodic jobs; its
        markers go to ``markers``."""
        self.transactions = shard
        self._markers = markers
        for record in self.transaction_records:
            shard.replay(record)
        self.transaction_records = []
        self._process(shard.on_loaded(self.now_ms()), shard)

    def attach_configs(self, shard: Shard) -> None:
        """Serve the dynamic config shard (after the load): replay its records, load it."""
        self.configs, records, self.config_records = shard, self.config_records, []
        for record in records:
            shard.replay(record)
        self._process(shard.on_loaded(self.now_ms()), shard)

    def attach_share(self, shard: Shard, timer_key: type) -> None:
        """Serve the share shard: replay its records, load it; ``timer_key``'s fire it."""
        self._timer_shards[timer_key], records, self.share_records = shard, self.share_records, []
        for record in records:
            shard.replay(record)
        self._process(shard.on_loaded(self.now_ms()), shard)

    def process_transactions(self, result: Result) -> None:
        """Carry out a Result the marker writer got from the transaction shard."""
        self._process(result, self.transactions)

    def spawn(self, async_fn: Callable[..., Awaitable[object]], *args: object) -> None:
        """Run a task beside the runtime, ending with it (a marker write's wait)."""
        assert self._nursery is not None, "the runtime is not running"
        self._nursery.start_soon(async_fn, *args)

    def reload_groups(self, group_ids: Sequence[str]) -> None:
        """Unload and load ``group_ids`` again (their coordinator moved: parked joins and
        syncs are answered NOT_COORDINATOR, sessions re-armed; ``core.group_reload``)."""
        if group_ids:
            self._process(reload_groups(self.coordinator, group_ids, self.now_ms()))

    # ------------------------------------------------------------------ requests

    async def call(
        self,
        handler: ShardHandler[RequestT],
        ctx: RequestContext,
        request: RequestT,
        shard: Shard | None = None,
    ) -> Any:
        """Run one shard handler (the group shard's unless ``shard``) and await its reply,
        which may be parked until a later request or timer completes it (the response: a
        dict the wire encodes)."""
        if not self._loaded.is_set():
            await self._loaded.wait()
        pending = self.submit(handler, ctx, request, shard)
        assert pending is not None
        return await pending.wait()

    def submit(
        self,
        handler: ShardHandler[RequestT],
        ctx: RequestContext,
        request: RequestT,
        shard: Shard | None = None,
    ) -> PendingReply | ReadyReply | None:
        """Run one shard handler now and return its pending reply (None before the load
        finished: use ``call``). Requests submitted one after another reach the shards, the
        log and their requesters in that order, so a connection can submit request N+1
        while N waits for its append (many commits per fsync from one connection). An
        ``at_once`` Result is answered inline when nothing is queued or being written and
        the sink writes at once (``ReadyReply``)."""
        if not self._serving:
            if self._closed:
                raise RuntimeClosed("the coordinator runtime has stopped")
            return None
        self._last_token = token = self._last_token + 1
        now = self._epoch_ms + int((self._now_s() - self._t0) * 1000)  # now_ms(), inline
        result = handler(shard or self.coordinator, ctx, request, token, now)
        if result.at_once is not None and shard is None:  # (only the group shard's are)
            if self.answers_at_once and not (self._queue or self._writing):
                # Nothing in flight: append, apply and answer now, as _process and _complete
                # do (inline: the hottest requests take this path).
                records = result.records
                try:
                    written = not records or self.sink.append_nowait(records)
                except Exception as exc:  # answered as any failed append: the shard maps it
                    self._append_failed(len(records), exc)
                    pending = self._waiters[token] = PendingReply(token, self._waiters)
                    self._apply_timers(result.timers)
                    self._complete(result, exc, None)
                    return pending
                if written:
                    arm, cancel = self._timer_heap.arm, self._timer_heap.cancel
                    for change in result.timers:
                        if type(change) is ScheduleTimer:
                            arm(change.key, change.deadline_ms)
                        else:
                            cancel(change.key)
                    if records:
                        follow = self.coordinator.append_done(result, now)
                        if follow is not EMPTY_RESULT:
                            self._process(follow, None, settled=True)
                    return ReadyReply(result.replies[0].response)
            self.coordinator.count_in_flight(result)  # queued: in flight like the others'
        pending = self._waiters[token] = PendingReply(token, self._waiters)
        if handler in self._reads and (self._queue or self._writing):
            # Answered from state an append in flight may still lose: if that append
            # fails, the read is run again once the core has reverted.
            self._reruns[id(result)] = (handler, ctx, request, token)
        try:
            self._process(result, shard)
        except BaseException:
            del self._waiters[token]
            raise
        return pending

    def _process(
        self, result: Result, shard: Shard | None = None, *, settled: bool = False
    ) -> None:
        """Apply one Result of ``shard`` (None: the group shard): timers now, markers to
        the writer, records queued in order, replies when durable. ``settled``: the Result
        follows an append that just completed, so replies without records of their own
        reveal nothing undurable and go out at once."""
        if result.timers:
            self._apply_timers(result.timers)
        if shard is not None and result.markers:
            assert self._markers is not None, "a transaction shard without a marker writer"
            self._markers.write_markers(result.markers)
        if result.records:
            if not (self._queue or self._writing):
                # Nothing in flight: a sink that can persist synchronously saves two task
                # switches (the persister's and the requester's wake-up).
                try:
                    done = self.sink.append_nowait(result.records)
                except Exception as exc:
                    self._append_failed(len(result.records), exc)
                    self._complete(result, exc, shard)
                    return
                if done:
                    self._complete(result, None, shard)
                    return
            self._queue.append((result, shard))
            self._work.set()
        elif result.replies:
            if settled or not (self._queue or self._writing):
                self._deliver(result.replies)
            else:
                self._queue.append((result, shard))
                self._work.set()

    def _complete(self, result: Result, error: Exception | None, shard: Shard | None) -> None:
        """The append of ``result``'s records finished: let its shard apply it (or answer
        the failure), deliver, and process what the shard does next."""
        now = self.now_ms()
        core: Shard = shard or self.coordinator
        try:
            if error is None:
                follow = core.append_done(result, now)
                self._deliver(result.replies)
                if shard is None and log.isEnabledFor(logging.INFO):
                    log_group_events(result.records)
            else:
                follow = core.append_failed(result, append_error_of(error), now)
        except Exception:
            log.exception("the coordinator failed completing an append")
            return
        if follow is not EMPTY_RESULT:
            self._process(follow, shard, settled=True)

    async def _persister(self) -> None:
        """Write queued Results' records in call order, many per append (group commit), then
        complete them in the same order."""
        while True:
            if not self._queue:
                self._work = trio.Event()
                await self._work.wait()
                continue
            # Connections woken in the same I/O poll may still queue commits: let them run
            # before taking the batch (more records per fsync), while the queue grows.
            for _ in range(_GATHER_YIELDS):
                size = len(self._queue)
                await trio.lowlevel.checkpoint()
                if len(self._queue) == size:
                    break
            batch, self._queue = self._queue, []
            records = [record for result, _ in batch for record in result.records]
            error: Exception | None = None
            if records:
                self._writing = True
                try:
                    # On the loop when the sink can, as submit does (else two cohorts of
                    # connections kept each other queued behind thread writes).
                    if not self.sink.append_nowait(records):
                        await self.sink.append(records)
                except Exception as exc:
                    error = exc
                    self._append_failed(len(records), exc)
                finally:
                    self._writing = False
            if error is not None:  # every read answered meanwhile may show what it lost
                self._reruns_due.update(self._reruns)
            reruns = []
            for result, shard in batch:
                if result.records:
                    self._complete(result, error, shard)
                    continue
                rerun = self._reruns.pop(id(result), None)
                if rerun is not None and id(result) in self._reruns_due:
                    self._reruns_due.discard(id(result))
                    reruns.append((rerun, result, shard))
                else:
                    self._deliver(result.replies)
            for (handler, ctx, request, token), first, shard in reruns:
                try:
                    again = handler(shard or self.coordinator, ctx, request, token, self.now_ms())
                except Exception:  # never leave the requester waiting
                    log.exception("re-running a read after a failed append failed")
                    again = first
                self._process(again, shard, settled=True)

    def _append_failed(self, count: int, exc: Exception) -> None:
        self.append_failures += 1
        log.error("appending %d records failed; answering with errors: %r", count, exc)

    def _deliver(self, replies: Iterable[Reply]) -> None:
        debug = log.isEnabledFor(logging.DEBUG)
        for reply in replies:
            waiter = self._waiters.get(reply.token)
            if waiter is None:
                log.debug("dropping a reply: its requester is gone (%r)", reply.response)
                continue
            if debug:
                log.debug("reply to %r: %r", reply.token, reply.response)
            waiter.response = reply.response
            if waiter.event is not None:
                waiter.event.set()

    # ------------------------------------------------------------------ timers

    def _apply_timers(self, changes: Iterable[ScheduleTimer | CancelTimer]) -> None:
        """Arm/disarm keys (``TimerHeap``: pushing a later deadline only updates a dict)."""
        arm, cancel = self._timer_heap.arm, self._timer_heap.cancel
        for change in changes:
            if type(change) is ScheduleTimer:
                arm(change.key, change.deadline_ms)
            else:
                cancel(change.key)

    def _wake_timers(self, deadline_ms: int) -> None:  # a timer entry was queued
        scope = self._timer_scope
        if scope is not None:
            at = self._deadline_seconds(deadline_ms)
            if at < scope.deadline:
                scope.deadline = at

    @property
    def _heap(self) -> list[Any]:  # tests check it stays bounded
        return self._timer_heap.heap

    def armed_timers(self) -> dict[ShardTimerKey, int]:
        """The armed timers and their deadlines (ms), for tests and diagnostics."""
        return self._timer_heap.armed()

    def _fire_due(self) -> None:
        now = self.now_ms()
        while (due := self._timer_heap.pop_due(now)) is not None:
            key, deadline = due
            log.debug("timer %r fired (deadline %d, now %d)", key, deadline, now)
            shard = None
            try:
                if isinstance(key, TxnTimerKey):
                    shard = self.transactions
                    result = EMPTY_RESULT if shard is None else shard.fire_timer(key, now)
                elif (shard := self._timer_shards.get(type(key))) is not None:
                    result = shard.fire_timer(key, now)
                else:
                    result = self.coordinator.fire_timer(key, now)  # type: ignore[arg-type]
            except Exception:
                log.exception("the coordinator failed handling timer %r", key)
                continue
            self._process(result, shard)

    async def _timer_loop(self) -> None:
        while True:
            self._fire_due()
            deadline = self._timer_heap.next_deadline()
            at = float("inf") if deadline is None else self._deadline_seconds(deadline)
            with trio.CancelScope(deadline=at) as scope:
                self._timer_scope = scope
                await trio.sleep_forever()
            self._timer_scope = None
