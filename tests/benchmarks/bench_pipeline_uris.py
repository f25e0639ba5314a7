"""Benchmark: reading a kcoord log by plain path (the ``kcoord-log`` Data Source, ``open()``
in the Python task) against by ``file://`` URI (Spark's ``binaryFile`` source, Hadoop's
filesystem, bytes to the Python task through Arrow, then the same parser).

    python tests/benchmarks/bench_pipeline_uris.py --records 1000000 --segments 4 --repeat 5

One ``local[2]`` session; the log (offset commits, ``synthetic.write_commits``) is written
once. Each round reads the log both ways (order alternating), into Spark's ``noop`` sink,
read alone and read + ``offsets_latest``; prints the median, min and max wall time of each,
the ratio of medians, and the load average. Both ways' ``offsets_latest`` are compared
first (they must be equal).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for path in (ROOT, os.path.join(ROOT, "tests", "pipeline")):
    if path not in sys.path:
        sys.path.insert(0, path)

from synthetic import write_commits  # noqa: E402


def frame(spark: Any, data_dir: str, way: str) -> Any:
    from storage.pipeline.hadoop_fs import HadoopFiles
    from storage.pipeline.remote_source import read_segments
    from storage.pipeline.uris import location

    if way == "path":
        return spark.read.format("kcoord-log").load(data_dir)
    listed = HadoopFiles(spark).open_input(location(Path(data_dir).as_uri()))
    return read_segments(spark, [listed], strict=False)


def timed(spark: Any, data_dir: str, way: str, with_job: bool) -> float:
    from storage.pipeline import jobs

    began = time.perf_counter()
    df = frame(spark, data_dir, way)
    target = jobs.offsets_latest(df) if with_job else df
    target.write.format("noop").mode("overwrite").save()
    return time.perf_counter() - began


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--records", type=int, default=1_000_000)
    p.add_argument("--segments", type=int, default=4)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--workdir", default=os.path.join("/tmp", "kcoord-bench-pipeline-uris"))
    args = p.parse_args()

    from storage.pipeline import jobs
    from storage.pipeline.session import build_session

    data_dir = os.path.join(args.workdir, f"commits-{args.records}-{args.segments}seg")
    if not os.path.exists(os.path.join(data_dir, ".complete")):
        write_commits(data_dir, args.records, segments=args.segments)
        open(os.path.join(data_dir, ".complete"), "w").close()
    size = sum(e.stat().st_size for e in os.scandir(data_dir) if e.name.endswith(".log"))
    print(f"{args.records:,} records, {args.segments} segments, {size / 2**20:.1f} MiB")
    spark = build_session("local[2]", app_name="bench-pipeline-uris")
    try:
        results = {}
        for way in ("path", "uri"):
            results[way] = sorted(
                tuple(r) for r in jobs.offsets_latest(frame(spark, data_dir, way))
                .select("group", "topic", "partition", "offset").collect()
            )
        assert results["path"] == results["uri"], "the two ways disagree"
        print(f"offsets_latest equal both ways ({len(results['path']):,} offsets)")
        for with_job in (False, True):
            times: dict[str, list[float]] = {"path": [], "uri": []}
            for i in range(args.repeat):
                order = ("path", "uri") if i % 2 == 0 else ("uri", "path")
                for way in order:
                    times[way].append(timed(spark, data_dir, way, with_job))
            what = "read + offsets_latest" if with_job else "read only"
            for way, values in times.items():
                print(f"{what:22} {way:4}: median {statistics.median(values):.2f} s, "
                      f"min {min(values):.2f} s, max {max(values):.2f} s  "
                      f"({args.records / statistics.median(values):,.0f} records/s)")
            ratio = statistics.median(times["uri"]) / statistics.median(times["path"])
            print(f"{what:22} uri/path median ratio: {ratio:.2f}")
        print(f"load average: {os.getloadavg()}")
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
