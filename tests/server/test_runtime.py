"""The coordinator runtime: persistence order, failed appends, dropped replies, restarts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
import trio
from raw_client import JOIN_GROUP, OFFSET_COMMIT, OFFSET_FETCH, join, join_body, sync

from coordinator.config import CoordinatorConfig
from coordinator.core import (
    GroupCoordinator,
    HeartbeatTimerKey,
    LocalContext,
    OffsetCommitRequest,
    RetentionTimerKey,
    handle_join_group,
    handle_offset_commit,
)
from coordinator.server.app import RunningServer, serve
from coordinator.server.options import build_options
from coordinator.server.runtime import CoordinatorRuntime
from coordinator.server.sink import MemorySink
from storage.records import Record

pytestmark = pytest.mark.trio


V8 = LocalContext(api_version=8)


def _commit(group: str, offset: int) -> OffsetCommitRequest:
    return {
        "group_id": group,
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "group_instance_id": None,
        "retention_time_ms": -1,
        "topics": [
            {
                "name": "t",
                "partitions": [
                    {
                        "partition_index": 0,
                        "committed_offset": offset,
                        "committed_leader_epoch": -1,
                        "commit_timestamp": -1,
                        "committed_metadata": "",
                    }
                ],
            }
        ],
    }


class SlowSink(MemorySink):
    """Appends that take a while."""

    def __init__(self) -> None:
        super().__init__()
        self.started: list[int] = []

    async def append(self, records: Sequence[Record]) -> None:
        self.started.append(len(records))
        await trio.sleep(0.01)
        await super().append(records)


async def test_replies_wait_for_their_records_and_keep_order(nursery: trio.Nursery) -> None:
    sink = SlowSink()
    runtime = CoordinatorRuntime(GroupCoordinator(CoordinatorConfig(), lambda: "u"), sink)
    await nursery.start(runtime.run)
    done: list[int] = []

    async def commit(offset: int) -> None:
        resp = await runtime.call(handle_offset_commit, V8, _commit("g", offset))
        assert resp["topics"][0]["partitions"][0]["error_code"] == 0
        # Answered only once durable.
        assert any(getattr(r.value, "offset", None) == offset for r in sink.records)
        done.append(offset)

    async with trio.open_nursery() as inner:
        for offset in range(5):
            inner.start_soon(commit, offset)
            await trio.sleep(0)
    assert sorted(done) == [0, 1, 2, 3, 4]  # (tasks wake in Trio's order)
    assert [r.value.offset for r in sink.records] == [0, 1, 2, 3, 4]  # type: ignore[union-attr]


async def test_failed_append_answers_kafka_storage_error(start_server: Any, connect: Any) -> None:
    sink = MemorySink()
    running = await start_server(sink=sink)
    client = await connect(running.port)
    sink.fail_with = lambda records: OSError(28, "No space left on device")
    body = {
        "group_id": "full-disk",
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 1}]}],
    }
    resp = await client.request(OFFSET_COMMIT, 8, body)
    assert resp.topics[0].partitions[0].error_code == 16  # NOT_COORDINATOR, as Kafka answers
    assert running.runtime.append_failures == 1
    sink.fail_with = None
    resp = await client.request(OFFSET_COMMIT, 8, body)
    assert resp.topics[0].partitions[0].error_code == 0


async def test_reply_to_a_closed_connection_is_dropped(server: RunningServer, connect: Any) -> None:
    a = await connect(server.port)
    joined_a = await join(a, "dropper")
    await sync(a, "dropper", joined_a)
    b = await connect(server.port)
    first = await b.request(JOIN_GROUP, 7, join_body("dropper"))
    await b.send(JOIN_GROUP, 7, join_body("dropper", first.member_id))
    await trio.sleep(0.05)
    await b.aclose()  # B's JoinGroup is parked; its connection goes away
    await trio.sleep(0.05)
    with trio.fail_after(5):
        rejoined = await a.request(JOIN_GROUP, 7, join_body("dropper", joined_a.member_id))
    assert rejoined.error_code == 0
    # B's parked task gets its reply, fails to send it and goes away: nothing left waiting.
    with trio.fail_after(5):
        while server.runtime._waiters or server.server.open_connections > 1:
            await trio.sleep(0.01)


async def test_restart_replays_offsets_and_groups(nursery: trio.Nursery, connect: Any) -> None:
    sink = MemorySink()
    options = build_options(
        {"group.initial.rebalance.delay.ms": "0"},
        host="127.0.0.1",
        port=0,
        data_dir=None,
        topics=(("t", 4),),
        sink=sink,
    )
    with trio.CancelScope() as first_run:
        async with trio.open_nursery() as inner:
            running: RunningServer = await inner.start(serve, options)
            client = await connect(running.port)
            joined = await join(client, "survivor", session_timeout_ms=30_000)
            await sync(client, "survivor", joined, b"mine")
            commit = {
                "group_id": "survivor",
                "generation_id_or_member_epoch": joined.generation_id,
                "member_id": joined.member_id,
                "topics": [
                    {"name": "t", "partitions": [{"partition_index": 1, "committed_offset": 42}]}
                ],
            }
            assert (await client.request(OFFSET_COMMIT, 8, commit)).topics[0].partitions[
                0
            ].error_code == 0
            first_run.cancel()
    assert sink.closed is False  # a caller-provided sink is left to its owner
    reopened = build_options(
        {"group.initial.rebalance.delay.ms": "0"},
        host="127.0.0.1",
        port=0,
        data_dir=None,
        topics=(("t", 4),),
        sink=sink.reopen(),
    )
    running = await nursery.start(serve, reopened)
    client = await connect(running.port)
    fetched = await client.request(
        OFFSET_FETCH,
        8,
        {"groups": [{"group_id": "survivor", "topics": [{"name": "t", "partition_indexes": [1]}]}]},
    )
    assert fetched.groups[0].topics[0].partitions[0].committed_offset == 42
    view = running.runtime.coordinator.describe("survivor")
    assert view is not None and view.state == "Stable"
    assert [m.member_id for m in view.members] == [joined.member_id]
    timers = running.runtime.armed_timers()
    assert HeartbeatTimerKey("survivor", joined.member_id) in timers
    assert RetentionTimerKey() in timers


async def test_timer_heap_stays_bounded(server: RunningServer, connect: Any) -> None:
    client = await connect(server.port)
    joined = await join(client, "beats", session_timeout_ms=30_000)
    await sync(client, "beats", joined)
    body = {
        "group_id": "beats",
        "generation_id": joined.generation_id,
        "member_id": joined.member_id,
    }
    for _ in range(10_000):
        await client.send(12, 4, body)
    for _ in range(10_000):
        _, resp = await client.recv(12, 4)
        assert resp.error_code == 0
    assert len(server.runtime._heap) < 5 * 4096


async def test_cancelled_requester_reply_is_dropped(nursery: trio.Nursery) -> None:
    from coordinator.core import JoinGroupRequest

    config = CoordinatorConfig(group_initial_rebalance_delay_ms=0)
    ids = iter(range(100))
    runtime = CoordinatorRuntime(GroupCoordinator(config, lambda: str(next(ids))), MemorySink())
    await nursery.start(runtime.run)

    def join(member_id: str = "") -> JoinGroupRequest:
        return {
            "group_id": "g",
            "session_timeout_ms": 10_000,
            "rebalance_timeout_ms": 10_000,
            "member_id": member_id,
            "group_instance_id": None,
            "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}],
            "reason": None,
        }

    v3 = LocalContext(api_version=3)  # no MEMBER_ID_REQUIRED round trip
    first = await runtime.call(handle_join_group, v3, join())
    with trio.move_on_after(0.2):  # a second member's join is parked, then abandoned
        await runtime.call(handle_join_group, v3, join())
    assert not runtime._waiters
    rejoined = await runtime.call(handle_join_group, v3, join(first["member_id"]))
    assert rejoined["error_code"] == 0  # the abandoned member's reply went nowhere, harmlessly


class TimerProbe:
    """A stand-in coordinator that records timer firings (and schedules nothing itself)."""

    def __init__(self) -> None:
        self.fired: list[tuple[Any, int]] = []

    def replay(self, record: Any) -> None:
        pass

    def on_loaded(self, now_ms: int) -> Any:
        from coordinator.core import Result

        return Result()

    def group_ids(self) -> list[str]:
        return []

    def fire_timer(self, key: Any, now_ms: int) -> Any:
        from coordinator.core import Result

        self.fired.append((key, now_ms))
        return Result()


async def test_timers_reschedule_later_earlier_and_cancel(
    nursery: trio.Nursery, autojump_clock: Any
) -> None:
    from coordinator.core import CancelTimer, JoinTimerKey, ScheduleTimer, SyncTimerKey

    probe = TimerProbe()
    runtime = CoordinatorRuntime(probe, MemorySink(), clock_ms=lambda: 1_000_000)  # type: ignore[arg-type]
    await nursery.start(runtime.run)
    start = runtime.now_ms()
    a, b, c = HeartbeatTimerKey("g", "a"), JoinTimerKey("g"), SyncTimerKey("g")
    runtime._apply_timers([ScheduleTimer(a, start + 1000), ScheduleTimer(b, start + 5000)])
    for _ in range(1, 50):  # a heartbeat every 100 ms pushes a's deadline later
        await trio.sleep(0.1)
        runtime._apply_timers([ScheduleTimer(a, runtime.now_ms() + 1000)])
    assert probe.fired == []
    last = runtime.now_ms()
    runtime._apply_timers([ScheduleTimer(b, start + 100), CancelTimer(c)])  # b earlier: due now
    await trio.sleep(0)
    await trio.sleep(0.01)
    assert [k for k, _ in probe.fired] == [b]
    runtime._apply_timers(
        [ScheduleTimer(c, last + 300), CancelTimer(c), ScheduleTimer(c, last + 400)]
    )
    await trio.sleep(2)
    assert [k for k, _ in probe.fired] == [b, c, a]
    (_, fired_c), (_, fired_a) = probe.fired[1], probe.fired[2]
    assert last + 400 <= fired_c < last + 410
    assert last + 1000 <= fired_a < last + 1010
    assert runtime.armed_timers() == {}
    assert len(runtime._heap) <= 3


class HeldSink(MemorySink):
    """A sink whose log is held (as by the interval flusher's fsync) until its first
    thread append completes: the inline appends meanwhile are refused."""

    def __init__(self) -> None:
        super().__init__()
        self.held = True
        self.thread_appends = 0
        self.inline_appends = 0

    def append_nowait(self, records: Sequence[Record]) -> bool:
        if self.held:
            return False
        self.inline_appends += 1
        return super().append_nowait(records)

    async def append(self, records: Sequence[Record]) -> None:
        self.thread_appends += 1
        await trio.sleep(0.01)
        self.held = False  # the fsync that held the log is over
        await super().append(records)


async def test_queued_commits_go_inline_once_the_log_is_free(nursery: trio.Nursery) -> None:
    # One refused inline append sends a commit to the queue; the commits queued behind its
    # (thread) write are written inline once the log is free, not by another thread write,
    # which let connections keep each other queued for as long as they kept committing.
    sink = HeldSink()
    runtime = CoordinatorRuntime(GroupCoordinator(CoordinatorConfig(), lambda: "u"), sink)
    await nursery.start(runtime.run)
    answered: list[int] = []

    async def commit(offset: int) -> None:
        resp = await runtime.call(handle_offset_commit, V8, _commit(f"g{offset}", offset))
        assert resp["topics"][0]["partitions"][0]["error_code"] == 0
        answered.append(offset)

    async with trio.open_nursery() as requests:
        requests.start_soon(commit, 0)
        await trio.sleep(0.005)  # the first one's thread write is under way
        for offset in (1, 2, 3):
            requests.start_soon(commit, offset)
    assert sorted(answered) == [0, 1, 2, 3]
    assert (sink.thread_appends, sink.inline_appends) == (1, 1)
    # (0 first; Trio starts the three tasks started together in an order of its own)
    assert sink.records[0].value.offset == 0
    assert sorted(record.value.offset for record in sink.records) == [0, 1, 2, 3]
