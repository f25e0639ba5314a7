"""Benchmark of the Spark pipeline: reading kcoord logs + ``offsets_latest``.

    python tests/benchmarks/bench_pipeline.py                      # 10^6 records
    python tests/benchmarks/bench_pipeline.py --records 1000000 10000000
    python tests/benchmarks/bench_pipeline.py --scaling            # + partitions scaling

For each size it writes a log of offset commits (``synthetic.write_commits``: 10k keys,
one tombstone in 200, in ``--segments`` segment files), then measures in one run:

- the pure-Python replay of the same log: ``storage.log.Log.replay`` into a dict (the
  coordinator's own start-up path), the per-record parser alone (``parse.py``) and the
  Data Source's vectorised parser to Arrow batches (``vector_parse.py``);
- Spark ``local[2]``: session start (JVM), first job, first use of the Python workers
  (the Data Source on a tiny log), then reading + ``offsets_latest`` (result written to
  Spark's ``noop`` sink) cold (first time on this data) and warm (best of ``--repeat``),
  and reading alone, so the job's time splits into reading (Python workers parsing and
  shipping Arrow batches) and the aggregation. Every run's result is checked against
  the replay.

The warm runs are repeated with the Data Source given a schema of only the columns
``offsets_latest`` reads (``source.pruned_schema``): Spark does not prune a Python Data
Source's columns, so every column of every row is converted by the JVM otherwise.

``--cold-cli N`` instead measures whole cold runs of ``kcoord pipeline -q`` (a new
process each: JVM start, the jobs, the report) on a small log of about N records,
``--repeat`` runs, and prints each and the median. ``--cold-jobs N``: one run of the
pipeline in this process on the same log (the session built first, as the CLI builds it
for a small input), with its progress lines and the JVM's CPU at each, then how many
Spark jobs and stages it ran.

``--scaling`` runs the warm measurement on 10^6 records split into 1, 2, 4, 8 segments
and into 2 data directories of 4 segments each. Numbers depend on the machine's load:
the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for path in (ROOT, os.path.join(ROOT, "tests", "pipeline")):
    if path not in sys.path:
        sys.path.insert(0, path)

from synthetic import write_commits  # noqa: E402

from storage.directory import find_segments  # noqa: E402
from storage.log import Log  # noqa: E402
from storage.pipeline.parse import parse_segment_chunks  # noqa: E402


def log_dir(workdir: str, records: int, segments: int, part: int = 0) -> str:
    """A cached log of ``records`` commits in ``segments`` segments."""
    path = os.path.join(workdir, f"commits-{records}-{segments}seg-{part}")
    marker = os.path.join(path, ".complete")
    if not os.path.exists(marker):
        shutil.rmtree(path, ignore_errors=True)
        began = time.perf_counter()
        write_commits(path, records, segments=segments, seed=part)
        open(marker, "w").close()
        print(
            f"  wrote {records:,} records in {segments} segments to {path} "
            f"({time.perf_counter() - began:.1f} s)",
            flush=True,
        )
    return path


def replay(path: str) -> tuple[float, dict[tuple[str, str, int], int]]:
    """The coordinator's replay: storage's Log.replay, last write wins."""
    began = time.perf_counter()
    state: dict[Any, Any] = {}
    with Log.open(path, fsync="never") as log:
        for record in log.replay():
            if record.value is None:
                state.pop(record.key, None)
            else:
                state[record.key] = record.value
    took = time.perf_counter() - began
    return took, {(k.group, k.topic, k.partition): v.offset for k, v in state.items()}


def parse_only(path: str) -> tuple[float, int]:
    """The per-record parser alone (Chunks, no Arrow)."""
    began = time.perf_counter()
    n = 0
    for seg in find_segments(path):
        for chunk in parse_segment_chunks(seg):
            n += len(chunk)
    return time.perf_counter() - began, n


def vector_only(path: str) -> tuple[float, int]:
    """The Data Source's parser alone: segment files to Arrow batches of every column."""
    from storage.pipeline.source import arrow_schema
    from storage.pipeline.vector_parse import segment_batches

    began = time.perf_counter()
    n = 0
    for seg in find_segments(path):
        for batch in segment_batches(seg, arrow_schema()):
            n += batch.num_rows
    return time.perf_counter() - began, n


def _proc_cpu(pid: int) -> tuple[int, float, float]:
    """(parent pid, own CPU seconds, CPU seconds of waited-for children) of a process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (
        int(fields[1]),
        (int(fields[11]) + int(fields[12])) / tick,
        (int(fields[13]) + int(fields[14])) / tick,
    )


def cpu_split(jvm_pid: int) -> tuple[float, float]:
    """CPU seconds so far of the JVM itself and of its Python workers (every process
    under the JVM, with their reaped children)."""
    parents: dict[int, int] = {}
    cpu: dict[int, tuple[float, float]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                ppid, own, children = _proc_cpu(int(name))
            except (OSError, IndexError, ValueError):
                continue
            parents[int(name)] = ppid
            cpu[int(name)] = (own, children)

    def under_jvm(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == jvm_pid:
                return True
        return False

    workers = sum(own + children for pid, (own, children) in cpu.items() if under_jvm(pid))
    return cpu.get(jvm_pid, (0.0, 0.0))[0], workers


#: The columns offsets_latest reads (a pruned read ships only these to the JVM).
OFFSET_COLUMNS = ("data_dir", "log_index", "record_type", "tombstone", "group", "topic",
                  "partition", "offset", "leader_epoch", "metadata", "commit_timestamp",
                  "expire_timestamp")


def spark_run(
    spark: Any, paths: list[str], *, read_only: bool = False, pruned: bool = False
) -> float:
    from storage.pipeline import jobs
    from storage.pipeline.source import pruned_schema

    reader = spark.read.format("kcoord-log")
    if pruned:
        reader = reader.schema(pruned_schema(OFFSET_COLUMNS))
    df = reader.load(paths)
    began = time.perf_counter()
    target = df if read_only else jobs.offsets_latest(df)
    target.write.format("noop").mode("overwrite").save()
    return time.perf_counter() - began


def check(spark: Any, paths: list[str], oracle: dict[tuple[str, str, int], int]) -> None:
    from storage.pipeline import jobs

    df = spark.read.format("kcoord-log").load(paths)
    got = {
        (r["group"], r["topic"], r["partition"]): r["offset"]
        for r in jobs.offsets_latest(df).collect()
    }
    assert got == oracle, "offsets_latest differs from the replay"


CPU: dict[str, tuple[float, float]] = {}


def best(
    spark: Any, paths: list[str], repeat: int, read_only: bool = False, pruned: bool = False
) -> float:
    """Best wall time of ``repeat`` runs; CPU seconds (JVM, Python workers) of the best
    run are left in ``CPU["last"]``."""
    jvm_pid = spark.sparkContext._gateway.proc.pid
    results = []
    for _ in range(repeat):
        before = cpu_split(jvm_pid)
        took = spark_run(spark, paths, read_only=read_only, pruned=pruned)
        after = cpu_split(jvm_pid)
        results.append((took, (after[0] - before[0], after[1] - before[1])))
    took, CPU["last"] = min(results)
    return took


def small_log(workdir: str, records: int) -> str:
    """A cached mixed log (groups, rebalances, commits) of about ``records`` records."""
    from synthetic import write_log

    path = os.path.join(workdir, f"small-{records}")
    if not os.path.exists(os.path.join(path, ".complete")):
        shutil.rmtree(path, ignore_errors=True)
        write_log(path, seed=3, steps=max(1, records * 60 // 800))
        open(os.path.join(path, ".complete"), "w").close()
    return path


def cold_jobs(workdir: str, records: int) -> int:
    """One pipeline run in this process: phases with the JVM's CPU, Spark jobs and stages."""
    import io

    from storage.pipeline import cli
    from storage.pipeline.driver_read import segment_bytes
    from storage.pipeline.session import build_session

    path = small_log(workdir, records)
    began = time.perf_counter()
    spark = build_session("local[*]", quiet=True, register_source=False,
                          input_bytes=segment_bytes([path]))
    jvm_pid = spark.sparkContext._gateway.proc.pid
    print(f"# session {time.perf_counter() - began:.1f} s, JVM CPU {cpu_split(jvm_pid)[0]:.1f} s "
          f"(load average {os.getloadavg()[0]:.1f})", flush=True)

    import threading

    lock = threading.Lock()

    class Lines(io.StringIO):
        """The progress lines (from several threads), each with the JVM's CPU so far."""

        def write(self, text: str) -> int:
            if text.strip():
                line = f"{text.rstrip()}  (JVM CPU {cpu_split(jvm_pid)[0]:.1f} s)\n"
                with lock:
                    sys.stdout.write(line)
                    sys.stdout.flush()
            return len(text)

    out = os.path.join(workdir, "jobs-out")
    shutil.rmtree(out, ignore_errors=True)
    status = cli.main(["-i", path, "-o", out], stdout=io.StringIO(), stderr=Lines())
    tracker = spark.sparkContext.statusTracker()
    jobs = tracker.getJobIdsForGroup(None)
    stages = {s for j in jobs if (info := tracker.getJobInfo(j)) for s in info.stageIds}
    print(f"exit status {status}: {len(jobs)} Spark jobs, {len(stages)} stages (skipped ones "
          f"included; load average {os.getloadavg()[0]:.1f})")
    spark.stop()
    return status


def cold_cli(workdir: str, records: int, runs: int) -> int:
    """Whole cold runs of the CLI (a new process each) on a small mixed log."""
    import statistics
    import subprocess

    path = small_log(workdir, records)
    count = sum(len(chunk) for seg in find_segments(path) for chunk in parse_segment_chunks(seg))
    print(f"# cold `kcoord pipeline -q` on {count:,} records ({os.cpu_count()} CPUs, load "
          f"average {' '.join(f'{x:.1f}' for x in os.getloadavg())})", flush=True)
    times = []
    for i in range(runs):
        out = os.path.join(workdir, "cold-out")
        shutil.rmtree(out, ignore_errors=True)
        began = time.perf_counter()
        subprocess.run([sys.executable, "-m", "coordinator", "pipeline", "-q", "-i", path,
                        "-o", out], check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - began)
        print(f"run {i + 1}: {times[-1]:.1f} s (load average "
              f"{os.getloadavg()[0]:.1f})", flush=True)
    print(f"median {statistics.median(times):.1f} s, min {min(times):.1f} s")
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--records", type=int, nargs="+", default=[1_000_000])
    p.add_argument("--segments", type=int, default=4)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--master", default="local[2]")
    p.add_argument("--scaling", action="store_true")
    p.add_argument("--workdir", default=os.path.join("/tmp", "kcoord-bench-pipeline"))
    p.add_argument("--cold-cli", type=int, metavar="N",
                   help="time cold `kcoord pipeline -q` runs on a log of about N records")
    p.add_argument("--cold-jobs", type=int, metavar="N",
                   help="one in-process run on that log: phases, JVM CPU, Spark jobs")
    args = p.parse_args()
    if args.cold_jobs:
        return cold_jobs(args.workdir, args.cold_jobs)
    if args.cold_cli:
        return cold_cli(args.workdir, args.cold_cli, args.repeat)
    os.makedirs(args.workdir, exist_ok=True)
    print(
        f"# kcoord pipeline benchmark ({args.master}, {os.cpu_count()} CPUs, load average "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())})",
        flush=True,
    )

    print("\n## data", flush=True)
    logs = {n: log_dir(args.workdir, n, args.segments) for n in args.records}
    tiny = log_dir(args.workdir, 1000, 2)

    print("\n## pure Python (1 core)", flush=True)
    oracles: dict[int, dict[tuple[str, str, int], int]] = {}
    rows = []
    for n, path in logs.items():
        took, oracle = replay(path)
        oracles[n] = oracle
        parse_took, parsed = parse_only(path)
        assert parsed == n
        vector_took, parsed = vector_only(path)
        assert parsed == n
        rows.append((n, took, parse_took, vector_took, len(oracle)))
    print(
        "| records | Log.replay -> dict | records/s | per-record parser alone | records/s "
        "| vectorised parser to Arrow | records/s | live keys |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, took, parse_took, vector_took, keys in rows:
        print(
            f"| {n:,} | {took:.2f} s | {n / took:,.0f} | {parse_took:.2f} s "
            f"| {n / parse_took:,.0f} | {vector_took:.2f} s | {n / vector_took:,.0f} "
            f"| {keys:,} |",
            flush=True,
        )

    print(f"\n## Spark {args.master}", flush=True)
    began = time.perf_counter()
    from storage.pipeline.session import build_session

    spark = build_session(args.master, app_name="kcoord-bench")
    jvm = time.perf_counter() - began
    began = time.perf_counter()
    spark.range(1000).selectExpr("sum(id)").collect()
    first_job = time.perf_counter() - began
    began = time.perf_counter()
    spark.read.format("kcoord-log").load(tiny).count()
    workers = time.perf_counter() - began
    print("| phase | time |\n|---|---:|")
    print(f"| session start (JVM) | {jvm:.1f} s |")
    print(f"| first job (range sum) | {first_job:.1f} s |")
    print(f"| first Python-worker use (Data Source, 1,000 records) | {workers:.1f} s |", flush=True)

    print(
        "\n| records | segments | read + offsets_latest, cold | warm (best of "
        f"{args.repeat}) | records/s warm | CPU: JVM / Python workers | read only, warm "
        "| records/s | CPU: JVM / Python workers |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    pruned_runs: dict[int, tuple[float, tuple[float, float], float, tuple[float, float]]] = {}
    for n, path in logs.items():
        cold = spark_run(spark, [path])
        spark_run(spark, [path])  # one more warm-up (the JIT compiles the hot loops)
        warm = best(spark, [path], args.repeat)
        warm_cpu = CPU["last"]
        read = best(spark, [path], args.repeat, read_only=True)
        read_cpu = CPU["last"]
        check(spark, [path], oracles[n])
        pruned_warm = best(spark, [path], args.repeat, pruned=True)
        pruned_warm_cpu = CPU["last"]
        pruned_read = best(spark, [path], args.repeat, read_only=True, pruned=True)
        pruned_runs[n] = (pruned_warm, pruned_warm_cpu, pruned_read, CPU["last"])
        print(
            f"| {n:,} | {args.segments} | {cold:.2f} s | {warm:.2f} s | {n / warm:,.0f} | "
            f"{warm_cpu[0]:.1f} s / {warm_cpu[1]:.1f} s | {read:.2f} s | {n / read:,.0f} | "
            f"{read_cpu[0]:.1f} s / {read_cpu[1]:.1f} s |",
            flush=True,
        )

    print(f"\n| records | pruned to {len(OFFSET_COLUMNS)} columns: read + offsets_latest, "
          "warm | records/s | CPU: JVM / Python workers | read only, warm | records/s "
          "| CPU: JVM / Python workers |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n, (warm, warm_cpu, read, read_cpu) in pruned_runs.items():
        print(f"| {n:,} | {warm:.2f} s | {n / warm:,.0f} | {warm_cpu[0]:.1f} s / "
              f"{warm_cpu[1]:.1f} s | {read:.2f} s | {n / read:,.0f} | {read_cpu[0]:.1f} s / "
              f"{read_cpu[1]:.1f} s |", flush=True)

    if args.scaling:
        n = 1_000_000
        print(f"\n## scaling: {n:,} records, warm (best of {args.repeat}, interleaved)")
        print(
            "| layout | input partitions | read + offsets_latest | records/s "
            "| CPU: JVM / Python workers | read only | records/s |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|")
        layouts = [
            (f"1 dir, {k} segment(s)", [log_dir(args.workdir, n, k)], k) for k in (1, 2, 4, 8)
        ]
        layouts.append(
            ("2 dirs x 4 segments", [log_dir(args.workdir, n // 2, 4, p) for p in (1, 2)], 8)
        )
        # Round-robin over the layouts, best run of each: the machine's other load varies
        # over time, and interleaving spreads that over every layout alike.
        jvm_pid = spark.sparkContext._gateway.proc.pid
        runs: dict[str, list[tuple[float, tuple[float, float]]]] = {}
        reads: dict[str, list[float]] = {}
        for _name, paths, _ in layouts:
            spark_run(spark, paths)
        for _ in range(args.repeat):
            for name, paths, _ in layouts:
                before = cpu_split(jvm_pid)
                took = spark_run(spark, paths)
                after = cpu_split(jvm_pid)
                runs.setdefault(name, []).append(
                    (took, (after[0] - before[0], after[1] - before[1]))
                )
                reads.setdefault(name, []).append(spark_run(spark, paths, read_only=True))
        for name, _, parts in layouts:
            warm, cpu = min(runs[name])
            read = min(reads[name])
            print(
                f"| {name} | {parts} | {warm:.2f} s | {n / warm:,.0f} | {cpu[0]:.1f} s / "
                f"{cpu[1]:.1f} s | {read:.2f} s | {n / read:,.0f} |",
                flush=True,
            )
    spark.stop()
    print(f"\nload average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
