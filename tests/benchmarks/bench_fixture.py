"""Startup and teardown of the pytest fixture's server (paid once per test):

    python tests/benchmarks/bench_fixture.py [--runs 50]

Start = ``KcoordServer(...).start()`` returning (listening, log opened and replayed, ready
for group requests); stop = ``close()`` (log flushed and closed, thread joined, data dir
removed). Medians and p90 over the runs, after one warm-up (imports).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time

from coordinator.testing import KcoordServer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    KcoordServer().start().close()  # warm-up: imports and schema caches
    starts, stops = [], []
    for _ in range(args.runs):
        server = KcoordServer()
        t0 = time.perf_counter()
        server.start()
        t1 = time.perf_counter()
        server.close()
        t2 = time.perf_counter()
        starts.append((t1 - t0) * 1000)
        stops.append((t2 - t1) * 1000)

    def p90(xs: list[float]) -> float:
        return sorted(xs)[int(len(xs) * 0.9) - 1]

    print(
        f"# {time.strftime('%Y-%m-%d')} · {platform.machine()} · Python "
        f"{sys.version.split()[0]} · {' '.join(sys.argv)}"
    )
    print("| | median (ms) | p90 (ms) |\n|---|---:|---:|")
    print(f"| fixture start | {statistics.median(starts):.1f} | {p90(starts):.1f} |")
    print(f"| fixture stop | {statistics.median(stops):.1f} | {p90(stops):.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
