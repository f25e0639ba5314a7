"""The coordinator runtime: the one owner of the sans-I/O ``GroupCoordinator`` in a server.

Every core call happens synchronously on the Trio thread, so no request ever sees a
half-applied change (Trio never switches tasks inside a sync call: the event loop is the
lock). For each ``Result``:

1. its timer changes are applied at once (so a later call's reschedule of the same key
   always wins);
2. its records join a FIFO queue that one persister task writes, every Result queued so
   far in one append (group commit: the only batching queue between the core and the
   disk), so the log holds records in call order. Once the append is durable the core
   applies the records (``append_done``; nothing changes hard state before) and the
   replies go out in that same order; if it failed, the core answers instead
   (``append_failed``: Kafka's mapped error, soft state reverted). A Result without
   records is delivered at once when nothing is queued or being written, otherwise after
   it, so no answer ever reveals state the log could still lose; if that append fails, a
   read (describe, list, fetch) behind it is run again once the core has reverted;
3. a reply whose requester went away (connection closed, request cancelled) is dropped.

Time: ``now_ms`` is wall-clock milliseconds *advanced by the Trio clock* (the wall clock is
read once, at start), so commit timestamps mean something across restarts while
``trio.testing.MockClock`` drives session and rebalance timeouts in tests. Timers live on a
heap keyed by deadline; rescheduling a key replaces it. The heap is lazy: a key moved to a
later deadline (every heartbeat moves its member's session timer) keeps its heap entry,
which is re-queued when it comes up, so a heartbeat costs a dict update, not a heap push.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import trio

import wire
from coordinator.core import (
    CancelTimer,
    CoreHandler,
    ErrorCode,
    GroupCoordinator,
    Reply,
    ReplyToken,
    RequestContext,
    Result,
    ScheduleTimer,
    handle_describe_groups,
    handle_list_groups,
    handle_offset_fetch,
)
from coordinator.core.consumer_describe import handle_consumer_group_describe
from coordinator.core.group_reload import reload_groups
from coordinator.core.result import Effects, ShardResponse, ShardTimerKey
from coordinator.server.context import Handler
from coordinator.server.context import RequestContext as ServerRequestContext
from coordinator.server.sink import RecordSink
from coordinator.txn.timers import TxnTimerKey
from storage.errors import append_error_of
from storage.records import RebalanceEventKey, RebalanceEventValue, Record, TransactionStateKey

__all__ = [
    "AppendFailed",
    "CoordinatorRuntime",
    "PendingReply",
    "RuntimeClosed",
    "group_api",
    "wall_clock_ms",
]

log = logging.getLogger(__name__)
#: Handlers that only read (no records, no change to any state): run again when an append
#: they were answered behind fails, as their first answer may show what it lost.
_READS: frozenset[Any] = frozenset({handle_consumer_group_describe, handle_describe_groups,
                                    handle_list_groups, handle_offset_fetch})

RequestT = TypeVar("RequestT")

# Rebuild the timer heap when stale entries outnumber live ones by this factor (every
# heartbeat reschedules its member's session timer, leaving the old deadline behind).
_HEAP_SLACK = 4
# Event-loop turns the persister waits, while its queue keeps growing, before a write.
_GATHER_YIELDS = 3
_HEAP_MIN_REBUILD = 4096


class RuntimeClosed(Exception):
    """The runtime stopped before the request could be answered."""


class AppendFailed(Exception):
    """Records handed to ``append_records`` did not reach the log (Kafka log-append
    ``error``)."""

    def __init__(self, error: ErrorCode) -> None:
        super().__init__(f"appending records failed: {error.name}")
        self.error = error


class _AppendWaiter:
    """The completion of an ``append_records`` call (an AppendCallback)."""

    __slots__ = ("done", "error")

    def __init__(self) -> None:
        self.done = trio.Event()
        self.error: ErrorCode | None = None

    def appended(self, now_ms: int, fx: Effects) -> None:
        self.done.set()

    def append_failed(self, error: ErrorCode, now_ms: int, fx: Effects) -> None:
        self.error = error
        self.done.set()


class PendingReply:
    """A submitted request's reply: ``ready`` once the runtime delivered it (after its
    records are durable), ``wait`` for it otherwise. Lets a connection submit pipelined
    requests in order and collect their answers later (``CoordinatorRuntime.submit``)."""

    __slots__ = ("_finish", "_waiters", "event", "response", "token")

    def __init__(self, token: ReplyToken, waiters: dict[ReplyToken, PendingReply]) -> None:
        self.token = token
        self._waiters = waiters
        self._finish: Callable[[Any], Any] | None = None
        self.event: trio.Event | None = None
        self.response: ShardResponse | None = None

    @classmethod
    def answered(cls, response: Any) -> PendingReply:
        """A reply that needed no coordinator (the broker's own answer, a wire dict)."""
        pending = cls(0, {})
        pending.response = response
        return pending

    def ready(self) -> bool:
        """Whether the reply was delivered."""
        return self.response is not None

    def result(self) -> Any:
        """The delivered reply (mapped by ``then``); only once ``ready``."""
        self._waiters.pop(self.token, None)
        response = self.response
        return response if self._finish is None else self._finish(response)

    async def wait(self) -> Any:
        """The reply, once delivered; RuntimeClosed if the runtime stopped first."""
        if self.response is None:
            self.event = trio.Event()
            try:
                await self.event.wait()
            finally:
                if self.response is None:
                    self._waiters.pop(self.token, None)
            if self.response is None:
                raise RuntimeClosed("the coordinator runtime has stopped")
        return self.result()

    def discard(self) -> None:
        """Nobody will collect the reply (the connection went away)."""
        self._waiters.pop(self.token, None)

    def then(self, finish: Callable[[Any], Any]) -> PendingReply:
        """This reply, passed through ``finish`` when collected."""
        previous = self._finish
        self._finish = finish if previous is None else (lambda r: finish(previous(r)))
        return self


def wall_clock_ms() -> int:
    """Milliseconds since the epoch."""
    return time.time_ns() // 1_000_000


class CoordinatorRuntime:
    """Feeds requests and timer expiries to the core; persists, answers and re-arms."""

    def __init__(
        self,
        coordinator: GroupCoordinator,
        sink: RecordSink,
        *,
        clock_ms: Callable[[], int] = wall_clock_ms,
    ) -> None:
        self.coordinator = coordinator
        self.sink = sink
        self._clock_ms = clock_ms
        self._epoch_ms = 0
        self._t0 = 0.0
        self._tokens = itertools.count(1)
        self._waiters: dict[ReplyToken, PendingReply] = {}
        self._timers: dict[ShardTimerKey, int] = {}  # armed keys -> deadline (ms)
        self._queued: dict[ShardTimerKey, int] = {}  # armed keys -> their live heap entry
        self._heap: list[tuple[int, int, ShardTimerKey]] = []
        self._heap_seq = itertools.count()
        self._timer_scope: trio.CancelScope | None = None
        self._queue: list[Result] = []  # Results waiting for their records to be durable
        # Record-less Results queued behind an append (by id): what ran them, to run again
        # if that append fails.
        self._reruns: dict[int, tuple[CoreHandler[Any], RequestContext, Any, ReplyToken]] = {}
        self._reruns_due: set[int] = set()  # those answered while an append failed
        self._writing = False
        self._work = trio.Event()
        self._loaded = trio.Event()
        self._closed = False
        self.replayed_records = 0
        self.append_failures = 0
        #: The transaction coordinator's records met during replay, in log order (the
        #: transaction runtime takes them once the groups are loaded).
        self.transaction_records: list[Record] = []

    @property
    def dropped_events(self) -> int:
        """RebalanceEvent history records lost to failed appends (requests still succeeded)."""
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
        return self._epoch_ms + int((trio.current_time() - self._t0) * 1000)

    def _deadline_seconds(self, deadline_ms: int) -> float:
        # Half a millisecond late, so now_ms() at wake-up is never below the deadline.
        return self._t0 + (deadline_ms - self._epoch_ms) / 1000 + 0.0005

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Replay the sink, report started, then drive timers until cancelled.

        ``task_status.started()`` is called as soon as requests can be *accepted*; they wait
        for the end of replay (``loaded``) before reaching the core.
        """
        self._epoch_ms = self._clock_ms()
        self._t0 = trio.current_time()
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._persister)
                task_status.started()
                await self._load()
                await self._timer_loop()
        finally:
            self._closed = True
            for waiter in self._waiters.values():
                if waiter.event is not None:
                    waiter.event.set()

    async def _load(self) -> None:
        started = time.perf_counter()
        if self.sink.blocking_replay:
            count = await trio.to_thread.run_sync(self._replay_all, self.sink.replay())
        else:
            count = self._replay_all(self.sink.replay())
        self.replayed_records = count
        self._process(self.coordinator.on_loaded(self.now_ms()))
        self._loaded.set()
        log.info(
            "coordinator loaded: %d records replayed, %d groups, in %.1f ms",
            count,
            len(self.coordinator.group_ids()),
            (time.perf_counter() - started) * 1000,
        )

    def _replay_all(self, records: Iterable[Record]) -> int:
        replay = self.coordinator.replay
        transaction_records = self.transaction_records
        count = 0
        for record in records:
            if type(record.key) is TransactionStateKey:
                transaction_records.append(record)
            else:
                replay(record)
            count += 1
        return count

    async def append_records(self, records: Sequence[Record]) -> None:
        """Persist records no group decided on (the transaction coordinator's), in order with
        the group records, through the same queue and group commit; AppendFailed when the
        append failed."""
        waiter = _AppendWaiter()
        self._process(Result(tuple(records), (), (), (waiter,)))
        await waiter.done.wait()
        if waiter.error is not None:
            raise AppendFailed(waiter.error)

    def reload_groups(self, group_ids: Sequence[str]) -> None:
        """Unload and load ``group_ids`` again (their coordinator moved: parked joins and
        syncs are answered NOT_COORDINATOR, sessions re-armed; ``core.group_reload``)."""
        if group_ids:
            self._process(reload_groups(self.coordinator, group_ids, self.now_ms()))

    # ------------------------------------------------------------------ requests

    async def call(
        self, handler: CoreHandler[RequestT], ctx: RequestContext, request: RequestT
    ) -> Any:
        """Run one core handler and await its reply, which may be parked until a later
        request or timer completes it (the response: a dict the wire encodes)."""
        if not self._loaded.is_set():
            await self._loaded.wait()
        pending = self.submit(handler, ctx, request)
        assert pending is not None
        return await pending.wait()

    def submit(
        self, handler: CoreHandler[RequestT], ctx: RequestContext, request: RequestT
    ) -> PendingReply | None:
        """Run one core handler now and return its pending reply (None before the load
        finished: use ``call``). Requests submitted one after another reach the core, the
        log and their requesters in that order, so a connection can submit request N+1
        while N waits for its append (many commits per fsync from one connection)."""
        if self._closed:
            raise RuntimeClosed("the coordinator runtime has stopped")
        if not self._loaded.is_set():
            return None
        token = next(self._tokens)
        pending = PendingReply(token, self._waiters)
        self._waiters[token] = pending
        try:
            result = handler(self.coordinator, ctx, request, token, self.now_ms())
            if handler in _READS and (self._queue or self._writing):
                # Answered from state an append in flight may still lose: if that append
                # fails, the read is run again once the core has reverted.
                self._reruns[id(result)] = (handler, ctx, request, token)
            self._process(result)
        except BaseException:
            del self._waiters[token]
            raise
        return pending

    def answer_now_ms(self) -> int | None:
        """``now_ms()`` if a caller may answer a record-less request itself at once (loaded,
        open, no append queued or being written), else None: ``submit`` queues it then."""
        if self._queue or self._writing or self._closed or not self._loaded.is_set():
            return None
        return self.now_ms()

    def append_now(self, records: Sequence[Record]) -> bool | Exception:
        """Append ``records`` at once, as ``submit`` does when nothing is in flight (call only
        when ``answer_now_ms`` allows): True once written, False when the sink cannot write
        synchronously now (nothing written: use ``submit``), the error when the append
        failed (counted and logged as any failed append)."""
        try:
            return self.sink.append_nowait(records)
        except Exception as exc:
            self._append_failed(len(records), exc)
            return exc

    def _process(self, result: Result, *, settled: bool = False) -> None:
        """Apply one Result: timers now, records queued in order, replies when durable.
        ``settled``: the Result follows an append that just completed, so replies without
        records of their own reveal nothing undurable and go out at once."""
        if result.timers:
            self._apply_timers(result.timers)
        if result.records:
            if not (self._queue or self._writing):
                # Nothing in flight: a sink that can persist synchronously saves two task
                # switches (the persister's and the requester's wake-up).
                try:
                    done = self.sink.append_nowait(result.records)
                except Exception as exc:
                    self._append_failed(len(result.records), exc)
                    self._complete(result, exc)
                    return
                if done:
                    self._complete(result, None)
                    return
            self._queue.append(result)
            self._work.set()
        elif result.replies:
            if settled or not (self._queue or self._writing):
                self._deliver(result.replies)
            else:
                self._queue.append(result)
                self._work.set()

    def _complete(self, result: Result, error: Exception | None) -> None:
        """The append of ``result``'s records finished: let the core apply it (or answer
        the failure), deliver, and process what the core does next."""
        now = self.now_ms()
        try:
            if error is None:
                follow = self.coordinator.append_done(result, now)
                self._deliver(result.replies)
                if log.isEnabledFor(logging.INFO):
                    log_group_events(result.records)
            else:
                follow = self.coordinator.append_failed(result, append_error_of(error), now)
        except Exception:
            log.exception("the coordinator failed completing an append")
            return
        if follow.records or follow.replies or follow.timers:
            self._process(follow, settled=True)

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
            records = [record for result in batch for record in result.records]
            error: Exception | None = None
            if records:
                self._writing = True
                try:
                    await self.sink.append(records)
                except Exception as exc:
                    error = exc
                    self._append_failed(len(records), exc)
                finally:
                    self._writing = False
            if error is not None:  # every read answered meanwhile may show what it lost
                self._reruns_due.update(self._reruns)
            reruns = []
            for result in batch:
                if result.records:
                    self._complete(result, error)
                    continue
                rerun = self._reruns.pop(id(result), None)
                if rerun is not None and id(result) in self._reruns_due:
                    self._reruns_due.discard(id(result))
                    reruns.append((rerun, result))
                else:
                    self._deliver(result.replies)
            for (handler, ctx, request, token), first in reruns:
                try:
                    again = handler(self.coordinator, ctx, request, token, self.now_ms())
                except Exception:  # never leave the requester waiting
                    log.exception("re-running a read after a failed append failed")
                    again = first
                self._process(again, settled=True)

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
        """Arm/disarm keys. The heap is lazy: each armed key has one live heap entry at or
        before its deadline (``_queued``); pushing a later deadline (every heartbeat does)
        only updates the dict, and the entry is moved when it comes up."""
        arm = self.arm_timer
        for change in changes:
            if isinstance(change, ScheduleTimer):
                arm(change.key, change.deadline_ms)
            else:
                self._timers.pop(change.key, None)

    def arm_timer(self, key: ShardTimerKey, deadline_ms: int) -> None:
        """Arm ``key`` at ``deadline_ms``, replacing its deadline (a ScheduleTimer's change)."""
        self._timers[key] = deadline_ms
        entry = self._queued.get(key)
        if entry is None or entry > deadline_ms:
            self._push(key, deadline_ms)

    def _push(self, key: ShardTimerKey, deadline: int) -> None:
        self._queued[key] = deadline
        heap = self._heap
        heapq.heappush(heap, (deadline, next(self._heap_seq), key))
        scope = self._timer_scope
        if scope is not None:
            at = self._deadline_seconds(deadline)
            if at < scope.deadline:
                scope.deadline = at
        if len(heap) > _HEAP_MIN_REBUILD and len(heap) > _HEAP_SLACK * len(self._queued):
            self._heap = [(d, next(self._heap_seq), k) for k, d in self._queued.items()]
            heapq.heapify(self._heap)

    def armed_timers(self) -> dict[ShardTimerKey, int]:
        """The armed timers and their deadlines (ms), for tests and diagnostics."""
        return dict(self._timers)

    def _pop_live(self, now: int) -> tuple[ShardTimerKey, int] | None:
        """The next armed key whose deadline has passed, or None."""
        while self._heap and self._heap[0][0] <= now:
            entry, _, key = heapq.heappop(self._heap)  # (_push may rebuild self._heap)
            if self._queued.get(key) != entry:
                continue  # superseded by an earlier push
            del self._queued[key]
            deadline = self._timers.get(key)
            if deadline is None:
                continue  # cancelled
            if deadline > now:
                self._push(key, deadline)  # rescheduled later: wait for the new deadline
                continue
            del self._timers[key]
            return key, deadline
        return None

    def _fire_due(self) -> None:
        now = self.now_ms()
        while (due := self._pop_live(now)) is not None:
            key, deadline = due
            log.debug("timer %r fired (deadline %d, now %d)", key, deadline, now)
            if isinstance(key, TxnTimerKey):
                continue  # the transaction runtime arms its own
            try:
                result = self.coordinator.fire_timer(key, now)
            except Exception:
                log.exception("the coordinator failed handling timer %r", key)
                continue
            self._process(result)

    def _next_deadline_seconds(self) -> float:
        heap = self._heap
        while heap and self._queued.get(heap[0][2]) != heap[0][0]:
            heapq.heappop(heap)
        return self._deadline_seconds(heap[0][0]) if heap else float("inf")

    async def _timer_loop(self) -> None:
        while True:
            self._fire_due()
            with trio.CancelScope(deadline=self._next_deadline_seconds()) as scope:
                self._timer_scope = scope
                await trio.sleep_forever()
            self._timer_scope = None


_EVENT_LOG = {
    "rebalance_start": "Preparing to rebalance group %s in generation %d (reason: %s).",
    "member_expired": "Member %s in group %s has been removed (reason: %s).",
    "rebalance_end": "Stabilized group %s generation %d with %d members.",
    "group_deleted": "Group %s deleted.",
}


def log_group_events(records: Iterable[Record]) -> None:
    """The group lifecycle at INFO, as Kafka's coordinator logs it, from the history records
    that just reached the log (rebalance start and end, expired members, deletions)."""
    for record in records:
        key, value = record.key, record.value
        if not isinstance(key, RebalanceEventKey) or not isinstance(value, RebalanceEventValue):
            continue
        event = value.event
        if event == "rebalance_start":
            log.info(_EVENT_LOG[event], key.group, value.generation, value.reason or "unknown")
        elif event in ("member_expired", "member_leave"):
            log.info(_EVENT_LOG["member_expired"], value.member_id, key.group,
                     value.reason or "left the group")
        elif event == "rebalance_end":
            log.info(_EVENT_LOG[event], key.group, value.generation, len(value.members))
        elif event == "group_deleted":
            log.info(_EVENT_LOG[event], key.group)


class GroupApi:
    """The server handler of a group API: the decoded request goes to the core as it is
    (the core reads it through its TypedDict), and the core's answer back to the wire.
    ``submit`` hands the request to the core at once and returns the pending reply (a
    connection pipelining requests collects it later), or None before the load finished."""

    __slots__ = ("__name__", "__qualname__", "handler")

    def __init__(self, handler: CoreHandler[Any]) -> None:
        self.handler = handler
        self.__name__ = handler.__name__
        self.__qualname__ = f"group_api({handler.__name__})"

    async def __call__(self, ctx: ServerRequestContext, request: wire.DecodedRequest) -> Any:
        runtime: CoordinatorRuntime = ctx.state.groups
        return await runtime.call(self.handler, ctx, request.body)

    def submit(
        self, ctx: ServerRequestContext, request: wire.DecodedRequest
    ) -> PendingReply | None:
        runtime: CoordinatorRuntime = ctx.state.groups
        return runtime.submit(self.handler, ctx, request.body)


def group_api(handler: CoreHandler[Any]) -> Handler:
    """``handler`` as a server handler (``GroupApi``)."""
    return GroupApi(handler)
