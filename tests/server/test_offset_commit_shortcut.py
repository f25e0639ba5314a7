"""The usual OffsetCommit answered inline (the core's ``at_once`` Result, which the runtime
appends, applies and answers before ``submit`` returns) commits exactly as the same Result
queued through the runtime does: the same answer, the same bytes in the log, the same hard
state, session deadlines and OffsetFetch answers, and the same after a restart. Only a
commit by topic name whose partitions all exist, to an existing group whose checks pass
(``offset_commit.commit_target``), with nothing queued or being written and a sink that can
write at once is answered inline (a ``ReadyReply``); everything else takes the queue (a
``PendingReply``). A fault armed for another API leaves the fast lane on.

The property test drives two servers in one trio run on one MockClock, each with its own
data directory and the same fixed wall clock: one answering inline, one not
(``CoordinatorRuntime.answers_at_once`` off). Member ids are random per server, so the
comparison maps them."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import wire
from coordinator.server.app import RunningServer, serve
from coordinator.server.context import RequestContext
from coordinator.server.faults import FaultInjector
from coordinator.server.options import build_options
from coordinator.server.runtime import CoordinatorRuntime, PendingReply
from coordinator.server.sink import MemorySink
from coordinator.server.waiters import ReadyReply
from storage.errors import LogWriteError
from storage.records import Record
from wire import fast_codec

OFFSET_COMMIT, OFFSET_FETCH, JOIN, SYNC, CGH = 8, 9, 11, 14, 68
WALL_MS = 1_700_000_000_000
TOPIC = "t"
OTHER_TOPIC = "u"  # answers of other shapes: the shared answers' cache hit and missed
LONG_METADATA = "x" * 5000  # over offset.metadata.max.bytes (4096)
NONE, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID = 0, 22, 25
REBALANCE_IN_PROGRESS, OFFSET_METADATA_TOO_LARGE, NOT_COORDINATOR = 27, 12, 16


class Kcoord:
    """An in-process server driven through its handlers, decoded as a connection does."""

    def __init__(self, running: RunningServer, data_dir: str | None) -> None:
        self.state = running.server
        self.data_dir = data_dir
        self.members: dict[tuple[str, str], str] = {}  # (group, logical name) -> member id
        self.correlation_id = 0

    @property
    def runtime(self) -> CoordinatorRuntime:
        runtime: CoordinatorRuntime = self.state.groups
        return runtime

    def request(self, api_key: int, version: int, body: dict[str, Any]) -> tuple[Any, Any]:
        self.correlation_id += 1
        payload = wire.encode_request(api_key, version, self.correlation_id, "c", body)[4:]
        request = fast_codec.decode_request(payload)
        ctx = RequestContext(self.state, 1, "/127.0.0.1", request.client_id,
                             request.api_version, request.correlation_id)
        return ctx, request

    async def call(self, api_key: int, version: int, **body: Any) -> Any:
        ctx, request = self.request(api_key, version, body)
        return await self.state.handlers[api_key](ctx, request)

    def submit_commit(self, version: int, body: dict[str, Any]) -> Any:
        ctx, request = self.request(OFFSET_COMMIT, version, body)
        return self.state.handlers[OFFSET_COMMIT].submit(ctx, request)

    async def commit(self, version: int, body: dict[str, Any]) -> tuple[Any, Any]:
        """(the pending reply, the answer) of an OffsetCommit through the handler's submit."""
        pending = self.submit_commit(version, body)
        answer = pending.result() if pending.ready() else await pending.wait()
        return pending, answer

    async def join(self, group: str, name: str, *, sync: bool = True) -> None:
        body = {"group_id": group, "session_timeout_ms": 30_000,
                "rebalance_timeout_ms": 60_000, "member_id": "", "group_instance_id": None,
                "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": b""}]}
        joined = await self.call(JOIN, 7, **body)
        assert joined["error_code"] == 79  # MEMBER_ID_REQUIRED
        self.members[(group, name)] = joined["member_id"]
        body["member_id"] = joined["member_id"]
        joined = await self.call(JOIN, 7, **body)
        assert joined["error_code"] == NONE, joined
        if sync:
            synced = await self.call(SYNC, 5, group_id=group, member_id=joined["member_id"],
                                     generation_id=joined["generation_id"],
                                     group_instance_id=None, protocol_type="consumer",
                                     protocol_name="range", assignments=[
                                         {"member_id": joined["member_id"], "assignment": b""}])
            assert synced["error_code"] == NONE, synced

    async def park_join(self, nursery: trio.Nursery, group: str, name: str) -> None:
        """A second member's join, parked until the group's rebalance completes (the group
        is PreparingRebalance meanwhile)."""
        body = {"group_id": group, "session_timeout_ms": 30_000,
                "rebalance_timeout_ms": 60_000, "member_id": "", "group_instance_id": None,
                "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": b""}]}
        joined = await self.call(JOIN, 7, **body)
        self.members[(group, name)] = joined["member_id"]
        body["member_id"] = joined["member_id"]
        nursery.start_soon(lambda: self.call(JOIN, 7, **body))
        await trio.testing.wait_all_tasks_blocked()

    def member(self, group: str, name: str) -> str:
        return self.members.get((group, name), name)

    def log_bytes(self) -> bytes:
        assert self.data_dir is not None
        return b"".join(path.read_bytes() for path in sorted(Path(self.data_dir).glob("*.log")))

    def deadlines(self) -> dict[tuple[str, str], tuple[int, int | None]]:
        """Each logical member's session deadline, and its armed timer's."""
        timers = {key: deadline for key, deadline in self.runtime.armed_timers().items()}
        out = {}
        for (group, name), member_id in self.members.items():
            classic = self.runtime.coordinator.groups.get(group)
            member = None if classic is None else classic.members.get(member_id)
            if member is not None:
                out[(group, name)] = (member.heartbeat_deadline, timers.get(member.heartbeat_key))
        return out


def _options(data_dir: str | None, **kwargs: Any) -> Any:
    return build_options({"group.initial.rebalance.delay.ms": "0"}, host="127.0.0.1", port=0,
                         data_dir=data_dir, topics=((TOPIC, 4), (OTHER_TOPIC, 4)), fsync="interval",
                         clock_ms=lambda: WALL_MS, **kwargs)


async def _start(nursery: trio.Nursery, data_dir: str | None, *, shortcut: bool = True,
                 **kwargs: Any) -> Kcoord:
    faults = FaultInjector()
    faults.add("DeleteTopics", error_code=41, count=None)  # never sent here: no effect
    running: RunningServer = await nursery.start(serve, _options(data_dir, faults=faults,
                                                                 **kwargs))
    kcoord = Kcoord(running, data_dir)
    kcoord.runtime.answers_at_once = shortcut
    return kcoord


async def _groups(kcoord: Kcoord, nursery: trio.Nursery) -> None:
    """Stable "g"; CompletingRebalance "c"; PreparingRebalance "p"; simple "s" (Empty);
    consumer group "cg" with member "cm"."""
    await kcoord.join("g", "m1")
    await kcoord.join("c", "m1", sync=False)
    await kcoord.join("p", "m1")
    await kcoord.park_join(nursery, "p", "m2")
    _, answer = await kcoord.commit(2, _commit_body("s", -1, "", [(TOPIC, 0, 5, None)]))
    assert answer["topics"][0]["partitions"][0]["error_code"] == NONE
    joined = await kcoord.call(CGH, 1, group_id="cg", member_id="cm", member_epoch=0,
                               rebalance_timeout_ms=30_000, subscribed_topic_names=[TOPIC],
                               topic_partitions=[])
    assert joined["error_code"] == NONE, joined


def _commit_body(group: str, generation: int, member_id: str,
                 partitions: Sequence[tuple[str, int, int, str | None]],
                 retention: int = -1) -> dict[str, Any]:
    topics: dict[str, list[dict[str, Any]]] = {}
    for topic, index, offset, metadata in partitions:
        topics.setdefault(topic, []).append({
            "partition_index": index, "committed_offset": offset,
            "committed_leader_epoch": index - 1, "committed_metadata": metadata,
            "commit_timestamp": -1})
    return {"group_id": group, "generation_id_or_member_epoch": generation,
            "member_id": member_id, "group_instance_id": None, "retention_time_ms": retention,
            "topics": [{"name": name, "partitions": ps} for name, ps in topics.items()]}


def _generation(kcoord: Kcoord, group: str, choice: str) -> int:
    if choice == "none":
        return -1
    consumer = kcoord.runtime.coordinator.consumer_groups.get(group)
    if consumer is not None:
        current = consumer.members["cm"].member_epoch
    else:
        classic = kcoord.runtime.coordinator.groups.get(group)
        current = 0 if classic is None else classic.generation_id
    return current if choice == "current" else current - 1 if choice == "stale" else 7


COMMITS = st.tuples(
    st.sampled_from(["g", "g", "g", "p", "s", "cg", "cg", "c", "new"]),
    st.sampled_from([2, 3, 4, 5, 6, 7, 8, 9, 9, 9]),  # v10 names topics by id: the handler's
    st.sampled_from(["current", "current", "current", "stale", "none", "other"]),
    st.sampled_from(["own", "own", "own", "m2", "", "unknown"]),  # own: the group's member
    st.lists(st.tuples(st.sampled_from([TOPIC] * 4 + [OTHER_TOPIC] * 2 + ["nope"]),
                       st.sampled_from([0, 1, 2, 3, 0, 1, 2, 3, 5]), st.integers(0, 2**40),
                       st.sampled_from([None, "", "", "meta", "é", LONG_METADATA])),
             min_size=1, max_size=4),
    st.sampled_from([-1, -1, 60_000]),  # retention (v2-4)
    st.sampled_from([0, 0, 1.5]),  # seconds the clock moves first
)
_OWN = {"g": "m1", "p": "m1", "c": "m1", "cg": "cm", "s": "", "new": ""}


async def _scenario(commits: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as a_dir, tempfile.TemporaryDirectory() as b_dir:
        async with trio.open_nursery() as nursery:
            fast = await _start(nursery, a_dir)
            slow = await _start(nursery, b_dir, shortcut=False)
            for kcoord in (fast, slow):
                await _groups(kcoord, nursery)
            clock = trio.lowlevel.current_clock()
            assert isinstance(clock, trio.testing.MockClock)
            for group, version, generation, name, partitions, retention, jump in commits:
                clock.jump(jump)
                await trio.testing.wait_all_tasks_blocked()
                answers, appended, kinds = [], [], []
                for kcoord in (fast, slow):
                    before = len(kcoord.log_bytes())
                    member = kcoord.member(group, _OWN[group] if name == "own" else name)
                    body = _commit_body(group, _generation(kcoord, group, generation), member,
                                        partitions, retention)
                    pending, answer = await kcoord.commit(version, body)
                    kinds.append(type(pending))
                    answers.append(answer)
                    appended.append(kcoord.log_bytes()[before:])
                assert kinds[1] is PendingReply
                event(f"shortcut: {kinds[0] is ReadyReply}")
                assert answers[0] == answers[1]
                # The frame as the connection writes it (a shared answer's kept encoding)
                # equals the construct codec's.
                assert fast_codec.encode_response(OFFSET_COMMIT, version, 7, answers[0]) == \
                    wire.encode_response(OFFSET_COMMIT, version, 7, dict(answers[1]))
                assert appended[0] == appended[1]
                assert fast.deadlines() == slow.deadlines()
                assert fast.runtime.coordinator.hard_state().offsets == \
                    slow.runtime.coordinator.hard_state().offsets
            for group in ("g", "c", "p", "s", "cg", "new"):
                fetched = [await kcoord.call(OFFSET_FETCH, 7, group_id=group, topics=None,
                                             require_stable=False) for kcoord in (fast, slow)]
                assert fetched[0] == fetched[1]
            nursery.cancel_scope.cancel()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(COMMITS, min_size=1, max_size=6))
def test_shortcut_commits_as_the_handler(commits: list[Any]) -> None:
    trio.run(_scenario, commits, clock=trio.testing.MockClock())


# --------------------------------------------------------------------------- each condition


@pytest.fixture
async def fast(nursery: trio.Nursery, tmp_path: Path) -> Kcoord:
    kcoord = await _start(nursery, str(tmp_path))
    await _groups(kcoord, nursery)
    return kcoord


def _stable_commit(kcoord: Kcoord, metadata: str | None = "") -> dict[str, Any]:
    return _commit_body("g", _generation(kcoord, "g", "current"), kcoord.member("g", "m1"),
                        [(TOPIC, 0, 41, metadata), (TOPIC, 3, 42, metadata)])


@pytest.mark.trio
async def test_usual_commits_take_the_shortcut(fast: Kcoord,
                                               mock_clock: trio.testing.MockClock) -> None:
    """A member of a Stable group, a simple group, a consumer group's member: ReadyReply,
    applied at once (OffsetFetch sees it), the session renewed."""
    mock_clock.jump(2)
    cases = [
        (8, _stable_commit(fast)),
        (4, _stable_commit(fast, "meta")),
        (3, _commit_body("s", -1, "", [(TOPIC, 1, 7, None)], retention=60_000)),
        (9, _commit_body("cg", _generation(fast, "cg", "current"), "cm",
                         [(TOPIC, 2, 9, "")])),
        (2, _commit_body("p", _generation(fast, "p", "current"), fast.member("p", "m1"),
                         [(TOPIC, 0, 3, None)])),
    ]
    for version, body in cases:
        pending, answer = await fast.commit(version, body)
        assert type(pending) is ReadyReply, (version, body)
        assert all(p["error_code"] == NONE for t in answer["topics"] for p in t["partitions"])
        offsets = fast.runtime.coordinator.committed_offsets(body["group_id"])
        for t in body["topics"]:
            for p in t["partitions"]:
                committed = offsets[(t["name"], p["partition_index"])]
                assert committed.offset == p["committed_offset"]
    now = fast.runtime.now_ms()
    assert fast.deadlines()[("g", "m1")] == (now + 30_000, now + 30_000)
    assert fast.deadlines()[("p", "m1")] == (now + 30_000, now + 30_000)


@pytest.mark.trio
async def test_failed_checks_take_the_handler(fast: Kcoord) -> None:
    """Each check of commit_target that fails, a new group, an unknown topic, topics by id,
    and a commit of no partition that fits: the handler's PendingReply and its errors."""
    cases = [
        (8, _commit_body("g", 99, fast.member("g", "m1"), [(TOPIC, 0, 1, "")]),
         ILLEGAL_GENERATION),
        (8, _commit_body("g", _generation(fast, "g", "current"), "nobody",
                         [(TOPIC, 0, 1, "")]), UNKNOWN_MEMBER_ID),
        (8, _commit_body("c", _generation(fast, "c", "current"), fast.member("c", "m1"),
                         [(TOPIC, 0, 1, "")]), REBALANCE_IN_PROGRESS),
        (9, _commit_body("cg", 99, "cm", [(TOPIC, 0, 1, "")]), 113),  # STALE_MEMBER_EPOCH
        (8, _commit_body("cg", _generation(fast, "cg", "current"), "cm",
                         [(TOPIC, 0, 1, "")]), 35),  # UNSUPPORTED_VERSION
        (9, _commit_body("cg", _generation(fast, "cg", "current"), "nobody",
                         [(TOPIC, 0, 1, "")]), UNKNOWN_MEMBER_ID),
        (9, _commit_body("g", 3, fast.member("g", "m1"), [(TOPIC, 0, 1, "")]),
         ILLEGAL_GENERATION),
        (9, _commit_body("missing", 1, "x", [(TOPIC, 0, 1, "")]), 69),  # GROUP_ID_NOT_FOUND
        (8, _commit_body("brand-new", -1, "", [(TOPIC, 0, 1, "")]), NONE),
        (8, _commit_body("g", _generation(fast, "g", "current"), fast.member("g", "m1"),
                         [("nope", 0, 1, "")]), 3),  # UNKNOWN_TOPIC_OR_PARTITION
        (8, _commit_body("g", _generation(fast, "g", "current"), fast.member("g", "m1"),
                         [(TOPIC, 0, 1, LONG_METADATA)]), OFFSET_METADATA_TOO_LARGE),
    ]
    for version, body, error in cases:
        pending, answer = await fast.commit(version, body)
        assert type(pending) is PendingReply, body
        assert {p["error_code"] for t in answer["topics"] for p in t["partitions"]} == {error}


@pytest.mark.trio
async def test_fault_for_another_api_keeps_the_fast_lane(fast: Kcoord) -> None:
    fast.state.faults.add("Heartbeat", error_code=41, count=None)
    pending, answer = await fast.commit(8, _stable_commit(fast))
    assert type(pending) is ReadyReply
    assert answer["topics"][0]["partitions"][0]["error_code"] == NONE


@pytest.mark.trio
async def test_log_busy_takes_the_handler(fast: Kcoord) -> None:
    """The log's lock held (an interval fsync, a compaction's swap): the commit goes to the
    handler and the persister, and lands once the lock is free."""
    log = fast.runtime.sink._alog.log  # type: ignore[attr-defined]
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with log.lock:
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        pending = fast.submit_commit(8, _stable_commit(fast))
        assert type(pending) is PendingReply and not pending.ready()
    finally:
        release.set()
        holder.join(10)
    with trio.fail_after(10):
        answer = await pending.wait()
    assert answer["topics"][0]["partitions"][0]["error_code"] == NONE
    assert fast.runtime.coordinator.committed_offsets("g")[(TOPIC, 0)].offset == 41


class _HeldSink(MemorySink):
    """A sink that writes at once unless told not to, and whose ``append`` (the persister's)
    waits for ``release``."""

    def __init__(self) -> None:
        super().__init__()
        self.nowait = True
        self.release = trio.Event()

    async def append(self, records: Sequence[Record]) -> None:
        await self.release.wait()
        await super().append(records)

    def append_nowait(self, records: Sequence[Record]) -> bool:
        return self.nowait and super().append_nowait(records)


@pytest.mark.trio
async def test_append_in_flight_takes_the_handler(nursery: trio.Nursery) -> None:
    """A commit behind one that is being written waits for it: its records follow in the
    log and its answer comes after (the shortcut would write it first)."""
    sink = _HeldSink()
    kcoord = await _start(nursery, None, sink=sink)
    await kcoord.join("g", "m1")
    sink.nowait = False
    first = kcoord.submit_commit(8, _stable_commit(kcoord))
    await trio.testing.wait_all_tasks_blocked()  # the persister is writing it
    sink.nowait = True
    second = kcoord.submit_commit(8, _commit_body(
        "g", _generation(kcoord, "g", "current"), kcoord.member("g", "m1"),
        [(TOPIC, 0, 99, "")]))
    assert type(second) is PendingReply and not second.ready()
    sink.release.set()
    await first.wait()
    await second.wait()
    offsets = [r.value.offset for r in sink.records  # type: ignore[union-attr]
               if type(r.key).__name__ == "OffsetCommitKey"]
    assert offsets[-3:] == [41, 42, 99]
    assert kcoord.runtime.coordinator.committed_offsets("g")[(TOPIC, 0)].offset == 99


@pytest.mark.trio
async def test_failed_append_answers_as_the_handler(
        nursery: trio.Nursery, mock_clock: trio.testing.MockClock) -> None:
    """A write that fails: the mapped error on every partition, nothing applied, the
    session renewed all the same (as the handler's timers), counted as a failed append."""
    sink = MemorySink()
    kcoord = await _start(nursery, None, sink=sink)
    await kcoord.join("g", "m1")
    sink.fail_with = lambda records: LogWriteError("disk gone", 5)
    pending = kcoord.submit_commit(8, _stable_commit(kcoord))
    assert pending.ready()  # answered before submit returned
    answer = pending.result()
    # KAFKA_STORAGE_ERROR, mapped as Kafka's maybeConvertOffsetCommitError does
    assert {p["error_code"] for p in answer["topics"][0]["partitions"]} == {NOT_COORDINATOR}
    assert kcoord.runtime.coordinator.committed_offsets("g") == {}
    assert kcoord.runtime.append_failures == 1
    now = kcoord.runtime.now_ms()
    assert kcoord.deadlines()[("g", "m1")] == (now + 30_000, now + 30_000)
    kcoord.runtime.answers_at_once = False  # queued now
    handled, handler_answer = await kcoord.commit(8, _stable_commit(kcoord))
    assert type(handled) is PendingReply
    assert handler_answer == answer
    assert kcoord.runtime.append_failures == 2
    kcoord.runtime.answers_at_once = True
    sink.fail_with = None
    _, again = await kcoord.commit(8, _stable_commit(kcoord))
    assert {p["error_code"] for p in again["topics"][0]["partitions"]} == {NONE}


@pytest.mark.trio
async def test_shortcut_commits_survive_a_restart(tmp_path: Path) -> None:
    async with trio.open_nursery() as nursery:
        kcoord = await _start(nursery, str(tmp_path))
        await kcoord.join("g", "m1")
        pending, _ = await kcoord.commit(8, _stable_commit(kcoord, "kept"))
        assert type(pending) is ReadyReply
        before = await kcoord.call(OFFSET_FETCH, 7, group_id="g", topics=None,
                                   require_stable=False)
        nursery.cancel_scope.cancel()
    async with trio.open_nursery() as nursery:
        again = await _start(nursery, str(tmp_path))
        after = await again.call(OFFSET_FETCH, 7, group_id="g", topics=None,
                                 require_stable=False)
        assert after == before
        assert [p["committed_offset"] for p in after["topics"][0]["partitions"]] == [41, 42]
        nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_queued_commit_counts_in_flight(nursery: trio.Nursery) -> None:
    """An at-once commit the runtime must queue (an append is being written) counts as a
    write in flight: a DeleteGroups behind it tombstones its partition too, so nothing of
    the group survives once both land."""
    sink = _HeldSink()
    kcoord = await _start(nursery, None, sink=sink)
    await kcoord.commit(8, _commit_body("s", -1, "", [(TOPIC, 0, 1, "")]))
    sink.nowait = False
    first = kcoord.submit_commit(8, _commit_body("s", -1, "", [(TOPIC, 1, 2, "")]))
    await trio.testing.wait_all_tasks_blocked()  # the persister is writing it
    queued = kcoord.submit_commit(8, _commit_body("s", -1, "", [(TOPIC, 2, 3, "")]))
    assert type(queued) is PendingReply and not queued.ready()
    ctx, request = kcoord.request(42, 2, {"groups_names": ["s"]})
    deleted = kcoord.state.handlers[42].submit(ctx, request)
    sink.release.set()
    for pending in (first, queued):
        assert (await pending.wait())["topics"][0]["partitions"][0]["error_code"] == NONE
    assert (await deleted.wait())["results"][0]["error_code"] == NONE
    tombstones = {r.key.partition for r in sink.records  # type: ignore[union-attr]
                  if type(r.key).__name__ == "OffsetCommitKey" and r.value is None}
    assert tombstones == {0, 1, 2}
    assert kcoord.runtime.coordinator.committed_offsets("s") == {}
