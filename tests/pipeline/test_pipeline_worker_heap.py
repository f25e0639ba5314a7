"""The Data Source freezes a reused Spark worker's heap (``source.freeze_worker_heap``).

Each case runs in a fresh interpreter (a frozen heap would stay frozen in pytest's), with
or without ``SPARK_REUSE_WORKER`` (what Spark sets in its reused Python workers), over a
real log on disk; the rows read are compared with the in-process parser's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pipeline_support import NEEDS_EXTRA

pytest.importorskip("pyspark", reason=NEEDS_EXTRA)

from synthetic import write_commits

from storage.directory import find_segments
from storage.pipeline.source import reader_schema
from storage.pipeline.vector_parse import segment_batches

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_SCRIPT = """
import gc, json, sys
from storage.pipeline.source import KcoordLogDataSource, freeze_worker_heap, pruned_schema

source = KcoordLogDataSource({"path": sys.argv[1]})
after_create = gc.get_freeze_count()
reader = source.reader(pruned_schema(["log_index", "offset"]))
reads = []
for _ in range(2):
    rows = []
    for partition in reader.partitions():
        for batch in reader.read(partition):
            rows += batch.to_pylist()
    gc.collect()
    reads.append({"rows": rows, "young": len(gc.get_objects()),
                  "frozen": gc.get_freeze_count()})
print(json.dumps({"after_create": after_create, "reads": reads,
                  "again": freeze_worker_heap("read")}))
"""


def _run(log: Path, reuse: bool) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "SPARK_REUSE_WORKER"}
    if reuse:
        env["SPARK_REUSE_WORKER"] = "1"
    env["PYTHONPATH"] = ROOT
    out = subprocess.run([sys.executable, "-c", _SCRIPT, str(log)], env=env, check=True,
                         capture_output=True, text=True, timeout=60)
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def test_a_reused_worker_freezes_its_heap_once(tmp_path: Path) -> None:
    log = tmp_path / "log"
    write_commits(str(log), 3000, segments=2, seed=5)
    reused = _run(log, reuse=True)
    plain = _run(log, reuse=False)
    # The rows are the same either way, and the same on the second read.
    schema = reader_schema(["log_index", "offset"])
    expected = [row for seg in find_segments(str(log))
                for batch in segment_batches(seg, schema) for row in batch.to_pylist()]
    assert len(expected) == 3000
    for run in (reused, plain):
        for read in run["reads"]:
            assert read["rows"] == expected
    # Without SPARK_REUSE_WORKER nothing is frozen.
    assert plain["after_create"] == 0
    assert all(read["frozen"] == 0 for read in plain["reads"])
    assert plain["reads"][0]["young"] > 10_000
    # In a reused worker: the imports are frozen when the source is made, what the first
    # read imported after it; a full collection then walks only the few objects made since.
    assert reused["after_create"] > 10_000
    assert reused["reads"][0]["frozen"] > reused["after_create"]
    assert reused["reads"][1]["young"] < 2_000
    assert reused["again"] is False
