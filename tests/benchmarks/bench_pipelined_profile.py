"""Python calls per answer of one pipelined row, under cProfile, for several checkouts.

    python tests/benchmarks/bench_pipelined_profile.py /work/main /work/wt/bench_before \
        --inflight 32 --seconds 4 --rounds 2 [--row cgh|hb|oc1]

Each checkout's ``kcoord serve`` runs under ``python -m cProfile`` (the Trio loop is the main
thread, so every server step is counted), and one connection keeps ``--inflight`` requests
of the row outstanding (``bench_load.drive``): steady ConsumerGroupHeartbeats (``cgh``), or
a one-member classic group's Heartbeats (``hb``) or OffsetCommits of one partition (``oc1``).
Prints the rate, the answers and the profiled calls per answer; the calls are the
load-independent figure, the rate is not (cProfile slows the server several times over).
Checkouts alternate by round.
"""

from __future__ import annotations

import argparse
import os
import pstats
import signal
import subprocess
import sys
import tempfile

import bench_load
from bench_brokers import free_port, negotiate


def profile_once(checkout: str, inflight: int, seconds: float,
                 row_name: str = "cgh") -> tuple[float, int, float]:
    port = free_port()
    with tempfile.TemporaryDirectory() as data, tempfile.TemporaryDirectory() as out_dir:
        out = os.path.join(out_dir, "server.prof")
        server = subprocess.Popen(
            [sys.executable, "-m", "cProfile", "-o", out, "-m", "coordinator", "serve",
             "--port", str(port), "--data-dir", data, "--fsync", "interval"],
            cwd=checkout, env={**os.environ, "PYTHONPATH": checkout},
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            assert server.stdout is not None
            for line in server.stdout:
                if "listening" in line:
                    break
            versions = negotiate(port)
            if row_name == "cgh":
                bench_load.create_topic(port, versions)
                row = bench_load.consumer_heartbeat_frame(port, versions, "g-profile")
                assert row is not None, "ConsumerGroupHeartbeat not served"
            else:
                member = bench_load.setup_group(port, versions, "g-profile")
                row = (bench_load.heartbeat_frame(versions, member) if row_name == "hb"
                       else bench_load.commit_frame(versions, member, 1))
            frame, ok = row
            run = bench_load.drive(port, frame, connections=1, inflight=inflight, seconds=seconds,
                                   check=ok)
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(60)
        calls = pstats.Stats(out).total_calls  # type: ignore[attr-defined]
    return run.rate, run.answered, calls / max(run.answered, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", nargs="+")
    parser.add_argument("--inflight", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--row", choices=["cgh", "hb", "oc1"], default="cgh")
    args = parser.parse_args()
    for round_no in range(args.rounds):
        for checkout in args.checkouts:
            rate, answered, per_answer = profile_once(checkout, args.inflight, args.seconds,
                                                      args.row)
            print(f"round {round_no + 1} {checkout} {args.row}: {rate:,.0f} answers/s (profiled), "
                  f"{answered} answers, {per_answer:.1f} calls per answer "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)


if __name__ == "__main__":
    main()
