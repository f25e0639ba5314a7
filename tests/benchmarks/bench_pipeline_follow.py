"""What ``kcoord pipeline --follow`` would cost as a kept-alive session that re-runs the
batch when the log changes (issue 34 item 5): latency from an append to its row in the
output, and CPU while nothing is appended.

    python tests/benchmarks/bench_pipeline_follow.py [--records 500] [--appends 5]
                                                     [--poll 1.0] [--idle 30]

One ``local[2]`` session is started and kept. A follow loop (a thread) looks at the
segment files' sizes and times every ``--poll`` seconds and, when they changed, runs the
batch pipeline (``storage.pipeline.cli.main``, in this process, on that session) into the
output directory, then notes which committed offsets ``offsets_latest`` holds. Measured:

- idle: ``--idle`` seconds with no append, the loop polling: CPU seconds of the driver
  (this process), the JVM and its Python workers, per minute;
- latency: ``--appends`` times, one OffsetCommit is appended through ``storage.log.Log``
  at a random moment of the poll interval, and the time until a finished re-run's
  ``offsets_latest`` holds it is taken (the poll's wait plus one warm re-run), with each
  re-run's CPU;
- a re-run every ``--poll`` seconds whatever happened (no change check): its CPU per
  minute, from the re-runs' CPU.

Wall times are noisy on a shared machine (the load average is printed); CPU is less so.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for path in (ROOT, os.path.join(ROOT, "tests", "pipeline"), os.path.dirname(__file__)):
    if path not in sys.path:
        sys.path.insert(0, path)

from bench_pipeline import _proc_cpu, cpu_split  # noqa: E402
from synthetic import write_log  # noqa: E402

from storage.log import Log  # noqa: E402
from storage.pipeline.follow import signature as follow_signature  # noqa: E402
from storage.records import OffsetCommitKey, OffsetCommitValue, Record  # noqa: E402


def signature(data_dir: str) -> tuple[tuple[str, int, int], ...]:
    """What a follow loop polls (the one `kcoord pipeline --follow` uses)."""
    return follow_signature([data_dir])


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


class Follower:
    """The follow loop: poll, re-run the batch on a change, note the offsets written."""

    def __init__(self, data_dir: str, output: str, poll_s: float, jvm_pid: int) -> None:
        self.data_dir, self.output, self.poll_s, self.jvm_pid = data_dir, output, poll_s, jvm_pid
        self.seen: dict[int, float] = {}  # committed offset -> when a re-run showed it
        self.runs: list[tuple[float, float]] = []  # (wall s, CPU s) per re-run
        self.changed = threading.Condition()
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._loop, name="follow", daemon=True)

    def cpu(self) -> float:
        # Python workers that ended and were reaped by the JVM count in its children's CPU.
        jvm, workers = cpu_split(self.jvm_pid)
        return time.process_time() + jvm + workers + _proc_cpu(self.jvm_pid)[2]

    def run_batch(self) -> None:
        import pyarrow.parquet as pq

        from storage.pipeline import cli

        began, cpu0 = time.perf_counter(), self.cpu()
        status = cli.main(["-q", "-i", self.data_dir, "-o", self.output, "--master", "local[2]"],
                          stdout=io.StringIO(), stderr=io.StringIO())
        if status != 0:
            raise RuntimeError(f"re-run ended with {status}")
        self.runs.append((time.perf_counter() - began, self.cpu() - cpu0))
        offsets = pq.read_table(os.path.join(self.output, "offsets_latest"),
                                columns=["offset"]).column("offset").to_pylist()
        now = time.perf_counter()
        with self.changed:
            for offset in offsets:
                self.seen.setdefault(int(offset), now)
            self.changed.notify_all()

    def _loop(self) -> None:
        try:
            last = signature(self.data_dir)
            while not self.stop.wait(self.poll_s):
                current = signature(self.data_dir)
                if current != last:
                    last = current
                    self.run_batch()
        except BaseException as exc:  # reported by the main thread
            self.error = exc
            with self.changed:
                self.changed.notify_all()

    def wait_for(self, offset: int, timeout: float = 300) -> float:
        deadline = time.perf_counter() + timeout
        with self.changed:
            while offset not in self.seen:
                if self.error is not None:
                    raise self.error
                left = deadline - time.perf_counter()
                if left <= 0:
                    raise TimeoutError(f"offset {offset} not in the output after {timeout} s")
                self.changed.wait(left)
            return self.seen[offset]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--records", type=int, default=500, help="size of the starting log (steps)")
    p.add_argument("--appends", type=int, default=5)
    p.add_argument("--poll", type=float, default=1.0)
    p.add_argument("--idle", type=float, default=30.0)
    args = p.parse_args()

    from storage.pipeline.driver_read import segment_bytes
    from storage.pipeline.jvm_cds import CDS_ENV
    from storage.pipeline.session import build_session

    os.environ.setdefault(CDS_ENV, "0")
    work = tempfile.mkdtemp(prefix="kcoord-bench-follow-")
    data_dir, output = os.path.join(work, "data"), os.path.join(work, "out")
    log = write_log(data_dir, seed=3, steps=max(1, args.records * 60 // 800))
    print(f"# follow: {len(log.records)} records to start, poll every {args.poll} s "
          f"({os.cpu_count()} CPUs, load average {load()})", flush=True)
    began = time.perf_counter()
    spark = build_session("local[2]", quiet=True, input_bytes=segment_bytes([data_dir]),
                          register_source=False)
    jvm_pid = spark.sparkContext._gateway.proc.pid
    follower = Follower(data_dir, output, args.poll, jvm_pid)
    follower.run_batch()
    print(f"session and first run: {time.perf_counter() - began:.1f} s "
          f"(first run {follower.runs[0][0]:.1f} s wall, {follower.runs[0][1]:.1f} s CPU)",
          flush=True)
    follower.run_batch()  # warm
    follower.thread.start()

    cpu0, t0 = follower.cpu(), time.perf_counter()
    time.sleep(args.idle)
    idle_cpu = follower.cpu() - cpu0
    idle_wall = time.perf_counter() - t0
    print(f"idle {idle_wall:.0f} s, no change: {idle_cpu:.2f} CPU s "
          f"({60 * idle_cpu / idle_wall:.2f} CPU s per minute; load average {load()})",
          flush=True)

    rng = random.Random(7)
    latencies = []
    first = len(follower.runs)
    for i in range(args.appends):
        time.sleep(rng.uniform(0, args.poll) + 0.5)
        offset = 10**12 + i
        with Log.open(data_dir, fsync="never") as appender:
            appended = time.perf_counter()
            appender.append([Record(OffsetCommitKey("follow-bench", "topic-0", 0),
                                    OffsetCommitValue(offset, 3, "", int(time.time() * 1000)))])
        latencies.append(follower.wait_for(offset) - appended)
        print(f"append {i + 1}: in the output after {latencies[-1]:.2f} s "
              f"(re-run {follower.runs[-1][0]:.2f} s wall, {follower.runs[-1][1]:.2f} CPU s; "
              f"load average {load()})", flush=True)
    follower.stop.set()
    follower.thread.join(timeout=600)
    reruns = follower.runs[first:]
    run_cpu = statistics.median(cpu for _, cpu in reruns)
    print(f"append -> row: median {statistics.median(latencies):.2f} s, max "
          f"{max(latencies):.2f} s over {len(latencies)} appends; re-run median "
          f"{statistics.median(w for w, _ in reruns):.2f} s wall, {run_cpu:.2f} CPU s", flush=True)
    print(f"re-running every {args.poll} s without the change check: about "
          f"{60 / max(args.poll, statistics.median(w for w, _ in reruns)) * run_cpu:.0f} CPU s "
          "per minute (one re-run after another when a re-run outlasts the poll)", flush=True)
    spark.stop()
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
