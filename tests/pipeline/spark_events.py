"""Spark's own numbers for a pipeline run, from its event log (``spark.eventLog.enabled``):
jobs, stages, tasks, SQL executions, and how often the log itself was read.

The log's reads are the rows that came out of the plan nodes that scan the segments (the
``kcoord-log`` source's ``BatchScan``, the driver-read Arrow table's ``LocalTableScan``,
the ``binaryFile`` decode's ``MapInArrow``: the nodes whose output has the ``segment``
column), summed over every task from the SQL metrics' accumulator updates, and the tasks
that ran one. A cached plan appears under every query that uses the cache
(``InMemoryTableScan``'s child), with the same accumulators, so a log read once counts
its records once, however many datasets are derived from it.
"""

from __future__ import annotations

import glob
import json
import os
import re
from collections.abc import Iterator
from typing import Any

__all__ = ["EVENT_LOG_CONF", "event_counts"]

#: ``--conf`` arguments that make a run write an uncompressed event log to a directory.
EVENT_LOG_CONF = ("spark.eventLog.enabled=true", "spark.eventLog.compress=false")


#: Plan nodes that read the segments (their output has the ``segment`` column).
_LOG_SCANS = ("BatchScan", "LocalTableScan", "MapInArrow", "PythonMapInArrow")


def _plan_nodes(info: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield info
    for child in info.get("children", []):
        yield from _plan_nodes(child)


def _events(directory: str) -> Iterator[dict[str, Any]]:
    for path in sorted(glob.glob(os.path.join(directory, "**", "*"), recursive=True)):
        if os.path.isfile(path) and "appstatus" not in os.path.basename(path):
            with open(path, encoding="utf-8") as f:
                for line in f:
                    yield json.loads(line)


def event_counts(directory: str, stages: bool = False) -> dict[str, int]:
    """Jobs, stages and tasks of the one application logged under ``directory``, and the
    log's reads (rows out of the segment scans, the tasks that ran one); with ``stages``,
    print each stage's tasks, wall time, executor CPU and GC time, and the SQL execution
    (its description) it ran for."""
    counts = {"jobs": 0, "stages run": 0, "stages planned": 0, "tasks": 0, "sql executions": 0,
              "log rows scanned": 0, "log scan tasks": 0, "shuffle bytes written": 0}
    per_stage: dict[int, list[Any]] = {}
    stage_sql: dict[int, str] = {}
    scan_metrics: set[int] = set()
    scan_updates: dict[int, int] = {}
    scan_tasks: set[tuple[int, int]] = set()
    task_ends = []
    for event in _events(directory):
        kind = event["Event"]
        if kind == "SparkListenerJobStart":
            counts["jobs"] += 1
            counts["stages planned"] += len(event["Stage Infos"])
            sql = (event.get("Properties") or {}).get("spark.sql.execution.id", "-")
            for info in event["Stage Infos"]:
                stage_sql[info["Stage ID"]] = sql
        elif kind == "SparkListenerStageCompleted":
            counts["stages run"] += 1
            info = event["Stage Info"]
            row = per_stage.setdefault(info["Stage ID"], [0, 0.0, 0.0, "", 0.0])
            row[3] = info["Stage Name"].split(" at ")[0][:40]
            row[4] = (info.get("Completion Time", 0) - info.get("Submission Time", 0)) / 1e3
        elif kind == "SparkListenerTaskEnd":
            counts["tasks"] += 1
            metrics = event.get("Task Metrics") or {}
            row = per_stage.setdefault(event["Stage ID"], [0, 0.0, 0.0, "", 0.0])
            row[0] += 1
            row[1] += metrics.get("Executor CPU Time", 0) / 1e9
            row[2] += metrics.get("JVM GC Time", 0) / 1e3
            counts["shuffle bytes written"] += (
                metrics.get("Shuffle Write Metrics") or {}).get("Shuffle Bytes Written", 0)
            task_ends.append(event)
        elif kind.endswith(("SQLExecutionStart", "SQLAdaptiveExecutionUpdate")):
            if kind.endswith("SQLExecutionStart"):
                counts["sql executions"] += 1
            for node in _plan_nodes(event["sparkPlanInfo"]):
                if (node["nodeName"].startswith(_LOG_SCANS)
                        and re.search(r"\bsegment#", node.get("simpleString", ""))):
                    scan_metrics.update(m["accumulatorId"] for m in node.get("metrics", [])
                                        if m["name"] == "number of output rows")
    for event in task_ends:  # a plan may be logged after its first tasks ended
        for acc in event["Task Info"].get("Accumulables", []):
            if acc["ID"] in scan_metrics and str(acc.get("Update", "")).isdigit():
                scan_updates[acc["ID"]] = scan_updates.get(acc["ID"], 0) + int(acc["Update"])
                if int(acc["Update"]):
                    scan_tasks.add((event["Stage ID"], event["Task Info"]["Task ID"]))
    counts["log rows scanned"] = sum(scan_updates.values())
    counts["log scan tasks"] = len(scan_tasks)
    if stages:
        for sid, (tasks, cpu, gc, name, wall) in sorted(per_stage.items()):
            print(f"  stage {sid:3d} (sql {stage_sql.get(sid, '-')}): {tasks} tasks, "
                  f"wall {wall:5.2f} s, executor CPU {cpu:5.2f} s, GC {gc:5.2f} s  {name}")
    return counts
