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
does not skew it; each call includes building the Result the runtime would consume.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from coordinator.config import CoordinatorConfig
from coordinator.core import (
    GroupCoordinator,
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupResponse,
    JoinTimerKey,
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
    Result,
    SyncGroupRequest,
)

RUNS = 5
CONFIG = CoordinatorConfig(group_initial_rebalance_delay_ms=3000)
PROTOCOLS = (("range", b"\x00\x03\x00\x00\x00\x01\x00\x05topic\xff\xff\xff\xff"),)


def _coordinator() -> GroupCoordinator:
    counter = itertools.count()
    return GroupCoordinator(CONFIG, lambda: f"{next(counter):032x}")


def _replies(result: Result) -> dict[object, object]:
    return {r.token: r.response for r in result.replies}


def stable_group(coordinator: GroupCoordinator, group_id: str, size: int,
                 now: int = 0) -> tuple[list[str], int]:
    """Join ``size`` members, let the initial delay expire, sync: a Stable group."""
    answers: dict[object, object] = {}
    for i in range(size):
        request = JoinGroupRequest(api_version=3, group_id=group_id, session_timeout_ms=30_000,
                                   rebalance_timeout_ms=60_000, protocol_type="consumer",
                                   protocols=PROTOCOLS, client_id=f"c{i}", client_host="h")
        answers.update(_replies(coordinator.join_group(request, ("j", group_id, i), now)))
    while ("j", group_id, 0) not in answers:  # the initial delay extends while members arrive
        now += CONFIG.group_initial_rebalance_delay_ms
        answers.update(_replies(coordinator.fire_timer(JoinTimerKey(group_id), now)))
    responses = [answers[("j", group_id, i)] for i in range(size)]
    assert all(isinstance(r, JoinGroupResponse) and r.error_code == 0 for r in responses)
    member_ids = [r.member_id for r in responses]  # type: ignore[union-attr]
    generation = responses[0].generation_id  # type: ignore[union-attr]
    leader = responses[0].leader  # type: ignore[union-attr]
    _sync_all(coordinator, group_id, member_ids, leader, generation, now)
    return member_ids, generation


def _sync_all(coordinator: GroupCoordinator, group_id: str, member_ids: list[str], leader: str,
              generation: int, now: int) -> None:
    assignment = tuple((m, b"a") for m in member_ids)
    coordinator.sync_group(SyncGroupRequest(api_version=5, group_id=group_id,
                                            generation_id=generation, member_id=leader,
                                            assignments=assignment), ("s", leader), now)
    for member_id in member_ids:
        if member_id != leader:
            coordinator.sync_group(SyncGroupRequest(api_version=5, group_id=group_id,
                                                    generation_id=generation,
                                                    member_id=member_id), ("s", member_id), now)


def bench_heartbeats(members: int = 100, rounds: int = 2000) -> float:
    coordinator = _coordinator()
    member_ids, generation = stable_group(coordinator, "hb", members)
    requests = [HeartbeatRequest(api_version=4, group_id="hb", generation_id=generation,
                                 member_id=m) for m in member_ids]
    heartbeat = coordinator.heartbeat
    now = 10_000
    start = time.process_time()
    for _ in range(rounds):
        for request in requests:
            heartbeat(request, 1, now)
        now += 1
    elapsed = time.process_time() - start
    assert heartbeat(requests[0], 1, now).replies[0].response.error_code == 0  # type: ignore[union-attr]
    return members * rounds / elapsed


def bench_join_sync(members: int, cycles: int) -> float:
    coordinator = _coordinator()
    member_ids, _ = stable_group(coordinator, "js", members)
    joins = [JoinGroupRequest(api_version=5, group_id="js", member_id=m, session_timeout_ms=30_000,
                              rebalance_timeout_ms=60_000, protocol_type="consumer",
                              protocols=PROTOCOLS, client_id="c", client_host="h")
             for m in member_ids]
    now = 10_000
    start = time.process_time()
    for _ in range(cycles):
        answers: dict[object, object] = {}
        for i, request in enumerate(joins):
            answers.update(_replies(coordinator.join_group(request, i, now)))
        first = answers[0]
        assert isinstance(first, JoinGroupResponse) and first.error_code == 0
        _sync_all(coordinator, "js", member_ids, first.leader, first.generation_id, now)
        now += 1
    elapsed = time.process_time() - start
    assert coordinator.describe("js").state == "Stable"  # type: ignore[union-attr]
    return cycles / elapsed


def bench_commits(partitions: int = 32, requests: int = 5000) -> float:
    coordinator = _coordinator()
    member_ids, generation = stable_group(coordinator, "oc", 1)
    request = OffsetCommitRequest(
        api_version=8, group_id="oc", generation_id=generation, member_id=member_ids[0],
        topics=(OffsetCommitRequestTopic(name="topic", partitions=tuple(
            OffsetCommitRequestPartition(partition_index=p, committed_offset=p * 10)
            for p in range(partitions))),),
    )
    commit = coordinator.offset_commit
    start = time.process_time()
    for i in range(requests):
        commit(request, i, 10_000 + i)
    elapsed = time.process_time() - start
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
        coordinator.offset_commit(OffsetCommitRequest(
            api_version=8, group_id=f"group-{g}", generation_id=generation, member_id=member_id,
            topics=(OffsetCommitRequestTopic(name="topic", partitions=tuple(
                OffsetCommitRequestPartition(partition_index=p, committed_offset=1000 + p)
                for p in range(members))),),
        ), g, 20_000)
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
