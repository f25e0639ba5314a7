"""Where a whole ``kcoord pipeline`` run spends its time, and how much work Spark does.

    python tests/benchmarks/bench_pipeline_profile.py --records 1000000 [--master local[2]]
    python tests/benchmarks/bench_pipeline_profile.py --input DIR [...] [-- --conf k=v ...]

Runs the CLI (``storage.pipeline.cli.main``) once in this process, cold (the CLI starts the
JVM), on the synthetic generator's log of ``--records`` offset commits
(``synthetic.write_commits``: 10k keys, 4 segments; 10^6 records are 63 MB) or on the
given inputs. Each progress line is printed with the wall time and the CPU seconds so far
of this Python process (the driver: parsing on the driver, planning calls, the report),
of the JVM and of the Python workers under it; CPU is what the run costs whatever else
loads the machine, wall time is not. Then, from Spark's event log (written to a temporary
directory), the counts that do not depend on load: jobs, stages (run / planned, skipped
ones included), tasks, SQL executions.
"""

from __future__ import annotations

import argparse
import glob
import io
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for path in (ROOT, os.path.join(ROOT, "tests", "pipeline"), os.path.dirname(__file__)):
    if path not in sys.path:
        sys.path.insert(0, path)

from bench_pipeline import cpu_split  # noqa: E402


def event_counts(directory: str, stages: bool = False) -> dict[str, int]:
    """Jobs, stages and tasks of the one application logged under ``directory``; with
    ``stages``, print each stage's tasks, executor CPU and GC time, and the
    SQL execution (its description) it ran for."""
    counts = {"jobs": 0, "stages run": 0, "stages planned": 0, "tasks": 0, "sql executions": 0}
    per_stage: dict[int, list[Any]] = {}
    stage_sql: dict[int, str] = {}
    for path in glob.glob(os.path.join(directory, "**", "*"), recursive=True):
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as f:
            for line in f:
                event = json.loads(line)
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
                    per_stage.setdefault(info["Stage ID"], [0, 0.0, 0.0, ""])[3] = (
                        info["Stage Name"].split(" at ")[0][:40])
                elif kind == "SparkListenerTaskEnd":
                    counts["tasks"] += 1
                    metrics = event.get("Task Metrics") or {}
                    row = per_stage.setdefault(event["Stage ID"], [0, 0.0, 0.0, ""])
                    row[0] += 1
                    row[1] += metrics.get("Executor CPU Time", 0) / 1e9
                    row[2] += metrics.get("JVM GC Time", 0) / 1e3
                elif kind.endswith("SparkListenerSQLExecutionStart"):
                    counts["sql executions"] += 1
    if stages:
        for sid, (tasks, cpu, gc, name) in sorted(per_stage.items()):
            print(f"  stage {sid:3d} (sql {stage_sql.get(sid, '-')}): {tasks} tasks, "
                  f"executor CPU {cpu:5.2f} s, GC {gc:5.2f} s  {name}")
    return counts


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--records", type=int, default=1_000_000)
    p.add_argument("--input", nargs="+")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--workdir", default=os.path.join("/tmp", "kcoord-bench-pipeline"))
    p.add_argument("--stages", action="store_true", help="print every stage's tasks and CPU")
    p.add_argument("extra", nargs="*", help="more kcoord pipeline arguments (after --)")
    args = p.parse_args()
    if args.input:
        inputs = args.input
    else:
        from bench_pipeline import log_dir

        inputs = [log_dir(args.workdir, args.records, 4)]
    from storage.pipeline import cli

    events = tempfile.mkdtemp(prefix="kcoord-profile-events-")
    out = tempfile.mkdtemp(prefix="kcoord-profile-out-")
    lock = threading.Lock()
    began = time.perf_counter()
    cpu0 = time.process_time()
    jvm: list[int] = []

    class Lines(io.StringIO):
        """Progress lines with wall time and CPU so far."""

        def write(self, text: str) -> int:
            if not text.strip():
                return len(text)
            if not jvm:
                from pyspark import SparkContext

                gateway = SparkContext._gateway
                proc = getattr(gateway, "proc", None) if gateway is not None else None
                if proc is not None:
                    jvm.append(proc.pid)
            own, workers = cpu_split(jvm[0]) if jvm else (0.0, 0.0)
            driver = time.process_time() - cpu0
            line = (f"{text.rstrip()}   | wall {time.perf_counter() - began:5.1f} s, CPU: "
                    f"driver {driver:4.1f} s, JVM {own:5.1f} s, workers {workers:4.1f} s\n")
            with lock:
                sys.stdout.write(line)
                sys.stdout.flush()
            return len(text)

    print(f"# kcoord pipeline -i {' '.join(inputs)} --master {args.master} "
          f"({os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())})", flush=True)
    status = cli.main(
        ["-i", *inputs, "-o", out, "--master", args.master,
         "--conf", "spark.eventLog.enabled=true", "--conf", f"spark.eventLog.dir={events}",
         "--conf", "spark.eventLog.compress=false", *args.extra],
        stdout=io.StringIO(), stderr=Lines(),
    )
    wall = time.perf_counter() - began
    counts = event_counts(events, args.stages)
    print(f"exit status {status}, {wall:.1f} s wall (in-process, the JVM stopped; load "
          f"average {os.getloadavg()[0]:.1f}); "
          + ", ".join(f"{v} {k}" for k, v in counts.items()), flush=True)
    shutil.rmtree(events, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
