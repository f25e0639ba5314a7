"""Coordinator core benchmarks (no I/O): ``python tests/benchmarks/bench_coordinator.py``.

Prints a table of medians over several runs:
- heartbeats/s for a Stable group of 100 members;
- join+sync cycles/s (every member rejoins, the leader and followers sync, back to Stable)
  for groups of 1, 16 and 256 members;
- OffsetCommit requests/s with 32 partitions each;
- memory per member (10,000 Stable groups x 10 members) and per committed offset, measured
  with tracemalloc.
Targets from issue 3: >= 200,000 heartbeats/s and <= 2 KiB per member.
Throughput is measured in process CPU time (``time.process_time``), so a busy shared machine
does not skew it; each call includes building the Result the runtime would consume and, when
it carries records, the core's ``append_done`` once they are "appended" (applying them to hard
state: persist, then apply).
"""

from __future__ import annotations

import gc
import itertools
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from coordinator.config import CoordinatorConfig
from coordinator.core import (
    GroupCoordinator,
    HeartbeatRequest,
    JoinGroupRequest,
    JoinTimerKey,
    LocalContext,
    OffsetCommitRequest,
    Reply,
    Result,
    SyncGroupRequest,
)
from coordinator.core.classic.heartbeat import handle_heartbeat
from coordinator.core.classic.join import handle_join_group
from coordinator.core.classic.sync import handle_sync_group
from coordinator.core.offset_commit import handle_offset_commit

RUNS = 5
CONFIG = CoordinatorConfig(group_initial_rebalance_delay_ms=3000)
PROTOCOLS = [{"name": "range",
              "metadata": b"\x00\x03\x00\x00\x00\x01\x00\x05topic\xff\xff\xff\xff"}]
V3, V4, V5, V8 = (LocalContext(api_version=v, client_id="c", client_host="h") for v in (3, 4, 5, 8))


def _coordinator() -> GroupCoordinator:
    counter = itertools.count()
    return GroupCoordinator(CONFIG, lambda: f"{next(counter):032x}")


def _run(coordinator: GroupCoordinator, result: Result, now: int) -> list[Reply]:
    """What the runtime does with a Result whose append succeeded: the core applies the
    records (``append_done``); the replies of both are sent."""
    replies = list(result.replies)
    if result.records:
        replies += coordinator.append_done(result, now).replies
    return replies


def _replies(coordinator: GroupCoordinator, result: Result, now: int) -> dict[object, object]:
    return {r.token: r.response for r in _run(coordinator, result, now)}


def _join(group_id: str, member_id: str = "") -> JoinGroupRequest:
    return {"group_id": group_id, "session_timeout_ms": 30_000, "rebalance_timeout_ms": 60_000,
            "member_id": member_id, "group_instance_id": None, "protocol_type": "consumer",
            "protocols": PROTOCOLS, "reason": None}


def _sync(group_id: str, generation: int, member_id: str,
          assignments: list[tuple[str, bytes]]) -> SyncGroupRequest:
    return {"group_id": group_id, "generation_id": generation, "member_id": member_id,
            "group_instance_id": None, "protocol_type": None, "protocol_name": None,
            "assignments": [{"member_id": m, "assignment": a} for m, a in assignments]}


def _commit(group_id: str, generation: int, member_id: str,
            offsets: list[tuple[int, int]]) -> OffsetCommitRequest:
    return {"group_id": group_id, "generation_id_or_member_epoch": generation,
            "member_id": member_id, "group_instance_id": None, "retention_time_ms": -1,
            "topics": [{"name": "topic", "partitions": [
                {"partition_index": p, "committed_offset": o, "committed_leader_epoch": -1,
                 "commit_timestamp": -1, "committed_metadata": ""} for p, o in offsets]}]}


def stable_group(coordinator: GroupCoordinator, group_id: str, size: int,
                 now: int = 0) -> tuple[list[str], int]:
    """Join ``size`` members, let the initial delay expire, sync: a Stable group."""
    answers: dict[object, Any] = {}
    for i in range(size):
        result = handle_join_group(coordinator, V3, _join(group_id), ("j", group_id, i), now)
        answers.update(_replies(coordinator, result, now))
    while ("j", group_id, 0) not in answers:  # the initial delay extends while members arrive
        now += CONFIG.group_initial_rebalance_delay_ms
        answers.update(_replies(coordinator, coordinator.fire_timer(JoinTimerKey(group_id), now),
                                now))
    responses = [answers[("j", group_id, i)] for i in range(size)]
    assert all(r["error_code"] == 0 for r in responses)
    member_ids = [r["member_id"] for r in responses]
    generation = responses[0]["generation_id"]
    leader = responses[0]["leader"]
    _sync_all(coordinator, group_id, member_ids, leader, generation, now)
    return member_ids, generation


def _sync_all(coordinator: GroupCoordinator, group_id: str, member_ids: list[str], leader: str,
              generation: int, now: int) -> None:
    assignment = [(m, b"a") for m in member_ids]
    request = _sync(group_id, generation, leader, assignment)
    _run(coordinator, handle_sync_group(coordinator, V5, request, ("s", leader), now), now)
    for member_id in member_ids:
        if member_id != leader:
            handle_sync_group(coordinator, V5, _sync(group_id, generation, member_id, []),
                              ("s", member_id), now)


def bench_heartbeats(members: int = 100, rounds: int = 2000) -> float:
    coordinator = _coordinator()
    member_ids, generation = stable_group(coordinator, "hb", members)
    requests: list[HeartbeatRequest] = [
        {"group_id": "hb", "generation_id": generation, "member_id": m, "group_instance_id": None}
        for m in member_ids
    ]
    heartbeat = handle_heartbeat
    now = 10_000
    start = time.process_time()
    for _ in range(rounds):
        for request in requests:
            heartbeat(coordinator, V4, request, 1, now)
        now += 1
    elapsed = time.process_time() - start
    assert heartbeat(coordinator, V4, requests[0], 1, now).replies[0].response["error_code"] == 0  # type: ignore[typeddict-item]
    return members * rounds / elapsed


def bench_join_sync(members: int, cycles: int) -> float:
    coordinator = _coordinator()
    member_ids, _ = stable_group(coordinator, "js", members)
    joins = [_join("js", m) for m in member_ids]
    now = 10_000
    start = time.process_time()
    for _ in range(cycles):
        answers: dict[object, Any] = {}
        for i, request in enumerate(joins):
            answers.update(_replies(coordinator, handle_join_group(
                coordinator, V5, request, i, now), now))
        first = answers[0]
        assert first["error_code"] == 0
        _sync_all(coordinator, "js", member_ids, first["leader"], first["generation_id"], now)
        now += 1
    elapsed = time.process_time() - start
    assert coordinator.describe("js").state == "Stable"  # type: ignore[union-attr]
    return cycles / elapsed


def bench_commits(partitions: int = 32, requests: int = 5000) -> float:
    coordinator = _coordinator()
    member_ids, generation = stable_group(coordinator, "oc", 1)
    request = _commit("oc", generation, member_ids[0], [(p, p * 10) for p in range(partitions)])
    commit = handle_offset_commit
    append_done = coordinator.append_done
    start = time.process_time()
    for i in range(requests):
        append_done(commit(coordinator, V8, request, i, 10_000 + i), 10_000 + i)
    elapsed = time.process_time() - start
    assert coordinator.committed_offsets("oc")[("topic", 1)].offset == 10
    return requests / elapsed


def memory_per_member(groups: int = 10_000, members: int = 10) -> tuple[float, float]:
    """Bytes per member for groups x members Stable groups, and per committed offset."""
    gc.collect()
    tracemalloc.start()
    baseline = tracemalloc.get_traced_memory()[0]
    coordinator = _coordinator()
    ids = []
    for g in range(groups):
        member_ids, generation = stable_group(coordinator, f"group-{g}", members)
        ids.append((member_ids[0], generation))
    gc.collect()
    after_groups = tracemalloc.get_traced_memory()[0]
    for g, (member_id, generation) in enumerate(ids):
        request = _commit(f"group-{g}", generation, member_id,
                          [(p, 1000 + p) for p in range(members)])
        coordinator.append_done(handle_offset_commit(coordinator, V8, request, g, 20_000), 20_000)
    gc.collect()
    after_offsets = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    per_member = (after_groups - baseline) / (groups * members)
    per_offset = (after_offsets - after_groups) / (groups * members)
    del coordinator
    return per_member, per_offset


def _median(fn: Callable[[], float], runs: int = RUNS) -> float:
    return statistics.median(fn() for _ in range(runs))


def main() -> None:
    rows: list[tuple[str, str]] = []
    rows.append(("heartbeats/s (Stable group, 100 members)", f"{_median(bench_heartbeats):,.0f}"))
    for size, cycles in ((1, 3000), (16, 300), (256, 20)):
        value = _median(lambda size=size, cycles=cycles: bench_join_sync(size, cycles))
        rows.append((f"join+sync cycles/s ({size} member{'s' if size > 1 else ''})",
                     f"{value:,.1f}"))
    commits = _median(bench_commits)
    rows.append(("offset commits/s (32 partitions each)", f"{commits:,.0f}"))
    rows.append(("committed partitions/s", f"{commits * 32:,.0f}"))
    per = [memory_per_member() for _ in range(3)]
    rows.append(("memory per member (10,000 groups x 10)",
                 f"{statistics.median(p[0] for p in per):,.0f} B"))
    rows.append(("memory per committed offset", f"{statistics.median(p[1] for p in per):,.0f} B"))
    width = max(len(name) for name, _ in rows)
    print(f"kcoord coordinator core, Python {sys.version.split()[0]}, "
          f"median of {RUNS} runs (memory: 3), throughput in process CPU time")
    print(f"{'metric'.ljust(width)}  value")
    print(f"{'-' * width}  {'-' * 14}")
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")


if __name__ == "__main__":
    main()
