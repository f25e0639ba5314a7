"""Side by side: a server whose idle connections park in the ready reactor (``reactor.py``)
and one whose connections are served by their own tasks only answer the same requests over
TCP with the same bytes, write the same bytes to their logs and arm the same timers, over
random sequences of pipelined batches (several frames in one write) on two connections --
OffsetCommits to simple groups, steady and full ConsumerGroupHeartbeats, Heartbeats,
OffsetFetches and ListGroups between them -- and clock moves.

The two servers run one after the other, each in its own trio run on a MockClock that moves
only when a step jumps it, with the same fixed wall clock and the same topic ids; member
ids are the client's (KIP-848 v1), so every byte is comparable."""

from __future__ import annotations

import signal
import tempfile
from pathlib import Path
from typing import Any

import trio
import trio.testing
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from raw_client import (
    HEARTBEAT,
    LIST_GROUPS,
    OFFSET_COMMIT,
    OFFSET_FETCH,
    RawClient,
    create_topics,
    jump,
    settle,
)

from coordinator.server import connection, reactor
from coordinator.server.app import RunningServer, serve
from coordinator.server.options import build_options
from coordinator.server.runtime import CoordinatorRuntime
from wire import decode_response

CGH = 68
WALL_MS = 1_700_000_000_000
MEMBERS = ("m-1", "m-2")


def _commit(group: str, partition: int, offset: int) -> tuple[int, int, dict[str, Any]]:
    return OFFSET_COMMIT, 8, {
        "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
        "group_instance_id": None, "topics": [{"name": "t", "partitions": [
            {"partition_index": partition, "committed_offset": offset,
             "committed_leader_epoch": -1, "committed_metadata": ""}]}]}


REQUESTS = st.one_of(
    st.builds(_commit, st.sampled_from(["s1", "s2"]), st.integers(0, 3), st.integers(0, 99)),
    st.tuples(st.just(CGH), st.just(1), st.sampled_from(MEMBERS), st.sampled_from(
        ["join", "steady", "steady", "steady", "stale"])),
    st.just((HEARTBEAT, 4, {"group_id": "s1", "generation_id": 1, "member_id": "x",
                            "group_instance_id": None})),
    st.just((OFFSET_FETCH, 7, {"group_id": "s1", "topics": None, "require_stable": True})),
    st.just((LIST_GROUPS, 4, {"states_filter": []})),
)
STEPS = st.one_of(
    st.tuples(st.just("batch"), st.integers(0, 1), st.lists(REQUESTS, min_size=1, max_size=6)),
    st.tuples(st.just("jump"), st.sampled_from([1.0, 50.0])),
)


def _body(request: tuple[Any, ...], epochs: dict[str, int]) -> tuple[int, int, Any]:
    api_key, version, *rest = request
    if api_key != CGH:
        return api_key, version, rest[0]
    member, kind = rest
    if kind == "join":
        return CGH, 1, {"group_id": "cg", "member_id": member, "member_epoch": 0,
                        "rebalance_timeout_ms": 30_000, "subscribed_topic_names": ["t"],
                        "topic_partitions": []}
    epoch = epochs.get(member, 1) - (1 if kind == "stale" else 0)
    return CGH, 1, {"group_id": "cg", "member_id": member, "member_epoch": epoch}


async def _run(steps: list[tuple[Any, ...]]) -> dict[str, Any]:
    """Serve ``steps``; the answers' bytes, the log's bytes, the armed timers, and how many
    turns the reactor served."""
    answers: list[bytes] = []
    timers: list[Any] = []
    with tempfile.TemporaryDirectory() as data_dir:
        async with trio.open_nursery() as nursery:
            options = build_options({"group.initial.rebalance.delay.ms": "0"},
                                    host="127.0.0.1", port=0, data_dir=data_dir,
                                    fsync="interval", clock_ms=lambda: WALL_MS)
            running: RunningServer = await nursery.start(serve, options)
            create_topics(running.server.topics, (("t", 4),))
            runtime: CoordinatorRuntime = running.server.groups
            clients = [await RawClient.connect(running.port) for _ in range(2)]
            epochs: dict[str, int] = {}
            for step in steps:
                if step[0] == "jump":
                    await jump(step[1])
                    await settle(runtime)
                    timers.append(sorted(runtime.armed_timers().items(), key=repr))
                    continue
                client = clients[step[1]]
                sent = [_body(request, epochs) for request in step[2]]
                data = b"".join(client.frame(key, version, body)[1]
                                for key, version, body in sent)
                await client.stream.send_all(data)  # one write: the server reads a batch
                for key, _version, _ in sent:
                    payload = await client.recv_frame()  # (bounded by _serve's alarm)
                    assert payload is not None
                    answers.append(payload)
                    if key == CGH:
                        _, answer = decode_response(CGH, 1, payload)
                        if answer.error_code == 0:
                            epochs[answer.member_id] = answer.member_epoch
                timers.append(sorted(runtime.armed_timers().items(), key=repr))
            for client in clients:
                await client.aclose()
            current = reactor.current_reactor()
            served = 0 if current is None else current.served
            nursery.cancel_scope.cancel()
        log = b"".join(path.read_bytes() for path in sorted(Path(data_dir).glob("*.log")))
    return {"answers": answers, "log": log, "timers": timers, "served": served}


class _TooLong(Exception):
    pass


def _too_long(signum: int, frame: Any) -> None:
    raise _TooLong("a side-by-side run took more than 60 s")


def _serve(steps: list[tuple[Any, ...]], use_reactor: bool) -> dict[str, Any]:
    """``_run`` with or without the reactor, bounded in real time (the MockClock does not
    move by itself, so trio's timeouts would not)."""
    original = connection.current_reactor  # type: ignore[attr-defined]
    if not use_reactor:
        setattr(connection, "current_reactor", lambda: None)  # noqa: B010
    previous = signal.signal(signal.SIGALRM, _too_long)
    signal.alarm(60)
    try:
        out: dict[str, Any] = trio.run(_run, steps, clock=trio.testing.MockClock())
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        setattr(connection, "current_reactor", original)  # noqa: B010
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STEPS, min_size=1, max_size=8))
def test_reactor_answers_as_the_connection_task(steps: list[tuple[Any, ...]]) -> None:
    with_reactor = _serve(steps, use_reactor=True)
    without = _serve(steps, use_reactor=False)
    assert without["served"] == 0
    event(f"reactor served: {with_reactor['served'] > 0}")
    assert with_reactor["answers"] == without["answers"]
    assert with_reactor["log"] == without["log"]
    assert with_reactor["timers"] == without["timers"]


def test_the_reactor_serves_these_requests() -> None:
    """The property above is not vacuous: an idle connection's commits and steady
    heartbeats are served from the reactor."""
    steps: list[tuple[Any, ...]] = [
        ("batch", 0, [(CGH, 1, "m-1", "join")]),
        ("batch", 0, [_commit("s1", 0, 1)]),
        ("batch", 0, [(CGH, 1, "m-1", "steady"), _commit("s1", 1, 2)]),
    ]
    assert _serve(steps, use_reactor=True)["served"] >= 2
