"""Server-side assignor speed and memory: 1,000 members over 1,000 partitions.

    python tests/coordinator/consumer/bench_assignors.py [--repeats 5] [--members 1000]
        [--partitions 1000]

Rows, each the median of ``--repeats`` runs (time.perf_counter) and the peak of
tracemalloc-traced allocation during one run:

- first: every member joins at once, nothing assigned yet;
- join / leave: the group is balanced and one member joins or leaves (the common case);
- per assignor: ``uniform`` homogeneous (1 topic, and 10 topics), ``uniform`` heterogeneous
  (100 topics, each member subscribed to a random half; seed 7), ``range`` homogeneous.

Target (kip848 brief): well under one second per assignment at 1,000 x 1,000.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import random
import statistics
import sys
import time
import tracemalloc
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from coordinator.core.consumer import (
    GroupAssignment,
    GroupSpec,
    MemberSubscription,
    PartitionAssignor,
    RangeAssignor,
    TopicMetadata,
    UniformAssignor,
)

Spec = GroupSpec[uuid.UUID]


def topics_of(count: int, partitions: int) -> dict[uuid.UUID, TopicMetadata]:
    rng = random.Random(count)
    per_topic, extra = divmod(partitions, count)
    return {
        uuid.UUID(int=rng.getrandbits(128)): TopicMetadata(f"t{i}", per_topic + (i < extra))
        for i in range(count)
    }


def homogeneous(members: int, topics: dict[uuid.UUID, TopicMetadata]) -> Spec:
    subscribed = frozenset(topics)
    return GroupSpec(
        {f"member-{i:05d}": MemberSubscription(subscribed) for i in range(members)}, topics
    )


def heterogeneous(members: int, topics: dict[uuid.UUID, TopicMetadata]) -> Spec:
    rng = random.Random(7)
    ids = sorted(topics)
    return GroupSpec(
        {
            f"member-{i:05d}": MemberSubscription(frozenset(rng.sample(ids, len(ids) // 2)))
            for i in range(members)
        },
        topics,
    )


def holding(spec: Spec, assignment: GroupAssignment[uuid.UUID]) -> Spec:
    return GroupSpec(
        {
            m: MemberSubscription(s.subscribed_topic_ids, assignment[m])
            for m, s in spec.members.items()
        },
        spec.topics,
    )


def join_one(spec: Spec) -> Spec:
    first = next(iter(spec.members.values()))
    return GroupSpec(
        {**spec.members, "member-new": MemberSubscription(first.subscribed_topic_ids)}, spec.topics
    )


def leave_one(spec: Spec) -> Spec:
    members = dict(spec.members)
    members.pop(sorted(members)[0])
    return GroupSpec(members, spec.topics)


def measure(run: Callable[[], object], repeats: int) -> tuple[float, int]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    run()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return statistics.median(times), peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--members", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=1000)
    args = parser.parse_args()

    print(f"# {' '.join(sys.argv)}")
    print(
        f"# {datetime.date.today()} {platform.python_implementation()} "
        f"{platform.python_version()} {platform.machine()}"
    )
    print("| assignor | layout | step | median ms | peak alloc KiB |")
    print("|---|---|---|---:|---:|")
    cases: list[tuple[str, PartitionAssignor, str, Spec]] = [
        (
            "uniform",
            UniformAssignor(),
            "homogeneous, 1 topic",
            homogeneous(args.members, topics_of(1, args.partitions)),
        ),
        (
            "uniform",
            UniformAssignor(),
            "homogeneous, 10 topics",
            homogeneous(args.members, topics_of(10, args.partitions)),
        ),
        (
            "uniform",
            UniformAssignor(),
            "heterogeneous, 100 topics",
            heterogeneous(args.members, topics_of(100, args.partitions)),
        ),
        (
            "range",
            RangeAssignor(),
            "homogeneous, 10 topics",
            homogeneous(args.members, topics_of(10, args.partitions)),
        ),
    ]
    for name, assignor, layout, spec in cases:
        balanced = holding(spec, assignor.assign(spec))
        for step, step_spec in (
            ("first", spec),
            ("join", join_one(balanced)),
            ("leave", leave_one(balanced)),
        ):
            seconds, peak = measure(lambda a=assignor, s=step_spec: a.assign(s), args.repeats)
            print(f"| {name} | {layout} | {step} | {seconds * 1000:.1f} | {peak // 1024:,} |")


if __name__ == "__main__":
    main()
