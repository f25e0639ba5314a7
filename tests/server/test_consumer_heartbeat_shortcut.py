"""The steady ConsumerGroupHeartbeat answered inline (the core's ``at_once`` Result, which
the runtime answers before ``submit`` returns) answers exactly as the same request queued
through the runtime: the same answer and the same session deadline, no record. Only a
steady request (every optional field null) of a member Stable at the group epoch, in a
group current against the broker's topics, with the consumer protocol enabled and no
append in flight is answered inline; everything else takes the queue (a
``PendingReply``). A fault armed for another API leaves the fast lane on.

The clock is trio's MockClock (time moves only when a test jumps it: each test takes the
``mock_clock`` fixture, which pytest-trio runs it with), so deadlines compare exactly."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import trio
import trio.testing

import wire
from coordinator.core.consumer import MemberState
from coordinator.core.consumer.heartbeat import handle_consumer_group_heartbeat
from coordinator.core.timers import ConsumerSessionTimerKey
from coordinator.server.app import RunningServer, serve
from coordinator.server.context import RequestContext
from coordinator.server.faults import FaultInjector
from coordinator.server.options import build_options
from coordinator.server.runtime import CoordinatorRuntime, PendingReply
from coordinator.server.waiters import ReadyReply
from wire import fast_codec
from wire.consumer_group_heartbeat_codec import SteadyRequestBody

pytestmark = pytest.mark.trio

CGH = 68
GROUP = "g"
SESSION_MS = 45_000  # group.consumer.session.timeout.ms's default
INTERVAL_MS = 5_000  # group.consumer.heartbeat.interval.ms's default
UNSUPPORTED_VERSION = 35


class Kcoord:
    """An in-process server driven through its ConsumerGroupHeartbeat handler, as a
    connection drives it (decoded by the connection's decoder)."""

    def __init__(self, running: RunningServer) -> None:
        self.state = running.server
        self.handler = self.state.handlers[CGH]
        self.correlation_id = 0

    @property
    def runtime(self) -> CoordinatorRuntime:
        runtime: CoordinatorRuntime = self.state.groups
        return runtime

    def request(self, version: int = 1, **body: Any) -> tuple[RequestContext, Any]:
        self.correlation_id += 1
        payload = wire.encode_request(CGH, version, self.correlation_id, "client", body)[4:]
        request = fast_codec.decode_request(payload)
        ctx = RequestContext(self.state, 1, "/127.0.0.1", request.client_id,
                             request.api_version, request.correlation_id)
        return ctx, request

    async def call(self, **body: Any) -> Any:
        ctx, request = self.request(**body)
        return await self.handler(ctx, request)

    async def join(self, member_id: str) -> Any:
        return await self.call(group_id=GROUP, member_id=member_id, member_epoch=0,
                               rebalance_timeout_ms=30_000, subscribed_topic_names=["t"],
                               topic_partitions=[])

    async def submit(self, member_id: str, epoch: int) -> tuple[Any, Any, dict[Any, int]]:
        """(the pending reply, the answer, the armed timers) of a steady heartbeat."""
        ctx, request = self.request(group_id=GROUP, member_id=member_id, member_epoch=epoch)
        assert type(request.body) is SteadyRequestBody
        pending = self.handler.submit(ctx, request)
        answer = pending.result() if pending.ready() else await pending.wait()
        return pending, answer, self.runtime.armed_timers()

    async def full_path(self, member_id: str, epoch: int) -> tuple[Any, dict[Any, int]]:
        """(the answer, the armed timers) of the same request through the core's handler
        and the runtime (the path before the shortcut)."""
        ctx, request = self.request(group_id=GROUP, member_id=member_id, member_epoch=epoch)
        self.runtime.answers_at_once = False
        try:
            pending = self.runtime.submit(handle_consumer_group_heartbeat, ctx, request.body)
        finally:
            self.runtime.answers_at_once = True
        assert type(pending) is PendingReply
        return await pending.wait(), self.runtime.armed_timers()

    def records(self) -> int:
        return len(self.runtime.sink.records)  # data_dir None: a MemorySink


@pytest.fixture
async def kcoord(nursery: trio.Nursery) -> Kcoord:
    options = build_options({"group.initial.rebalance.delay.ms": "0"}, host="127.0.0.1",
                            port=0, data_dir=None, topics=(("t", 4),), faults=FaultInjector())
    running: RunningServer = await nursery.start(serve, options)
    return Kcoord(running)


async def _stable_member(kcoord: Kcoord, member_id: str) -> int:
    joined = await kcoord.join(member_id)
    assert joined["error_code"] == 0, joined
    epoch: int = joined["member_epoch"]
    pending, answer, _ = await kcoord.submit(member_id, epoch)
    assert type(pending) is ReadyReply, answer  # Stable at once: one member, nothing to revoke
    return epoch


def _session(member_id: str) -> ConsumerSessionTimerKey:
    return ConsumerSessionTimerKey(GROUP, member_id)


async def test_steady_heartbeat_answers_and_rearms_as_the_full_path(
    kcoord: Kcoord, mock_clock: trio.testing.MockClock
) -> None:
    epoch = await _stable_member(kcoord, "m-1")
    now = kcoord.runtime.now_ms()
    for _ in range(2):
        mock_clock.jump(1.5)
        assert kcoord.runtime.now_ms() == now + 1_500  # the session moves with the clock
        now += 1_500
        before = kcoord.records()
        pending, answer, timers = await kcoord.submit("m-1", epoch)
        assert type(pending) is ReadyReply  # the shortcut answered
        assert answer == {"error_code": 0, "member_id": "m-1", "member_epoch": epoch,
                          "heartbeat_interval_ms": INTERVAL_MS}
        assert timers[_session("m-1")] == now + SESSION_MS
        full_answer, full_timers = await kcoord.full_path("m-1", epoch)
        assert full_answer == answer
        assert full_timers == timers
        assert kcoord.records() == before  # a steady heartbeat writes nothing


async def test_member_whose_epoch_moved_takes_the_full_path(
    kcoord: Kcoord, mock_clock: trio.testing.MockClock
) -> None:
    epoch = await _stable_member(kcoord, "m-1")
    joined = await kcoord.join("m-2")  # the group epoch moves; m-1 must give partitions up
    assert joined["error_code"] == 0
    answers = []
    for _ in range(2):  # m-1 is no longer Stable at the group epoch: the handler answers
        pending, answer, timers = await kcoord.submit("m-1", epoch)
        assert type(pending) is PendingReply
        assert answer["error_code"] == 0 and answer["member_epoch"] == epoch
        assert timers[_session("m-1")] == kcoord.runtime.now_ms() + SESSION_MS
        answers.append(answer)
    answer = answers[0]  # the first carries the partitions m-1 keeps
    # m-1 acknowledges the revocation (owning only what it keeps) and moves to the new
    # epoch, Stable there: the shortcut answers it again, as the handler would.
    owned = [{"topic_id": tp["topic_id"], "partitions": tp["partitions"]}
             for tp in answer["assignment"]["topic_partitions"]]
    moved = await kcoord.call(group_id=GROUP, member_id="m-1", member_epoch=epoch,
                              topic_partitions=owned)
    new_epoch = moved["member_epoch"]
    assert moved["error_code"] == 0 and new_epoch > epoch
    pending, answer, timers = await kcoord.submit("m-1", new_epoch)
    assert type(pending) is ReadyReply
    assert answer["member_epoch"] == new_epoch
    full_answer, full_timers = await kcoord.full_path("m-1", new_epoch)
    assert (full_answer, full_timers) == (answer, timers)
    pending, answer, _ = await kcoord.submit("m-1", epoch)  # the old epoch: the handler
    assert type(pending) is PendingReply


async def test_member_not_stable_at_the_group_epoch_takes_the_full_path(
    kcoord: Kcoord, mock_clock: trio.testing.MockClock
) -> None:
    """A joiner waiting for partitions another member still owns is at the group epoch but
    not Stable: its steady heartbeats take the handler, which hands it the partitions once
    they are released (a kept steady answer would leave it without them)."""
    epoch = await _stable_member(kcoord, "m-1")
    joined = await kcoord.join("m-2")
    new_epoch = joined["member_epoch"]
    group = kcoord.runtime.coordinator.consumer_groups[GROUP]
    assert group.group_epoch == new_epoch
    assert group.members["m-2"].current.state is MemberState.UNRELEASED_PARTITIONS
    pending, answer, _ = await kcoord.submit("m-2", new_epoch)
    assert type(pending) is PendingReply and "assignment" not in answer
    revoking = (await kcoord.submit("m-1", epoch))[1]
    owned = [{"topic_id": tp["topic_id"], "partitions": tp["partitions"]}
             for tp in revoking["assignment"]["topic_partitions"]]
    released = await kcoord.call(group_id=GROUP, member_id="m-1", member_epoch=epoch,
                                 topic_partitions=owned)
    assert released["error_code"] == 0
    pending, answer, _ = await kcoord.submit("m-2", new_epoch)
    assert type(pending) is PendingReply
    assert answer["assignment"]["topic_partitions"][0]["partitions"]
    pending, _, _ = await kcoord.submit("m-2", new_epoch)  # Stable now
    assert type(pending) is ReadyReply


async def test_heartbeat_that_changes_something_takes_the_full_path(
    kcoord: Kcoord, mock_clock: trio.testing.MockClock
) -> None:
    epoch = await _stable_member(kcoord, "m-1")
    before = kcoord.records()
    ctx, request = kcoord.request(group_id=GROUP, member_id="m-1", member_epoch=epoch,
                                  rebalance_timeout_ms=20_000)
    assert type(request.body) is not SteadyRequestBody
    pending = kcoord.handler.submit(ctx, request)
    assert type(pending) is PendingReply
    answer = pending.result() if pending.ready() else await pending.wait()
    assert answer["error_code"] == 0
    assert kcoord.records() == before + 1  # the member's new metadata
    member = kcoord.runtime.coordinator.consumer_groups[GROUP].members["m-1"]
    assert member.rebalance_timeout_ms == 20_000


async def test_stale_epoch_and_unknown_member_take_the_full_path(
    kcoord: Kcoord, mock_clock: trio.testing.MockClock
) -> None:
    epoch = await _stable_member(kcoord, "m-1")
    pending, answer, _ = await kcoord.submit("m-1", epoch + 1)
    assert type(pending) is PendingReply and answer["error_code"] == 110  # FENCED_MEMBER_EPOCH
    pending, answer, _ = await kcoord.submit("nobody", epoch)
    assert type(pending) is PendingReply and answer["error_code"] == 25  # UNKNOWN_MEMBER_ID


async def test_config_change_is_followed(
    kcoord: Kcoord, mock_clock: trio.testing.MockClock
) -> None:
    epoch = await _stable_member(kcoord, "m-1")
    manager = kcoord.runtime.coordinator
    manager.config = dataclasses.replace(manager.config, group_consumer_heartbeat_interval_ms=6_000,
                                        group_consumer_session_timeout_ms=50_000)
    now = kcoord.runtime.now_ms()
    pending, answer, timers = await kcoord.submit("m-1", epoch)
    assert type(pending) is ReadyReply
    assert answer["heartbeat_interval_ms"] == 6_000
    assert timers[_session("m-1")] == now + 50_000
    full_answer, full_timers = await kcoord.full_path("m-1", epoch)
    assert (full_answer, full_timers) == (answer, timers)
    manager.config = dataclasses.replace(manager.config,
                                        group_coordinator_rebalance_protocols="classic")
    pending, answer, _ = await kcoord.submit("m-1", epoch)
    assert type(pending) is PendingReply
    assert answer["error_code"] == UNSUPPORTED_VERSION


async def test_group_made_not_current_by_a_topic_change(
    kcoord: Kcoord, mock_clock: trio.testing.MockClock
) -> None:
    epoch = await _stable_member(kcoord, "m-1")
    kcoord.state.topics.add_partitions("t", 6)  # the subscribed topic grows
    before = kcoord.records()
    pending, answer, _ = await kcoord.submit("m-1", epoch)
    assert type(pending) is PendingReply  # the full path bumps the group epoch
    assert answer["member_epoch"] > epoch
    assert len(answer["assignment"]["topic_partitions"][0]["partitions"]) == 6
    assert kcoord.records() > before


async def test_fault_for_another_api_keeps_the_fast_lane(
    kcoord: Kcoord, mock_clock: trio.testing.MockClock
) -> None:
    epoch = await _stable_member(kcoord, "m-1")
    kcoord.state.faults.add("OffsetCommit", error_code=15)  # matches no heartbeat
    pending, answer, _ = await kcoord.submit("m-1", epoch)
    assert type(pending) is ReadyReply
    assert answer["error_code"] == 0 and answer["member_epoch"] == epoch


async def test_append_in_flight_takes_the_full_path(
    kcoord: Kcoord, mock_clock: trio.testing.MockClock
) -> None:
    """A reply without records is not given before an append queued ahead of it is
    durable: with one in flight the heartbeat is queued behind it, as before."""
    epoch = await _stable_member(kcoord, "m-2")
    runtime = kcoord.runtime
    runtime._writing = True  # an append being written (the persister's flag)
    try:
        ctx, request = kcoord.request(group_id=GROUP, member_id="m-2", member_epoch=epoch)
        pending = kcoord.handler.submit(ctx, request)
        assert type(pending) is PendingReply
        assert not pending.ready()  # waits behind the append
    finally:
        runtime._writing = False
    assert (await pending.wait())["error_code"] == 0
    pending, _, _ = await kcoord.submit("m-2", epoch)
    assert type(pending) is ReadyReply
