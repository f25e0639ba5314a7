"""Side by side: the steady ConsumerGroupHeartbeat answered inline (the core's ``at_once``
Result, ``CoordinatorRuntime.submit`` answering it before it returns) and the same requests
through the runtime's queue (``answers_at_once`` off) give the same answers, the same bytes
in the log and the same armed timers, step by step, over random sequences of joins, steady
heartbeats (at the member's epoch, a stale one, an unknown member), leaves, topic growth
(the group no longer current) and clock moves.

Two servers in one trio run on one MockClock, each with its own data directory and the same
fixed wall clock; member ids are the client's (KIP-848 v1), so both see the same ids."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import trio
import trio.testing
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from raw_client import create_topics, jump, settle

import wire
from coordinator.server.app import RunningServer, serve
from coordinator.server.context import RequestContext
from coordinator.server.options import build_options
from coordinator.server.runtime import CoordinatorRuntime, PendingReply
from coordinator.server.waiters import ReadyReply
from wire import fast_codec

CGH = 68
WALL_MS = 1_700_000_000_000
GROUP = "g"
MEMBERS = ("m-1", "m-2", "m-3")


class Kcoord:
    """An in-process server driven through its ConsumerGroupHeartbeat handler."""

    def __init__(self, running: RunningServer, data_dir: str) -> None:
        self.state = running.server
        self.data_dir = data_dir
        self.correlation_id = 0
        self.epochs: dict[str, int] = {}  # each member's last answered epoch

    @property
    def runtime(self) -> CoordinatorRuntime:
        runtime: CoordinatorRuntime = self.state.groups
        return runtime

    async def heartbeat(self, body: dict[str, Any]) -> tuple[Any, Any]:
        """(the pending reply, the answer) of one request, decoded as a connection does."""
        self.correlation_id += 1
        payload = wire.encode_request(CGH, 1, self.correlation_id, "c", body)[4:]
        request = fast_codec.decode_request(payload)
        ctx = RequestContext(self.state, 1, "/127.0.0.1", request.client_id,
                             request.api_version, request.correlation_id)
        pending = self.state.handlers[CGH].submit(ctx, request)
        answer = pending.result() if pending.ready() else await pending.wait()
        if answer["error_code"] == 0:
            self.epochs[body["member_id"]] = answer["member_epoch"]
        return pending, answer

    def log_bytes(self) -> bytes:
        return b"".join(path.read_bytes() for path in sorted(Path(self.data_dir).glob("*.log")))


async def _start(nursery: trio.Nursery, data_dir: str, *, at_once: bool) -> Kcoord:
    options = build_options({"group.initial.rebalance.delay.ms": "0"}, host="127.0.0.1",
                            port=0, data_dir=data_dir, fsync="interval",
                            clock_ms=lambda: WALL_MS)
    running: RunningServer = await nursery.start(serve, options)
    kcoord = Kcoord(running, data_dir)
    kcoord.runtime.answers_at_once = at_once
    create_topics(kcoord.state.topics, (("t", 4), ("u", 2)))  # the same ids on both
    return kcoord


def _body(kcoord: Kcoord, step: tuple[Any, ...]) -> dict[str, Any] | None:
    kind, member = step[0], step[1]
    if kind == "join":
        return {"group_id": GROUP, "member_id": member, "member_epoch": 0,
                "rebalance_timeout_ms": 30_000, "subscribed_topic_names": list(step[2]),
                "topic_partitions": []}
    if kind == "leave":
        return {"group_id": GROUP, "member_id": member, "member_epoch": -1}
    epoch = kcoord.epochs.get(member, 1)
    epoch = {"current": epoch, "stale": epoch - 1, "ahead": epoch + 1}[step[2]]
    return {"group_id": GROUP, "member_id": member, "member_epoch": epoch}  # steady


STEADY = st.tuples(st.just("steady"), st.sampled_from(MEMBERS),
                   st.sampled_from(["current"] * 6 + ["stale", "ahead"]))
STEPS = st.one_of(
    st.tuples(st.just("join"), st.sampled_from(MEMBERS),
              st.sampled_from([("t",), ("t", "u"), ("u",)])),
    STEADY, STEADY, STEADY,
    st.tuples(st.just("leave"), st.sampled_from(MEMBERS)),
    st.tuples(st.just("jump"), st.sampled_from([0.5, 3.0, 50.0])),  # 50 s: sessions expire
    st.tuples(st.just("grow"), st.sampled_from(["t", "u"])),
)


async def _scenario(steps: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as a_dir, tempfile.TemporaryDirectory() as b_dir:
        async with trio.open_nursery() as nursery:
            fast = await _start(nursery, a_dir, at_once=True)
            slow = await _start(nursery, b_dir, at_once=False)
            for step in steps:
                if step[0] == "jump":
                    await jump(step[1])
                    await settle(fast.runtime, slow.runtime)
                    assert fast.runtime.armed_timers() == slow.runtime.armed_timers()
                    assert fast.log_bytes() == slow.log_bytes()
                    continue
                if step[0] == "grow":
                    for kcoord in (fast, slow):
                        topic = kcoord.state.topics.get(step[1])
                        kcoord.state.topics.add_partitions(step[1], len(topic.partitions) + 1)
                    continue
                kinds, answers, appended = [], [], []
                for kcoord in (fast, slow):
                    body = _body(kcoord, step)
                    assert body is not None
                    before = len(kcoord.log_bytes())
                    pending, answer = await kcoord.heartbeat(body)
                    kinds.append(type(pending))
                    answers.append(answer)
                    appended.append(kcoord.log_bytes()[before:])
                assert kinds[1] is PendingReply  # the queue's way throughout
                event(f"{step[0]} answered inline: {kinds[0] is ReadyReply}")
                if kinds[0] is ReadyReply:
                    assert step[0] == "steady" and not appended[0]
                assert answers[0] == answers[1]
                assert fast_codec.encode_response(CGH, 1, 7, answers[0]) == \
                    wire.encode_response(CGH, 1, 7, dict(answers[1]))
                assert appended[0] == appended[1]
                assert fast.runtime.armed_timers() == slow.runtime.armed_timers()
            assert fast.runtime.coordinator.hard_state() == slow.runtime.coordinator.hard_state()
            nursery.cancel_scope.cancel()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STEPS, min_size=1, max_size=12))
def test_steady_heartbeats_inline_as_queued(steps: list[tuple[Any, ...]]) -> None:
    trio.run(_scenario, steps, clock=trio.testing.MockClock())


def test_steady_heartbeats_are_answered_inline() -> None:
    """The property above is not vacuous: a member's steady heartbeats take the inline
    answer."""
    steps: list[tuple[Any, ...]] = [("join", "m-1", ("t",)), ("steady", "m-1", "current"),
                                    ("jump", 3.0), ("steady", "m-1", "current")]
    seen: list[type] = []

    async def run() -> None:
        with tempfile.TemporaryDirectory() as a_dir:
            async with trio.open_nursery() as nursery:
                fast = await _start(nursery, a_dir, at_once=True)
                for step in steps:
                    if step[0] == "jump":
                        await jump(step[1])
                        continue
                    body = _body(fast, step)
                    assert body is not None
                    pending, answer = await fast.heartbeat(body)
                    assert answer["error_code"] == 0
                    seen.append(type(pending))
                nursery.cancel_scope.cancel()

    trio.run(run, clock=trio.testing.MockClock())
    assert seen[1:] == [ReadyReply, ReadyReply]
