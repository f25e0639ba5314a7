"""The consumer group protocol in the core: steady-state ConsumerGroupHeartbeat/s beside the
classic Heartbeat/s in the same run, and memory per consumer-protocol member.

``python tests/benchmarks/bench_consumer_protocol.py [--members 100] [--seconds 2]``
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "coordinator" / "consumer"))

from consumer_harness import ConsumerHarness  # noqa: E402

from coordinator.core.consumer_heartbeat import handle_consumer_group_heartbeat  # noqa: E402
from coordinator.core.messages import LocalContext  # noqa: E402


def steady_heartbeats(members: int, seconds: float) -> float:
    """Heartbeats/s of a Stable group of ``members`` (no topic_partitions: nothing changes)."""
    h = ConsumerHarness(foo=(uuid.UUID(int=1), members * 2))
    for i in range(members):
        h.join(f"m{i}", ["foo"])
    # settle: every member reports what it owns until the group is Stable
    for _ in range(4):
        for mid, member in list(h.consumer_group().members.items()):
            parts = [(t, sorted(p)) for t, p in member.current.assigned_partitions.items()]
            h.consumer_heartbeat(mid, member.member_epoch, topic_partitions=parts)
    assert h.consumer_group().state == "Stable", h.consumer_group().state
    coordinator = h.coordinator
    ctx = LocalContext(api_version=1, client_id="c", client_host="/127.0.0.1")
    requests = [
        {"group_id": "fooup", "member_id": mid, "member_epoch": m.member_epoch,
         "instance_id": None, "rack_id": None, "rebalance_timeout_ms": -1,
         "subscribed_topic_names": None, "subscribed_topic_regex": None,
         "server_assignor": None, "topic_partitions": None}
        for mid, m in h.consumer_group().members.items()
    ]
    n = 0
    began = time.perf_counter()
    while time.perf_counter() - began < seconds:
        for request in requests:
            handle_consumer_group_heartbeat(coordinator, ctx, request, n, 0)  # type: ignore[arg-type]
            n += 1
    return n / (time.perf_counter() - began)


def memory_per_member(members: int) -> float:
    tracemalloc.start()
    h = ConsumerHarness(foo=(uuid.UUID(int=1), members))
    h.records.clear()
    before = tracemalloc.get_traced_memory()[0]
    for i in range(members):
        h.join(f"member-{i:06d}", ["foo"])
    h.records.clear()  # the harness's copy of the log is not the core's memory
    h.results.clear()
    h.replies.clear()
    h.sent.clear()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / members


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--members", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    rate = steady_heartbeats(args.members, args.seconds)
    print(f"ConsumerGroupHeartbeat/s, {args.members} members, steady: {rate:,.0f}")
    print(f"memory per consumer-protocol member (1000 members): {memory_per_member(1000):,.0f} B")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
