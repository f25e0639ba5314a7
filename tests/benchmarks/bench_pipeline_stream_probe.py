"""The Structured Streaming side of ``kcoord pipeline --follow`` (issue 34 item 5): what a
streaming query over a live data directory costs while idle, how soon it sees an append,
and whether Spark accepts the datasets' windows on a stream.

    python tests/benchmarks/bench_pipeline_stream_probe.py [--trigger 1.0] [--idle 30]

A Python streaming Data Source whose offset is the segment files' total size (the
cheapest change check a stream can make; a real source would also parse the appended
entries) drives a ``foreachBatch`` query with a ``--trigger`` seconds processing-time
trigger on one ``local[2]`` session. Measured: CPU seconds per minute of the driver, the
JVM and its Python workers while nothing is appended, and the time from an append to
the ``foreachBatch`` call that carries it (before any dataset is computed). Then the
``offset_commits`` plan (``lag``/``lead`` over a row-ordered window) is applied to a
streaming DataFrame of the log's schema, to show whether Spark would run it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for path in (ROOT, os.path.join(ROOT, "tests", "pipeline"), os.path.dirname(__file__)):
    if path not in sys.path:
        sys.path.insert(0, path)

from bench_pipeline import _proc_cpu  # noqa: E402
from synthetic import write_log  # noqa: E402

from storage.log import Log  # noqa: E402
from storage.records import OffsetCommitKey, OffsetCommitValue, Record  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trigger", type=float, default=1.0)
    p.add_argument("--idle", type=float, default=30.0)
    p.add_argument("--appends", type=int, default=5)
    args = p.parse_args()

    from pyspark.sql.datasource import (
        DataSource,
        DataSourceStreamReader,
        InputPartition,
    )

    from storage.pipeline.jvm_cds import CDS_ENV
    from storage.pipeline.session import build_session

    os.environ.setdefault(CDS_ENV, "0")
    work = tempfile.mkdtemp(prefix="kcoord-bench-stream-")
    data_dir = os.path.join(work, "data")
    write_log(data_dir, seed=3, steps=40)

    class SizeReader(DataSourceStreamReader):
        def __init__(self, directory: str) -> None:
            self.directory = directory

        def initialOffset(self) -> dict[str, int]:
            return {"bytes": 0}

        def latestOffset(self) -> dict[str, int]:
            from storage.directory import find_segments

            return {"bytes": sum(os.path.getsize(s.path) for s in find_segments(self.directory))}

        def partitions(self, start: dict[str, int], end: dict[str, int]) -> list[Any]:
            return [InputPartition((start["bytes"], end["bytes"]))]

        def read(self, partition: Any) -> Iterator[tuple[int]]:
            yield (int(partition.value[1]),)

    class SizeSource(DataSource):
        @classmethod
        def name(cls) -> str:
            return "kcoord-size-probe"

        def schema(self) -> str:
            return "bytes long"

        def streamReader(self, schema: Any) -> SizeReader:
            return SizeReader(self.options["path"])

    spark = build_session("local[2]", quiet=True)
    spark.dataSource.register(SizeSource)
    jvm_pid = spark.sparkContext._gateway.proc.pid

    def tree() -> dict[int, float]:
        """CPU seconds of the JVM and of every process under it, by pid."""
        out = {jvm_pid: sum(_proc_cpu(jvm_pid)[1:])}
        for name in os.listdir("/proc"):
            if name.isdigit() and int(name) != jvm_pid:
                pid = int(name)
                try:
                    ppid, own, children = _proc_cpu(pid)
                    while ppid > 1 and ppid != jvm_pid:
                        ppid = _proc_cpu(ppid)[0]
                except (OSError, IndexError, ValueError):
                    continue
                if ppid == jvm_pid:
                    out[pid] = own + children
        return out

    def idle_cpu(seconds: float) -> float:
        """CPU of the driver, the JVM and its workers over ``seconds``, sampled every 0.1 s
        so that a Python worker that starts and ends in between still counts (a source's
        runner is started per batch; its CPU would leave a sum taken only at the ends)."""
        first, last = tree(), {}
        driver0, sampler0 = time.process_time(), time.thread_time()
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            for pid, used in tree().items():
                last[pid] = used
            time.sleep(0.1)
        # The driver's CPU without this sampling thread's own.
        driver = (time.process_time() - driver0) - (time.thread_time() - sampler0)
        return driver + sum(
            used - first.get(pid, 0.0) for pid, used in last.items())

    seen: list[tuple[float, int]] = []
    arrived = threading.Condition()

    def batch(df: Any, batch_id: int) -> None:
        rows = df.collect()
        with arrived:
            seen.extend((time.perf_counter(), int(r["bytes"])) for r in rows)
            arrived.notify_all()

    query = (spark.readStream.format("kcoord-size-probe").option("path", data_dir).load()
             .writeStream.foreachBatch(batch)
             .option("checkpointLocation", os.path.join(work, "checkpoint"))
             .trigger(processingTime=f"{args.trigger} seconds").start())
    with arrived:
        arrived.wait_for(lambda: bool(seen), timeout=300)
    time.sleep(5)  # the first batches' planning out of the way
    t0 = time.perf_counter()
    used = idle_cpu(args.idle)
    wall = time.perf_counter() - t0
    print(f"streaming, trigger {args.trigger} s, idle {wall:.0f} s: {used:.2f} CPU s "
          f"({60 * used / wall:.2f} CPU s per minute; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())})", flush=True)
    waits = []
    for i in range(args.appends):
        time.sleep(0.37 * (i + 1) % args.trigger + 0.5)
        before = len(seen)
        with Log.open(data_dir, fsync="never") as appender:
            appended = time.perf_counter()
            appender.append([Record(OffsetCommitKey("probe", "topic-0", 0),
                                    OffsetCommitValue(10**12 + i, 3, "", int(time.time() * 1000)))])
        with arrived:
            arrived.wait_for(lambda b=before: len(seen) > b, timeout=300)  # type: ignore[misc]
            waits.append(seen[before][0] - appended)
    print(f"append -> foreachBatch call: median {statistics.median(waits):.2f} s, max "
          f"{max(waits):.2f} s over {len(waits)} appends", flush=True)
    query.stop()

    from pyspark.sql import functions as F

    from storage.pipeline import jobs
    from storage.pipeline.source import spark_schema

    stream = (spark.readStream.format("rate").option("rowsPerSecond", 1).load()
              .select(*[F.lit(None).cast(f.dataType).alias(f.name)
                        for f in spark_schema().fields]))
    try:
        commits = jobs.offset_commits(stream)
        probe = commits.writeStream.format("noop").start()
        probe.stop()
        print("offset_commits on a stream: accepted", flush=True)
    except Exception as exc:
        print(f"offset_commits on a stream: refused: {str(exc).splitlines()[0][:300]}",
              flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
