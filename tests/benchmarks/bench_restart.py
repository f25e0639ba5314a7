"""Startup on a large log: open, replay, and ``kcoord serve`` restarted on it (issue 14).

    python tests/benchmarks/bench_restart.py --log DIR [--records N] [--rounds 3]
        [--serve 2] [--checkout BASE_DIR] [--write] [--live-only]

``--log DIR`` is a data directory written by ``bench_storage.write_log`` (``--write``
writes ``--records`` offset commits there first: 1000 groups x 16 partitions, value v3).
Every measurement runs on a fresh copy of its segments (hard links; the active segment
copied; segment summaries *not* copied), so the first open of a copy is that of a log
without summaries (an old log), and a second open of the same copy finds the summaries the
first one wrote (where the checkout writes them). Rows, for this checkout and
(``--checkout``) another one, alternating:

* storage: ``Log.open`` then ``Log.replay`` (every record; not with ``--live-only``), and
  ``Log.open(live_index=True)`` then ``Log.replay_live`` (what the server runs; skipped
  where it does not exist), first and second open of a copy, each in a fresh interpreter
  with that checkout on PYTHONPATH: wall and CPU seconds, entries of the log per second,
  the process's peak RSS (VmHWM);
* serve: ``kcoord serve`` started twice on a copy of the log (first and second start):
  exec to the first answered ApiVersions, exec to the first answered OffsetFetch (which
  waits for the replay), the server's CPU seconds at that answer, its VmHWM.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from bench_brokers import REPO, Session, kcoord_broker

_MEASURE = r"""
import json, sys, time
from storage.log import Log
path, live = sys.argv[1], sys.argv[2] == "live"
def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    value = fn()
    return time.perf_counter() - w, time.process_time() - c, value
if live and not hasattr(Log, "replay_live"):
    print(json.dumps(None)); sys.exit()
open_w, open_c, log = timed(lambda: Log.open(path, live_index=True) if live else Log.open(path))
replay = log.replay_live if live else log.replay
rep_w, rep_c, n = timed(lambda: sum(1 for _ in replay()))
entries = log.next_index
log.close()
with open("/proc/self/status") as f:
    hwm = [int(l.split()[1]) / 1024 for l in f if l.startswith("VmHWM")][0]
print(json.dumps(dict(open_wall=open_w, open_cpu=open_c, replay_wall=rep_w, replay_cpu=rep_c,
                      records=n, entries=entries, hwm=hwm)))
"""


def measure_storage(checkout: str, log: str, live: bool) -> dict[str, float] | None:
    env = {**os.environ, "PYTHONPATH": checkout}
    out = subprocess.run([sys.executable, "-c", _MEASURE, log, "live" if live else "all"],
                         capture_output=True, text=True, cwd=checkout, env=env, check=True)
    result: dict[str, float] | None = json.loads(out.stdout)
    return result


def copy_log(log: str, into: str) -> str:
    """Hard links of the closed segments, a real copy of the last one (the server appends
    to it, and may compact: neither reaches ``log``); no segment summaries."""
    target = os.path.join(into, "data")
    os.makedirs(target)
    names = sorted(n for n in os.listdir(log) if n.endswith(".log"))
    for name in names[:-1]:
        os.link(os.path.join(log, name), os.path.join(target, name))
    shutil.copyfile(os.path.join(log, names[-1]), os.path.join(target, names[-1]))
    return target


def measure_serve(checkout: str, data: str) -> dict[str, float]:
    broker = kcoord_broker(data, "never", checkout=checkout)
    broker.start()
    try:
        began = time.perf_counter() - broker.startup_s
        session = Session(broker.port)
        session.sock.settimeout(900)
        try:
            session.call(9, 1, {"group_id": "group-1", "topics": []})
        finally:
            session.close()
        fetched = time.perf_counter() - began
        return dict(api_versions=broker.startup_s, offset_fetch=fetched,
                    cpu=broker.cpu_seconds(), hwm=broker.memory_mib()["VmHWM"])
    finally:
        broker.stop()


def storage_round(checkout: str, log: str, live_only: bool) -> dict[str, dict[str, float]]:
    """One round of storage measurements of ``checkout`` on fresh copies of ``log``."""
    got: dict[str, dict[str, float]] = {}
    kinds = [("live", True)] if live_only else [("all", False), ("live", True)]
    for kind, live in kinds:
        with tempfile.TemporaryDirectory(prefix="kcoord-restart-") as tmp:
            data = copy_log(log, tmp)
            for start in ("first", "second"):
                row = measure_storage(checkout, data, live)
                if row is not None:
                    got[f"{kind} {start}"] = row
    return got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", required=True)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--serve", type=int, default=2, help="serve restarts per checkout")
    parser.add_argument("--checkout", help="also measure this checkout (e.g. the base)")
    parser.add_argument("--live-only", action="store_true",
                        help="skip Log.open + Log.replay (every record)")
    args = parser.parse_args()
    if args.write:
        from bench_storage import write_log

        write_log(args.log, args.records)
    checkouts = [("branch", str(REPO))] + ([("base", args.checkout)] if args.checkout else [])
    rows: dict[tuple[str, str], list[dict[str, float]]] = {}
    for _ in range(args.rounds):
        for name, checkout in checkouts:
            for kind, got in storage_round(checkout, args.log, args.live_only).items():
                rows.setdefault((name, kind), []).append(got)
                print(name, kind, json.dumps(got), flush=True)
    for (name, kind), runs in rows.items():
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        entries = med["entries"]
        total_w = med["open_wall"] + med["replay_wall"]
        total_c = med["open_cpu"] + med["replay_cpu"]
        print(f"| {name} | {kind} | open {med['open_wall']:.2f} s wall / {med['open_cpu']:.2f}"
              f" s CPU | replay {med['replay_wall']:.2f} / {med['replay_cpu']:.2f} s, "
              f"{med['records']:.0f} records | open+replay {entries / total_w:,.0f} entries/s"
              f" wall, {entries / total_c:,.0f} CPU | VmHWM {med['hwm']:.1f} MiB |")
    serve: dict[str, list[dict[str, float]]] = {}
    for _ in range(args.serve):
        for name, checkout in checkouts:
            with tempfile.TemporaryDirectory(prefix="kcoord-restart-") as tmp:
                data = copy_log(args.log, tmp)
                for start in ("first", "second"):
                    got = measure_serve(checkout, data)
                    serve.setdefault(f"{name} {start}", []).append(got)
                    print(name, start, "serve", json.dumps(got), flush=True)
    for name, runs in serve.items():
        cells = " | ".join(
            f"{k} {statistics.median(r[k] for r in runs):.2f}"
            f" ({min(r[k] for r in runs):.2f}-{max(r[k] for r in runs):.2f})"
            for k in runs[0]
        )
        print(f"| {name} serve | {cells} |")


if __name__ == "__main__":
    main()
