"""Where a whole ``kcoord pipeline`` run spends its time, and how much work Spark does.

    python tests/benchmarks/bench_pipeline_profile.py --records 1000000 [--master local[2]]
    python tests/benchmarks/bench_pipeline_profile.py --input DIR [...] [-- --conf k=v ...]
    python tests/benchmarks/bench_pipeline_profile.py --records 1000000 --cluster --repeat 3

Runs the CLI (``storage.pipeline.cli.main``) once in this process, cold (the CLI starts the
JVM), on the synthetic generator's log of ``--records`` offset commits
(``synthetic.write_commits``: 10k keys, 4 segments; 10^6 records are 63 MB) or on the
given inputs. Each progress line is printed with the wall time and the CPU seconds so far
of this Python process (the driver: parsing on the driver, planning calls, the report),
of the JVM and of the Python workers under it; CPU is what the run costs whatever else
loads the machine, wall time is not. Then, from Spark's event log (written to a temporary
directory), the counts that do not depend on load: jobs, stages (run / planned, skipped
ones included), tasks, SQL executions, and how often the log itself was read: the rows
that came out of the scan of the segments (the ``kcoord-log`` source's ``BatchScan``, the
driver-read Arrow table's ``LocalTableScan``, the ``binaryFile`` decode's ``MapInArrow``),
summed over every task from Spark's SQL metrics, and the tasks that ran it. A log read
once gives its record count; a dataset that re-read it would add as many again.

``--cluster`` starts a Spark standalone cluster (a master and two one-core workers,
``tests/pipeline/standalone_cluster.py``) and runs against it, the executors on the base
interpreter with this venv's site-packages (kcoord's code shipped, as a user's cluster
would run it). ``--repeat N`` runs N cold runs, each in a new process (a new JVM), and
prints their median; ``--keep-output DIR`` keeps each run's output as DIR/run-K, and
``--compare A B`` checks that two outputs hold the same datasets row for row.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for path in (ROOT, os.path.join(ROOT, "tests", "pipeline"), os.path.dirname(__file__)):
    if path not in sys.path:
        sys.path.insert(0, path)

from bench_pipeline import cpu_split  # noqa: E402
from spark_events import event_counts  # noqa: E402


def dataset_rows(output: str, name: str) -> list[tuple[str, ...]]:
    """A dataset's rows, every column but ``data_dir`` (a path in one run, a URI in
    another), as sorted tuples of their reprs."""
    import pyarrow.parquet as pq

    table = pq.read_table(os.path.join(output, name))
    columns = sorted(c for c in table.column_names if c != "data_dir")
    return sorted(tuple(repr(v) for v in row.values())
                  for row in table.select(columns).to_pylist())


def compare(a: str, b: str) -> int:
    """0 if outputs ``a`` and ``b`` hold the same datasets row for row, else 1."""
    from storage.pipeline.report_data import PARTITIONING

    status = 0
    for name in PARTITIONING:
        left, right = dataset_rows(a, name), dataset_rows(b, name)
        same = left == right
        status |= not same
        print(f"{name}: {len(left):,} / {len(right):,} rows, {'equal' if same else 'DIFFER'}",
              flush=True)
    return status


@contextlib.contextmanager
def cluster_master(enabled: bool, master: str) -> Iterator[tuple[str, list[str]]]:
    """(master, extra CLI arguments): a standalone cluster of its own with ``enabled``."""
    if not enabled:
        yield master, []
        return
    from standalone_cluster import executor_settings, standalone_cluster

    with tempfile.TemporaryDirectory(prefix="kcoord-bench-cluster-") as work:
        began = time.perf_counter()
        with standalone_cluster(__import__("pathlib").Path(work)) as url:
            print(f"# standalone cluster {url} (master + 2 workers x 1 core, 1 GB) up in "
                  f"{time.perf_counter() - began:.1f} s", flush=True)
            yield url, ["--", *executor_settings()]


def repeat(args: argparse.Namespace, inputs: list[str]) -> int:
    """``args.repeat`` cold runs, each in a new process; their median wall time."""
    walls: list[float] = []
    with cluster_master(args.cluster, args.master) as (master, extra):
        for run in range(args.repeat):
            cmd = [sys.executable, os.path.abspath(__file__), "--input", *inputs,
                   "--master", master, "--workdir", args.workdir]
            if args.stages:
                cmd.append("--stages")
            if args.keep_output:
                cmd += ["--keep-output", os.path.join(args.keep_output, f"run-{run + 1}")]
            cmd += extra or (["--"] if args.extra else [])
            cmd += args.extra
            print(f"## run {run + 1} (load average "
                  f"{' '.join(f'{x:.1f}' for x in os.getloadavg())})", flush=True)
            done = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=False)
            sys.stdout.write(done.stdout)
            found = re.search(r"exit status 0, ([0-9.]+) s wall", done.stdout)
            if done.returncode or found is None:
                print(f"run {run + 1} failed (exit {done.returncode})")
                return 1
            walls.append(float(found.group(1)))
    print(f"# {len(walls)} runs: " + " / ".join(f"{w:.1f}" for w in walls)
          + f" s, median {statistics.median(walls):.1f} s (load average now "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())})", flush=True)
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--records", type=int, default=1_000_000)
    p.add_argument("--input", nargs="+")
    p.add_argument("--master", default="local[2]")
    p.add_argument("--workdir", default=os.path.join("/tmp", "kcoord-bench-pipeline"))
    p.add_argument("--stages", action="store_true", help="print every stage's tasks and CPU")
    p.add_argument("--cluster", action="store_true",
                   help="run on a standalone cluster of two one-core workers started here")
    p.add_argument("--repeat", type=int, default=0, help="cold runs, each a new process")
    p.add_argument("--keep-output", metavar="DIR", help="keep the output (DIR/run-K)")
    p.add_argument("--compare", nargs=2, metavar="OUT", help="compare two outputs and exit")
    p.add_argument("extra", nargs="*", help="more kcoord pipeline arguments (after --)")
    args = p.parse_args()
    if args.compare:
        return compare(*args.compare)
    if args.input:
        inputs = args.input
    else:
        from bench_pipeline import log_dir

        inputs = [log_dir(args.workdir, args.records, 4)]
    if args.repeat or args.cluster:
        args.repeat = args.repeat or 1
        return repeat(args, inputs)
    from storage.pipeline import cli

    events = tempfile.mkdtemp(prefix="kcoord-profile-events-")
    out = args.keep_output or tempfile.mkdtemp(prefix="kcoord-profile-out-")
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
    if not args.keep_output:
        shutil.rmtree(out, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
