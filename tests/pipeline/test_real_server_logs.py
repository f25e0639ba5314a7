"""The pipeline over a log written by a real ``kcoord serve`` with real kafka-python
consumers: join, static restart, leave, crash (SIGKILL: session expiry), commits, offset
deletion and group deletion. ``offsets_latest`` must equal what the clients read back
from the server and the coordinator's replay; ``rebalances`` must hold exactly the
generations the scenario caused, with their triggers. The CLI run by ``file://`` URIs
(input and output) must give every dataset of the plain-path run (issue 16).

Uses the e2e test helpers (``tests/e2e``: the server subprocess, consumer threads).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

E2E = Path(__file__).resolve().parents[1] / "e2e"
if str(E2E) not in sys.path:
    sys.path.insert(0, str(E2E))

with warnings.catch_warnings():  # kafka-python 3.0 uses importlib.resources.read_text
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka import TopicPartition
    from kafka.admin import KafkaAdminClient

from e2e_support import KcoordProcess
from kp_support import ConsumerThread, produce, wait_for
from pipeline_support import replay_offsets

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.slow]  # about 40 s: run by CI after the default run

TOPIC = "t4"
ALL4 = frozenset(range(4))


@pytest.fixture
def server(tmp_path: Path) -> Iterator[KcoordProcess]:
    process = KcoordProcess(tmp_path / "data", topics=[f"{TOPIC}:4"])
    process.start()
    yield process
    process.kill()


@pytest.fixture
def consumers() -> Iterator[list[ConsumerThread]]:
    started: list[ConsumerThread] = []
    yield started
    for c in started:
        if c.is_alive():
            c._stop_event.set()
            c.join(10)


def start(
    registry: list[ConsumerThread], bootstrap: str, group: str, **config: Any
) -> ConsumerThread:
    consumer = ConsumerThread(bootstrap, group, TOPIC, **config)
    registry.append(consumer)
    consumer.start()
    return consumer


def owns(consumers: list[ConsumerThread], expected: frozenset[int] = ALL4) -> bool:
    owned = [p for c in consumers for p in c.assignment]
    return (
        all(c.assignment for c in consumers)
        and len(owned) == len(set(owned))
        and set(owned) == expected
    )


def committed(admin: KafkaAdminClient, group: str) -> dict[tuple[str, int], int]:
    offsets = admin.list_group_offsets({group: None})[group]
    return {(tp.topic, tp.partition): om.offset for tp, om in offsets.items()}


def settle(consumers: list[ConsumerThread], condition: Any, what: str) -> int:
    """Wait for ``condition`` to hold with one unchanged generation for a second; that
    generation. (kafka-python may rejoin once more after a join: a leader that assigned
    before it had the topic's metadata rejoins when the metadata arrives.)"""
    while True:
        wait_for(lambda: condition() and len({c.generation for c in consumers}) == 1, 30, what)
        generation = consumers[0].generation
        time.sleep(1.0)
        if condition() and {c.generation for c in consumers} == {generation}:
            return generation


def test_pipeline_on_a_real_server_log(
    server: KcoordProcess, consumers: list[ConsumerThread], spark: Any, tmp_path: Path
) -> None:
    from storage.pipeline import cli, group_jobs, jobs

    boot = server.bootstrap
    steps: list[tuple[str, int, int]] = []  # (trigger, generation before, after)
    produce(boot, TOPIC, 40)
    # A joins (dynamic)
    a = start(consumers, boot, "pipe")
    g = settle([a], lambda: owns([a]) and len(a.records) >= 40, "A to consume everything")
    steps.append(("join", 0, g))
    # B joins (static, instance "b")
    b = start(consumers, boot, "pipe", group_instance_id="b", session_timeout_ms=10_000)
    steps.append(("join", g, g := settle([a, b], lambda: owns([a, b]), "A and B sharing")))
    produce(boot, TOPIC, 20, prefix="n")
    wait_for(lambda: len(a.records) + len(b.records) >= 60, 30, "the next 20 messages")
    # A leaves (LeaveGroup on close)
    a.stop(close=True)
    steps.append(("leave", g, g := settle([b], lambda: owns([b]), "B alone")))
    # B restarts statically: a new member id for instance "b", no rebalance
    b_member = b.member_id
    b.stop(close=True)  # a static member sends no LeaveGroup
    b2 = start(consumers, boot, "pipe", group_instance_id="b", session_timeout_ms=10_000)
    restarted = settle(
        [b2],
        lambda: owns([b2]) and b2.member_id not in ("", b_member),
        "B's restart to own the topic again",
    )
    assert restarted == g  # no rebalance
    # C joins in another process, then is SIGKILLed: its session expires
    crash = subprocess.Popen(
        [sys.executable, str(E2E / "kp_consumer_proc.py"), boot, "pipe", TOPIC],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        seen: dict[str, Any] = {}

        def read() -> None:
            assert crash.stdout is not None
            for line in crash.stdout:
                seen.update(json.loads(line))

        threading.Thread(target=read, daemon=True).start()

        def shared() -> bool:
            theirs = frozenset(seen.get("assignment", ()))
            return bool(theirs) and owns([b2], ALL4 - theirs)

        steps.append(("join", g, g := settle([b2], shared, "the crashable consumer to join")))
        crash.kill()
        steps.append(
            (
                "session_expiry",
                g,
                g := settle(
                    [b2],
                    lambda: owns([b2]) and b2.generation > steps[-1][2],
                    "the killed consumer's expiry",
                ),
            )
        )
    finally:
        crash.kill()
        crash.wait(10)
        if crash.stdout is not None:
            crash.stdout.close()
    # A second group: joins (gen 1), commits, leaves (gen 2), deletes an offset, is deleted.
    admin = KafkaAdminClient(bootstrap_servers=boot, request_timeout_ms=10_000)
    try:
        doomed = start(consumers, boot, "doomed")
        settle(
            [doomed],
            lambda: owns([doomed]) and len(doomed.records) >= 60,
            "the doomed group's consumer",
        )
        wait_for(
            lambda: sum(committed(admin, "doomed").values()) == 60, 30, "the doomed group's commits"
        )
        doomed.stop(close=True)
        wait_for(
            lambda: admin.describe_groups(["doomed"])["doomed"]["group_state"] == "Empty",
            10,
            "the doomed group to be Empty",
        )
        deleted = admin.delete_group_offsets("doomed", [TopicPartition(TOPIC, 0)])
        assert deleted[TopicPartition(TOPIC, 0)].__name__ == "NoError"
        assert admin.delete_groups(["doomed"]) == {"doomed": "OK"}
        b2.stop(close=True)  # static: no LeaveGroup, the group stays Stable
        clients_saw = committed(admin, "pipe")
        assert set(clients_saw) == {(TOPIC, p) for p in range(4)}
        assert sum(clients_saw.values()) == 60
        assert committed(admin, "doomed") == {}
    finally:
        admin.close()
    assert server.stop() == 0

    data_dir = str(server.data_dir)
    df = spark.read.format("kcoord-log").load(data_dir)
    assert df.where("log_index IS NULL").count() == 0  # a clean shutdown: no torn tail
    latest = {
        (r["group"], r["topic"], r["partition"]): r["offset"]
        for r in jobs.offsets_latest(df).collect()
    }
    assert latest == {("pipe", t, p): o for (t, p), o in clients_saw.items()}
    assert {
        (d, g, t, p): o for (g, t, p), o in latest.items() for d in [os.path.abspath(data_dir)]
    } == replay_offsets([data_dir])
    # The doomed group's commits are in the log, and its tombstones.
    doomed_rows = df.where("`group` = 'doomed' AND record_type = 'offset_commit'")
    assert doomed_rows.where("NOT tombstone").count() >= 4
    assert doomed_rows.where("tombstone").count() == 4  # one OffsetDelete, 3 by DeleteGroups

    reb = {
        (r["group"], r["incarnation"], r["generation"]): r
        for r in group_jobs.rebalances(df).collect()
    }
    # Exactly the generations the coordinator went through (no gaps, no extras) ...
    assert sorted(k for k in reb if k[0] == "pipe") == [("pipe", 0, n) for n in range(1, g + 1)]
    assert all(r["has_events"] and r["duration_ms"] >= 0 for r in reb.values())
    # ... each step's first generation with the step's trigger; a client-driven extra
    # rejoin within a step (kafka-python's leader rejoin) is a join.
    for trigger, before, after in steps:
        assert after > before, (trigger, steps)
        assert reb[("pipe", 0, before + 1)]["trigger"] == trigger, (trigger, steps)
        for n in range(before + 2, after + 1):
            assert reb[("pipe", 0, n)]["trigger"] in ("join", "metadata_change"), steps
    assert reb[("pipe", 0, g)]["member_ids_after"] == [b2.member_id]
    assert reb[("pipe", 0, steps[2][2])]["any_partition_moved"]  # A's partitions went to B
    doomed_gens = sorted(n for (grp, _, n) in reb if grp == "doomed")
    assert doomed_gens == list(range(1, len(doomed_gens) + 1)) and len(doomed_gens) >= 2
    assert reb[("doomed", 0, 1)]["trigger"] == "join"
    assert reb[("doomed", 0, doomed_gens[-1])]["trigger"] == "leave"
    assert reb[("doomed", 0, doomed_gens[-1])]["members_after"] == 0
    assert all(r["protocol"] == "range" for r in reb.values() if r["members_after"])
    events = {r["event"] for r in df.where("`group` = 'pipe'").select("event").collect()}
    assert "static_replace" in events

    summary = {
        (r["group"]): r
        for r in group_jobs.groups_summary(
            df, group_jobs.rebalances(df), jobs.offsets_latest(df)
        ).collect()
    }
    assert summary["pipe"]["generations"] == g
    assert summary["pipe"]["current_generation"] == g
    assert summary["doomed"]["state"] == "Dead"

    out = tmp_path / "report"
    err = io.StringIO()
    status = cli.main(
        ["--input", data_dir, "--output", str(out), "--quiet"], stdout=io.StringIO(), stderr=err
    )
    assert status == 0, err.getvalue()
    for png in (out / "plots").glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(list((out / "plots").glob("*.png"))) == 5
    assert (out / "report.html").exists() and (out / "report.md").exists()
    same_through_uris(spark, data_dir, out, tmp_path / "by-uri")


def same_through_uris(spark: Any, data_dir: str, plain_out: Path, out: Path) -> None:
    """Issue 16: the same input and an output given as file:// URIs (listed and read
    through Spark's Hadoop filesystem, the report written with it) give every dataset
    equal row for row to the plain-path run's, and the same report files."""
    from storage.pipeline import cli
    from storage.pipeline.report_data import PARTITIONING

    err, listing = io.StringIO(), io.StringIO()
    input_uri = Path(data_dir).as_uri()
    status = cli.main(["--input", input_uri + "/", "--output", out.as_uri(), "--quiet"],
                      stdout=listing, stderr=err)
    assert status == 0, err.getvalue()
    listed = dict(line.split("\t") for line in listing.getvalue().splitlines())
    assert listed["report.md"] == f"{out.as_uri()}/report.md"

    def dataset(root: Path, name: str, data_dir_as: str) -> list[str]:
        frame = spark.read.parquet(str(root / name))
        assert set(frame.columns) >= {"data_dir"}, name
        rows = [r.asDict(recursive=True) for r in frame.collect()]
        assert all(r["data_dir"] == data_dir_as for r in rows), name
        return sorted(repr(sorted({**r, "data_dir": None}.items())) for r in rows)

    for name in PARTITIONING:
        plain = dataset(plain_out, name, os.path.abspath(data_dir))
        assert dataset(out, name, input_uri) == plain, name
        assert plain or name == "problems", name
    for name in ("report.md", "report.html"):
        assert (out / name).stat().st_size > 1000
    plain_plots = sorted(p.name for p in (plain_out / "plots").glob("*.png"))
    assert sorted(p.name for p in (out / "plots").glob("*.png")) == plain_plots
    for png in (out / "plots").glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert input_uri in (out / "report.md").read_text()
