"""Startup on a large log: open, replay, and ``kcoord serve`` restarted on it (issue 14).

    python tests/benchmarks/bench_restart.py --log DIR [--records N] [--rounds 3]
        [--serve 2] [--checkout BASE_DIR] [--write [--topic-records N]] [--live-only]

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
  exec to the first answered ApiVersions, to the first answered Metadata (every topic), to
  the first OffsetFetch answered without COORDINATOR_LOAD_IN_PROGRESS (asked every 10 ms),
  the server's CPU seconds at that answer, its VmHWM then (the peak while loading).

``--topic-records N`` (with ``--write``) first fills the bench topic's partitions with N
records of 100 bytes, ``--batch-records`` to a batch (Produce over the wire to a server
started on the new directory), so a restart also restores every topic batch before its
first Metadata answer.

``--committed GROUPS PARTITIONS`` measures committed partitions instead (issue 33): a
server started empty is sent GROUPS x PARTITIONS distinct commits over the wire
(OffsetCommit v2, one group's partitions per request), then its VmRSS / VmHWM and bytes
of RSS per committed partition (over an empty server's) are read, and the OffsetFetch of
one group's PARTITIONS partitions timed (p50 / p99 of ``--fetches``); Tansu (memory
storage) gets the same when installed. kcoord is then stopped and restarted on its data
directory ``--serve`` times: exec to the first answer of any kind to an OffsetFetch
(COORDINATOR_LOAD_IN_PROGRESS counts, silence does not), to the first correct one (every
partition's offset), the LOAD_IN_PROGRESS answers in between, and RSS after the restart.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from bench_brokers import (
    PARTITIONS,
    REPO,
    TOPIC,
    Session,
    kcoord_broker,
    tansu_binary,
    tansu_broker,
)

from wire import decode_response, encode_request

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
    if os.path.isdir(os.path.join(log, "topics")):  # the topics' batches (--topic-records)
        shutil.copytree(os.path.join(log, "topics"), os.path.join(target, "topics"))
    return target


def measure_serve(checkout: str, data: str) -> dict[str, float]:
    broker = kcoord_broker(data, "never", checkout=checkout)
    broker.start()
    try:
        began = time.perf_counter() - broker.startup_s
        session = Session(broker.port)
        session.sock.settimeout(900)
        try:
            session.call(3, 1, {"topics": None})  # answered once the topics are restored
            metadata = time.perf_counter() - began
            while session.call(9, 2, {"group_id": "group-1", "topics": None}).error_code \
                    == LOAD_IN_PROGRESS:
                time.sleep(0.01)
        finally:
            session.close()
        fetched = time.perf_counter() - began
        return dict(api_versions=broker.startup_s, metadata=metadata, offset_fetch=fetched,
                    cpu=broker.cpu_seconds(), hwm=broker.memory_mib()["VmHWM"])
    finally:
        broker.stop()


def fill_topics(data: str, records: int, per_batch: int) -> None:
    """``records`` records of 100 bytes in the bench topic's partitions (round robin),
    ``per_batch`` to a batch: Produce v7, acks=1, 64 requests in flight, to a server
    started on ``data`` and stopped afterwards."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka.record.default_records import DefaultRecordBatchBuilder

    broker = kcoord_broker(data, "never")
    broker.start()
    try:
        sock = socket.create_connection(("127.0.0.1", broker.port), timeout=60)
        batches, inflight, sent = -(-records // per_batch), 64, 0
        began = time.perf_counter()
        for at in range(0, batches, inflight):
            count = min(inflight, batches - at)
            frames = []
            for index in range(at, at + count):
                builder = DefaultRecordBatchBuilder(
                    magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                    producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
                take = min(per_batch, records - sent)
                for i in range(take):
                    builder.append(i, timestamp=int(time.time() * 1000), key=None,
                                   value=b"v" * 100, headers=[])
                sent += take
                frames.append(encode_request(0, 7, index, "bench", {
                    "transactional_id": None, "acks": 1, "timeout_ms": 30000,
                    "topic_data": [{"name": TOPIC, "partition_data": [
                        {"index": index % PARTITIONS, "records": bytes(builder.build())}]}]}))
            sock.sendall(b"".join(frames))
            for _ in range(count):
                _, body = decode_response(0, 7, _recv_exact_frame(sock))
                code = body.responses[0].partition_responses[0].error_code
                assert code == 0, f"Produce answered error {code}"
        sock.close()
        print(f"# {records:,} topic records in {batches:,} batches written in "
              f"{time.perf_counter() - began:.1f} s", flush=True)
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


LOAD_IN_PROGRESS = 14
COMMIT_TOPIC = "orders"


def _fetch_body(group: str, partitions: int) -> dict[str, object]:
    return {"group_id": group,
            "topics": [{"name": COMMIT_TOPIC, "partition_indexes": list(range(partitions))}]}


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise OSError("closed")
        data += chunk
    return data


def _recv_exact_frame(sock: socket.socket) -> bytes:
    """One frame, reading no byte of the next (``recv_frame`` drops what follows a frame:
    fine for one request at a time, not for pipelined ones)."""
    return _recv_exact(sock, int.from_bytes(_recv_exact(sock, 4), "big"))


def _create_topic(port: int, partitions: int) -> None:
    session = Session(port)
    try:
        while True:
            answer = session.call(19, 2, {"topics": [{
                "name": COMMIT_TOPIC, "num_partitions": partitions, "replication_factor": 1,
                "assignments": [], "configs": []}], "timeout_ms": 30_000,
                "validate_only": False})
            if answer.topics[0].error_code != LOAD_IN_PROGRESS:
                break
            time.sleep(0.01)
    finally:
        session.close()


def _commit_all(port: int, groups: int, partitions: int) -> float:
    """GROUPS x PARTITIONS distinct commits (offset = group * PARTITIONS + partition);
    seconds taken. Requests are pipelined 64 deep on one connection."""
    session = Session(port)
    session.sock.settimeout(600)
    began = time.perf_counter()
    try:
        window = 64
        sent = answered = 0
        while answered < groups:
            while sent < groups and sent - answered < window:
                body = {"group_id": f"group-{sent}", "generation_id_or_member_epoch": -1,
                        "member_id": "", "retention_time_ms": -1,
                        "topics": [{"name": COMMIT_TOPIC, "partitions": [
                            {"partition_index": p, "committed_offset": sent * partitions + p,
                             "committed_metadata": ""} for p in range(partitions)]}]}
                session.sock.sendall(encode_request(8, 2, sent + 1, "bench", body))
                sent += 1
            _, response = decode_response(8, 2, _recv_exact_frame(session.sock))
            codes = {p.error_code for t in response.topics for p in t.partitions}
            if codes != {0}:
                raise RuntimeError(f"OffsetCommit answered {codes}")
            answered += 1
    finally:
        session.close()
    return time.perf_counter() - began


def _fetch_latencies(port: int, groups: int, partitions: int, fetches: int) -> list[float]:
    session = Session(port)
    try:
        latencies = []
        for i in range(fetches):
            group = (i * 7919) % groups
            began = time.perf_counter()
            answer = session.call(9, 5, _fetch_body(f"group-{group}", partitions))
            latencies.append(time.perf_counter() - began)
            offsets = [p.committed_offset for t in answer.topics for p in t.partitions]
            if offsets != [group * partitions + p for p in range(partitions)]:
                raise RuntimeError(f"OffsetFetch of group-{group}: wrong offsets")
        return latencies
    finally:
        session.close()


def _restart_until_correct(checkout: str, data: str, groups: int, partitions: int,
                           ) -> dict[str, float]:
    """exec -> first answer (any) and first correct answer to an OffsetFetch of the last
    group's partitions, polled every 10 ms as clients retry."""
    broker = kcoord_broker(data, "never", checkout=checkout)
    broker.start()
    try:
        began = time.perf_counter() - broker.startup_s
        group = groups - 1
        wanted = [group * partitions + p for p in range(partitions)]
        session = Session(broker.port)
        session.sock.settimeout(900)
        first_answer = 0.0
        loading = 0
        try:
            while True:
                answer = session.call(9, 5, _fetch_body(f"group-{group}", partitions))
                if not first_answer:
                    first_answer = time.perf_counter() - began
                if answer.error_code == LOAD_IN_PROGRESS:
                    loading += 1
                    time.sleep(0.01)
                    continue
                got = [p.committed_offset for t in answer.topics for p in t.partitions]
                if got != wanted:
                    raise RuntimeError(f"after the restart: error {answer.error_code}, "
                                       f"offsets {got[:3]}...")
                break
        finally:
            session.close()
        correct = time.perf_counter() - began
        memory = broker.memory_mib()
        return dict(api_versions=broker.startup_s, first_answer=first_answer,
                    correct=correct, load_in_progress=loading, cpu=broker.cpu_seconds(),
                    rss=memory["VmRSS"], hwm=memory["VmHWM"])
    finally:
        broker.stop()


def _pct_ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000


def committed(args: argparse.Namespace) -> None:
    """The ``--committed`` rows (see the module's docstring)."""
    groups, partitions = args.committed
    total = groups * partitions
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} · load average {os.getloadavg()[0]:.1f} · "
          f"{groups} groups x {partitions} partitions = {total:,} committed partitions\n")
    print("| broker | commit s | VmRSS / VmHWM MiB | RSS bytes per committed partition | "
          "OffsetFetch p50 / p99 ms |\n|---|---:|---:|---:|---:|")
    binary = tansu_binary()
    brokers = [("kcoord", None)] + ([("tansu", binary)] if binary and not args.no_tansu else [])
    with tempfile.TemporaryDirectory(prefix="kcoord-committed-") as tmp:
        data = os.path.join(tmp, "data")
        for name, path in brokers:
            broker = kcoord_broker(data, "interval") if path is None else tansu_broker(path)
            broker.start()
            try:
                _create_topic(broker.port, partitions)
                empty = broker.memory_mib()["VmRSS"]
                seconds = _commit_all(broker.port, groups, partitions)
                latencies = _fetch_latencies(broker.port, groups, partitions, args.fetches)
                memory = broker.memory_mib()
            finally:
                broker.stop()
            per = (memory["VmRSS"] - empty) * 1024 * 1024 / total
            print(f"| {name} | {seconds:.1f} | {memory['VmRSS']:.1f} / {memory['VmHWM']:.1f} | "
                  f"{per:.0f} | {_pct_ms(latencies, 0.5):.2f} / {_pct_ms(latencies, 0.99):.2f} |",
                  flush=True)
        runs = [_restart_until_correct(str(REPO), data, groups, partitions)
                for _ in range(args.serve)]
    print("\nkcoord restarted on that directory, median (min-max) of", args.serve, "\n")
    print("| exec to ApiVersions s | to the first OffsetFetch answer s | to the first "
          "correct one s | LOAD_IN_PROGRESS answers | CPU s | VmRSS / VmHWM MiB |\n"
          "|---:|---:|---:|---:|---:|---:|")

    def cell(key: str, digits: int = 2) -> str:
        values = [r[key] for r in runs]
        return (f"{statistics.median(values):.{digits}f} "
                f"({min(values):.{digits}f}-{max(values):.{digits}f})")

    print(f"| {cell('api_versions')} | {cell('first_answer')} | {cell('correct')} | "
          f"{cell('load_in_progress', 0)} | {cell('cpu')} | {cell('rss', 1)} / "
          f"{cell('hwm', 1)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", help="a data directory (not with --committed)")
    parser.add_argument("--committed", type=int, nargs=2, metavar=("GROUPS", "PARTITIONS"),
                        help="measure GROUPS x PARTITIONS committed partitions instead")
    parser.add_argument("--fetches", type=int, default=1000)
    parser.add_argument("--no-tansu", action="store_true")
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--topic-records", type=int, default=0,
                        help="with --write: also this many topic records (before the log)")
    parser.add_argument("--batch-records", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--serve", type=int, default=2, help="serve restarts per checkout")
    parser.add_argument("--checkout", help="also measure this checkout (e.g. the base)")
    parser.add_argument("--live-only", action="store_true",
                        help="skip Log.open + Log.replay (every record)")
    args = parser.parse_args()
    if args.committed:
        committed(args)
        return
    if args.log is None:
        parser.error("--log or --committed is needed")
    if args.write:
        from bench_storage import write_log

        if args.topic_records:
            fill_topics(args.log, args.topic_records, args.batch_records)
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
