"""Consumer lag from data directories a real ``kcoord serve`` wrote: the ``offsets_lag``
dataset (committed offsets against the topics' log ends, as of the end and as of
``--until``), the partitions a group never committed, the lag-over-time plot, and a
``--topic-storage memory`` directory (lag unknown). One pipeline run for the module.

Records are produced to explicit partitions and offsets committed by a kafka-python
consumer without a subscription (a simple consumer's commit), so every expected value
is known: 10 records to lagt-0, 4 to lagt-1, 6 to lagt-2 and 5 to gone-0; commits lagt-0
at 3, lagt-1 at 9 (beyond its log end), gone-0 at 2, lagt-2 never; then 5 more records to
lagt-0 (after a restart of the server), lagt-0 committed at 12, and topic gone deleted.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
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
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import KafkaAdminClient
    from kafka.structs import OffsetAndMetadata

from e2e_support import KcoordProcess

# Two servers and a whole pipeline run: about a minute and a half on 2 loaded cores.
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.slow]

GROUP = "lagger"


def _produce(boot: str, topic: str, partition: int, count: int) -> None:
    producer = KafkaProducer(bootstrap_servers=boot, acks="all", linger_ms=0)
    try:
        for i in range(count):
            producer.send(topic, value=f"{topic}-{i}".encode(), partition=partition)
        producer.flush(timeout=30)
    finally:
        producer.close(timeout=5)


def _commit(boot: str, group: str, offsets: dict[tuple[str, int], int]) -> None:
    consumer = KafkaConsumer(bootstrap_servers=boot, group_id=group, enable_auto_commit=False)
    try:
        consumer.commit(
            {TopicPartition(t, p): OffsetAndMetadata(o, "", -1) for (t, p), o in offsets.items()}
        )
    finally:
        consumer.close()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Both data directories written, and the pipeline run over them once."""
    from storage.pipeline import cli

    base = tmp_path_factory.mktemp("lag")
    disk = KcoordProcess(base / "disk", topics=["lagt:3", "gone:1", "idle:2"])
    memory = KcoordProcess(base / "memory", topics=["memt:1"],
                           extra_args=["--topic-storage", "memory"])
    try:
        disk.start()
        boot = disk.bootstrap
        for partition, count in ((0, 10), (1, 4), (2, 6)):
            _produce(boot, "lagt", partition, count)
        _produce(boot, "gone", 0, 5)
        _commit(boot, GROUP, {("lagt", 0): 3, ("lagt", 1): 9, ("gone", 0): 2})
        time.sleep(1.0)
        middle_ms = int(time.time() * 1000)
        time.sleep(1.0)
        assert disk.stop() == 0  # a restart: marked on the report's timeline
        disk.start()
        boot = disk.bootstrap
        _produce(boot, "lagt", 0, 5)
        restart_ms = int(time.time() * 1000)  # acknowledged: the restarted server is up
        time.sleep(0.3)
        _commit(boot, GROUP, {("lagt", 0): 12})
        admin = KafkaAdminClient(bootstrap_servers=boot, request_timeout_ms=10_000)
        try:
            admin.delete_topics(["gone"])
        finally:
            admin.close()
        assert disk.stop() == 0
        memory.start()
        _produce(memory.bootstrap, "memt", 0, 3)
        _commit(memory.bootstrap, GROUP, {("memt", 0): 1})
        assert memory.stop() == 0
    finally:
        disk.kill()
        memory.kill()
    out = base / "out"
    err = io.StringIO()
    status = cli.main(
        ["--input", str(disk.data_dir), str(memory.data_dir), "--output", str(out), "-q"],
        stdout=io.StringIO(), stderr=err,
    )
    assert status == 0, err.getvalue()
    yield {"disk": str(disk.data_dir), "memory": str(memory.data_dir), "out": out,
           "middle_ms": middle_ms, "restart_ms": restart_ms, "stderr": err.getvalue()}


def _lag_rows(df: Any) -> dict[tuple[str, str, int], tuple[Any, ...]]:
    return {
        (r["data_dir"].rsplit("/", 1)[-1], r["topic"], r["partition"]): (
            r["committed_offset"], r["log_end_offset"], r["lag"], r["status"])
        for r in df.collect()
        if r["group"] == GROUP
    }


def test_offsets_lag_against_what_was_produced_and_committed(
    run: dict[str, Any], spark: Any
) -> None:
    rows = _lag_rows(spark.read.parquet(str(run["out"] / "offsets_lag")))
    assert rows == {
        ("disk", "lagt", 0): (12, 15, 3, "ok"),
        ("disk", "lagt", 1): (9, 4, 0, "beyond log end"),
        ("disk", "lagt", 2): (None, 6, None, "no committed offset"),
        ("disk", "gone", 0): (2, None, None, "topic not found"),
        ("memory", "memt", 0): (1, None, None, "no topic logs"),
    }


def test_offsets_lag_as_of_until(run: dict[str, Any], spark: Any) -> None:
    from storage.pipeline import jobs, lag

    until = run["middle_ms"]
    raw = spark.read.format("kcoord-log").load([run["disk"]])
    recs = jobs.apply_window(raw, None, until)
    logs = lag.read_inputs([run["disk"]])
    rows = _lag_rows(lag.offsets_lag(recs, jobs.offsets_latest(recs), logs, until))
    assert rows == {
        ("disk", "lagt", 0): (3, 10, 7, "ok"),  # the 5 later records are not counted
        ("disk", "lagt", 1): (9, 4, 0, "beyond log end"),
        ("disk", "lagt", 2): (None, 6, None, "no committed offset"),
        ("disk", "gone", 0): (2, None, None, "topic not found"),
    }


def test_report_shows_lag_over_time_and_uncommitted_partitions(run: dict[str, Any]) -> None:
    out: Path = run["out"]
    png = out / "plots" / "consumer_lag.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (out / "report.md").read_text()
    assert "![Consumer lag over time](plots/consumer_lag.png)" in md
    never = md.split("## Partitions with no committed offset", 1)[1].split("##", 1)[0]
    assert "| disk/lagger | lagt | 2 | 6 |" in never
    assert never.count("| disk/lagger |") == 1
    assert "no topic logs in the data directory" in md and run["memory"] in md
    assert "<img src='plots/consumer_lag.png'" in (out / "report.html").read_text()


def test_lag_history_takes_each_commit_against_the_log_end_of_its_time(
    run: dict[str, Any], spark: Any
) -> None:
    from storage.pipeline import jobs, lag

    raw = spark.read.format("kcoord-log").load([run["disk"]])
    commits = jobs.offset_commits(jobs.apply_window(raw, None, None))
    logs = lag.read_inputs([run["disk"]])
    history = lag.lag_history(commits, [(run["disk"], GROUP)], logs, 1000)
    # First commits: lagt-0 10 - 3 = 7, lagt-1 beyond its end = 0 (gone-0: topic deleted,
    # left out); then lagt-0 15 - 12 = 3.
    assert [(h["lag"], h["partitions"]) for h in history] == [(7, 2), (3, 2)]


def test_report_lists_server_restarts(run: dict[str, Any]) -> None:
    from storage.starts import read_starts

    starts = read_starts(run["disk"])
    assert starts is not None and len(starts) == 2
    assert run["middle_ms"] < starts[1] <= run["restart_ms"]
    md = (run["out"] / "report.md").read_text()
    line = next(ln for ln in md.splitlines() if ln.startswith("- **server restarts**"))
    assert f"{run['disk']}: 1 (" in line and f"{run['memory']}: 0" in line


def test_quiet_run_prints_nothing_on_stderr(run: dict[str, Any], tmp_path: Path) -> None:
    """``-q`` in a process of its own (a JVM of its own): Spark's start-up banner
    ("Setting default log level...") included, nothing reaches stderr."""
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (root, os.environ.get("PYTHONPATH", "")) if p)}
    proc = subprocess.run(
        [sys.executable, "-m", "coordinator", "pipeline", "-q", "-i", run["memory"],
         "-o", str(tmp_path / "quiet")],
        capture_output=True, text=True, timeout=600, env=env, cwd=root,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "report.md" in proc.stdout
