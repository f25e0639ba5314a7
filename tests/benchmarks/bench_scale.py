"""A fleet of classic consumer groups on one broker: heartbeats and commits at scale.

    python tests/benchmarks/bench_scale.py [--groups 1000] [--members 10] [--seconds 60]
        [--processes 4] [--consumer-groups 100] [--tansu]

``--groups`` groups of ``--members`` members each, spread over ``--processes`` client
processes speaking raw frames (one connection per member, as real consumers have).

The burst: every process connects its members, then all send their JoinGroups (v3) at
once on the parent's word; each member syncs as soon as its JoinGroup is answered and
heartbeats every 3 s until every member of its process has synced (as a client's heartbeat
thread does; a rebalance it learns of that way makes it rejoin). Reported: how long the
burst took to form (go to the last member synced), the rebalance a group needs on that
broker -- one group of the same size formed alone just before, joining at once: Kafka's
group.initial.rebalance.delay.ms (3 s), extended once by as much again because its other
members arrive within it, then the join and sync round -- and the burst's ratio to it
(issue 33's goal: <= 2), JoinGroups per member, JoinGroup/SyncGroup/Heartbeat errors
(UNKNOWN_MEMBER_ID means a member expired while joining), the server's CPU per
JoinGroup/SyncGroup and the client processes' CPU in the burst (is the fleet the limit?).

Then for ``--seconds`` every member heartbeats every 3 s and commits its partition every
5 s (each member's first at a random moment of its period). Reported: heartbeat and commit
p50/p99 (ms, send to answer), requests answered, errors by code (REBALANCE_IN_PROGRESS,
UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION mean a session expired that should not have), the
server's CPU per request (the KIP-848 members' requests counted too) and share of one
core over the steady phase (/proc), and its
VmRSS / VmHWM at the end; for kcoord, its collector's pauses over its life (joins too) as
it logs them when stopped: collections by generation, the full ones' total and longest,
the longest young one, pauses over 20 ms, each in wall and (bracketed) CPU time, what the
full collections freed and how often the whole heap was swept
(``coordinator/server/collector.py``). kcoord runs with its defaults
(``--topic-storage memory``); ``--tansu`` runs the same fleet against Tansu (memory
storage) afterwards.

Beside them, ``--consumer-groups`` KIP-848 groups of ``--members`` members (one more
client process, ``bench_scale_consumers.py``) form once the classic burst has, then
heartbeat (ConsumerGroupHeartbeat at the interval the server returns, acknowledging each new
assignment) and commit (OffsetCommit v9 with the member epoch) every ``--commit-s`` through
the same steady phase. Reported in their own table: heartbeat and commit p50/p99, how long
they took to form and how many heartbeats per member it took, and the fencing errors
(UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, STALE_MEMBER_EPOCH; the goal: none). Tansu does not
serve KIP-848: "not served". Run it at a smaller scale first (``--groups 100``): the full one holds
10,000 connections.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import selectors
import subprocess
import sys
import tempfile
import time
from typing import IO, Any

from bench_brokers import REPO, Broker, Session, free_port, negotiate, tansu_binary
from bench_scale_consumers import KIP848_HEADER, consumer_worker, kip848_row
from scale_collector import collector_pauses, collector_table
from scale_fleet import (
    Connection,
    close_when_told,
    count,
    drive,
    machine_cpu,
    pct,
    sent_within,
    steady_and_every,
    steal_share,
)

from wire import decode_response, encode_request

TOPIC = "scale"
PARTITIONS = 10
HEARTBEAT, COMMIT, JOIN, SYNC, LEAVE = 12, 8, 11, 14, 13
MEMBER_ID_REQUIRED = 79
EXPIRY_CODES = {22: "ILLEGAL_GENERATION", 25: "UNKNOWN_MEMBER_ID", 27: "REBALANCE_IN_PROGRESS"}


# ---------------------------------------------------------------- the client process


class Member(Connection):
    """One classic member's connection and schedule."""

    def __init__(self, group: str, port: int, periods: dict[int, float]) -> None:
        super().__init__(group, port)
        self.periods = periods
        self.member_id = ""
        self.generation = -1
        self.partition = 0
        self.next = {HEARTBEAT: 0.0, COMMIT: 0.0}
        self.joins = 0
        self.syncs = 0
        self.heartbeats = 0
        self.synced_at = 0.0

    def request(self, key: int) -> bytes:
        return _request(self, key)

    def period(self, key: int) -> float:
        return self.periods[key]

    def read(self, key: int, payload: bytes, errors: dict[str, int]) -> None:
        _, response = decode_response(key, 0 if key == HEARTBEAT else 2, payload)
        codes = ([response.error_code] if key == HEARTBEAT else
                 [p.error_code for t in response.topics for p in t.partitions])
        for code in codes:
            if code:
                count(errors, EXPIRY_CODES.get(code, str(code)))


UNKNOWN_MEMBER_ID = 25
REBALANCE_IN_PROGRESS = 27


def _send_join(m: Member) -> None:
    m.joins += 1
    m.call(JOIN, 3, {"group_id": m.group, "session_timeout_ms": 30_000,
                     "rebalance_timeout_ms": 60_000, "member_id": m.member_id,
                     "protocol_type": "consumer",
                     "protocols": [{"name": "range", "metadata": b"\x00" * 10}]})


def _form(members: list[Member], heartbeat_s: float) -> dict[str, int]:
    """Every member sends its JoinGroup at once; each syncs as soon as its own JoinGroup is
    answered, as a client does (the leader assigns partitions), then heartbeats every
    ``heartbeat_s`` until every member has synced, as a client's heartbeat thread does (a
    group that rebalances again after some members synced learns it from their heartbeats).
    Errors by code: a member asked for an id (MEMBER_ID_REQUIRED: Tansu even in v3) rejoins
    with it; a JoinGroup answered UNKNOWN_MEMBER_ID rejoins without one; a SyncGroup or
    Heartbeat answered REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID
    rejoins (all but MEMBER_ID_REQUIRED counted)."""
    join_errors: dict[str, int] = {}
    selector = selectors.DefaultSelector()
    for m in members:
        _send_join(m)
        m.kind = JOIN
        selector.register(m.sock, selectors.EVENT_READ, m)
    pending = len(members)  # not synced (in the current generation)
    beating = 0  # Heartbeats in flight
    idle: list[Member] = []  # synced, waiting for their next heartbeat
    while pending or beating:
        now = time.monotonic()
        waiting = []
        for m in idle if pending else ():  # (then only the Heartbeats in flight are read)
            if m.next[HEARTBEAT] <= now:
                m.kind = HEARTBEAT
                m.heartbeats += 1
                m.call(HEARTBEAT, 0, {"group_id": m.group, "generation_id": m.generation,
                                      "member_id": m.member_id})
                beating += 1
            else:
                waiting.append(m)
        idle = waiting if pending else idle
        for selected, _ in selector.select(timeout=0.1):
            m = selected.data
            if m.kind == HEARTBEAT or m.kind == SYNC:
                answer = m.answer(m.kind, 0 if m.kind == HEARTBEAT else 2)
                was = "Heartbeat" if m.kind == HEARTBEAT else "SyncGroup"
                beating -= m.kind == HEARTBEAT
                if answer.error_code in EXPIRY_CODES:
                    # The group rebalanced again (a late member joined) or forgot the
                    # member: rejoin, as a client does; counted.
                    count(join_errors, f"{was} {EXPIRY_CODES[answer.error_code]}")
                    if answer.error_code == UNKNOWN_MEMBER_ID:
                        m.member_id = ""
                    pending += m.kind == HEARTBEAT
                    m.kind = JOIN
                    _send_join(m)
                    continue
                if answer.error_code:
                    raise RuntimeError(f"{was} of {m.group}: error {answer.error_code}")
                if m.kind == SYNC:
                    m.partition = int.from_bytes(bytes(answer.assignment)[:4] or bytes(4),
                                                 "big")
                    m.synced_at = time.monotonic()
                    pending -= 1
                m.kind = 0
                m.next[HEARTBEAT] = time.monotonic() + heartbeat_s
                idle.append(m)
                continue
            j = m.answer(JOIN, 3)
            if j.error_code in (MEMBER_ID_REQUIRED, UNKNOWN_MEMBER_ID):
                if j.error_code == UNKNOWN_MEMBER_ID:
                    count(join_errors, "UNKNOWN_MEMBER_ID")
                m.member_id = j.member_id if j.error_code == MEMBER_ID_REQUIRED else ""
                _send_join(m)
                continue
            if j.error_code:
                raise RuntimeError(f"JoinGroup of {m.group}: error {j.error_code}")
            m.member_id, m.generation = j.member_id, j.generation_id
            ids = sorted(x.member_id for x in j.members) if j.members else []
            assignments = [{"member_id": member_id,
                            "assignment": (i % PARTITIONS).to_bytes(4, "big")}
                           for i, member_id in enumerate(ids)]
            m.syncs += 1
            m.kind = SYNC
            m.call(SYNC, 2, {"group_id": m.group, "generation_id": m.generation,
                             "member_id": m.member_id, "assignments": assignments})
    selector.close()
    return join_errors


def _one_group_alone(port: int, size: int, heartbeat_s: float) -> float:
    """Seconds one group of ``size`` members takes to form on its own, joining at once as
    in the burst: the rebalance a group needs on this broker (Kafka's: the initial
    rebalance delay, extended once by as much again because its other members join within
    it -- 2 x group.initial.rebalance.delay.ms -- then the join and sync round)."""
    members = [Member("scale-alone", port, {}) for _ in range(size)]
    began = time.monotonic()
    _form(members, heartbeat_s)
    alone_s = time.monotonic() - began
    for m in members:
        m.call(LEAVE, 0, {"group_id": m.group, "member_id": m.member_id})
        m.answer(LEAVE, 0)
        m.sock.close()
    return alone_s


def _request(m: Member, key: int) -> bytes:
    m.corr += 1
    if key == HEARTBEAT:
        body: dict[str, Any] = {"group_id": m.group, "generation_id": m.generation,
                                "member_id": m.member_id}
        return encode_request(HEARTBEAT, 0, m.corr, "bench-scale", body)
    body = {"group_id": m.group, "generation_id_or_member_epoch": m.generation,
            "member_id": m.member_id, "retention_time_ms": -1,
            "topics": [{"name": TOPIC, "partitions": [
                {"partition_index": m.partition, "committed_offset": m.corr,
                 "committed_metadata": ""}]}]}
    return encode_request(COMMIT, 2, m.corr, "bench-scale", body)


def worker(port: int, groups: list[str], size: int, seconds: float, periods: dict[int, float],
           ) -> None:
    """One client process of classic members: connect, wait for the parent's word, form,
    report that on a line, heartbeat and commit for ``seconds``, report that on a line, and
    close its connections only when the parent closes stdin (``close_when_told``)."""
    members = [Member(g, port, periods) for g in groups for _ in range(size)]
    # One burst: every process connects its members, then all send their JoinGroups when the
    # parent says so.
    print("ready", flush=True)
    sys.stdin.readline()
    forming, cpu = time.monotonic(), time.process_time()
    join_errors = _form(members, periods[HEARTBEAT])
    formed_s = time.monotonic() - forming
    synced = sorted(m.synced_at - forming for m in members)
    print(json.dumps({"formed_s": formed_s, "joins": sum(m.joins for m in members),
                      "syncs": sum(m.syncs for m in members),
                      "heartbeats": sum(m.heartbeats for m in members),
                      "client_cpu_s": time.process_time() - cpu,
                      "synced_deciles": [synced[len(synced) * k // 10] for k in range(10)]}),
          flush=True)
    rng = random.Random(os.getpid())
    began = time.monotonic()
    for m in members:
        for key, period in periods.items():
            m.next[key] = began + rng.uniform(0, period)
    errors: dict[str, int] = {}
    cpu = time.process_time()
    latencies = drive(members, began + seconds, errors)
    steady_cpu_s = time.process_time() - cpu
    print(json.dumps({"latencies": {str(k): v for k, v in latencies.items()}, "errors": errors,
                      "formed_s": formed_s, "join_errors": join_errors,
                      "steady_cpu_s": steady_cpu_s, "steady_end": began + seconds}),
          flush=True)
    close_when_told(members)


# ---------------------------------------------------------------- the parent


def _start(name: str, binary: str | None, data_dir: str, stderr: IO[bytes],
           ) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    if name == "kcoord":
        # At info: the collector's pauses are logged when it stops (and the groups' events).
        argv = [sys.executable, "-m", "coordinator", "serve", "--port", str(port),
                "--data-dir", data_dir, "--log-level", "info", "--topic-storage", "memory",
                "--topic", f"{TOPIC}:{PARTITIONS}"]
    else:
        assert binary is not None
        url = f"tcp://127.0.0.1:{port}"
        argv = [binary, "broker", "--listener-url", url, "--advertised-listener-url", url,
                "--storage-engine", "memory://tansu/"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=stderr, cwd=REPO)
    deadline = time.monotonic() + 60
    while True:
        try:
            session = Session(port)
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError(f"{name} did not start") from None
            time.sleep(0.05)
    while session.call(16, 0, {}).error_code == 14:  # COORDINATOR_LOAD_IN_PROGRESS
        time.sleep(0.05)
    if name != "kcoord":
        session.call(19, 2, {"topics": [{"name": TOPIC, "num_partitions": PARTITIONS,
                                         "replication_factor": 1, "assignments": [],
                                         "configs": []}],
                             "timeout_ms": 30_000, "validate_only": False})
    session.close()
    return proc, port


def run(name: str, binary: str | None, args: argparse.Namespace) -> dict[str, Any]:
    with (tempfile.TemporaryDirectory(prefix="kcoord-bench-scale-") as data_dir,
          tempfile.TemporaryFile() as stderr):
        proc, port = _start(name, binary, data_dir, stderr)
        try:
            groups = [f"scale-{i}" for i in range(args.groups)]
            workers = []
            for k in range(args.processes):
                spec = json.dumps({"port": port, "groups": groups[k::args.processes],
                                   "size": args.members, "seconds": args.seconds,
                                   "periods": {str(HEARTBEAT): args.heartbeat_s,
                                               str(COMMIT): args.commit_s}})
                workers.append(subprocess.Popen(
                    [sys.executable, __file__, "--worker", spec], stdout=subprocess.PIPE,
                    stdin=subprocess.PIPE, cwd=REPO / "tests" / "benchmarks"))
            kip848 = None
            if args.consumer_groups and 68 in negotiate(port):
                spec = json.dumps({"kind": "consumer", "port": port, "size": args.members,
                                   "groups": [f"scale-848-{i}" for i in range(
                                       args.consumer_groups)],
                                   "seconds": args.seconds, "commit_s": args.commit_s})
                kip848 = subprocess.Popen(
                    [sys.executable, __file__, "--worker", spec], stdout=subprocess.PIPE,
                    stdin=subprocess.PIPE, cwd=REPO / "tests" / "benchmarks")
            server = Broker(name, [], port, proc)  # its /proc readings
            alone_s = _one_group_alone(port, args.members, args.heartbeat_s)
            for w in workers:  # every member connected
                assert w.stdout is not None and w.stdout.readline().strip() == b"ready"
            cpu_go, t_go = server.cpu_seconds(), time.monotonic()
            for w in workers:
                assert w.stdin is not None
                w.stdin.write(b"go\n")
                w.stdin.flush()
            formed = []
            for w in workers:
                assert w.stdout is not None
                formed.append(json.loads(w.stdout.readline()))
            consumers: dict[str, Any] | None = None
            if kip848 is not None:  # its groups form once the classic burst has
                assert kip848.stdin is not None and kip848.stdout is not None
                assert kip848.stdout.readline().strip() == b"ready"
                kip848.stdin.write(b"go\n")
                kip848.stdin.flush()
                consumers = json.loads(kip848.stdout.readline())
                if not consumers["formed"]:
                    raise RuntimeError(f"the KIP-848 groups did not form: {consumers}")
            # The steady phase starts once every group formed and ends when the first
            # process stops sending; every process reports before any closes (its
            # connections' closing is no answer's latency and no steady CPU).
            cpu0, t0, stolen0 = server.cpu_seconds(), time.monotonic(), machine_cpu()
            processes = workers + ([kip848] if kip848 is not None else [])
            outputs = []
            for w in processes:  # stdout is read through its buffer (communicate would skip it)
                assert w.stdout is not None
                outputs.append(json.loads(w.stdout.readline()))
            cpu1, t1, stolen = server.cpu_seconds(), time.monotonic(), machine_cpu()
            memory = server.memory_mib()
            for w in processes:
                assert w.stdin is not None
                w.stdin.close()
            for w in processes:
                w.wait(timeout=60)
            if kip848 is not None:
                assert consumers is not None
                consumers.update(outputs.pop())
            ends = [out["steady_end"] for out in outputs]
            if consumers is not None:
                ends.append(consumers["steady_end"])
            steady = (t0, min(ends))
        finally:
            proc.terminate()
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:  # a loaded machine: do not leave it behind
                proc.kill()
                proc.wait(30)
        stderr.seek(0)
        collector = collector_pauses(stderr.read().decode(errors="replace"))
    latencies: dict[int, list[list[float]]] = {HEARTBEAT: [], COMMIT: []}
    errors: dict[str, int] = {}
    join_errors: dict[str, int] = {}
    for out in outputs:
        for code, times in out["join_errors"].items():
            join_errors[code] = join_errors.get(code, 0) + times
        for key, values in out["latencies"].items():
            latencies[int(key)].extend(values)
        for code, times in out["errors"].items():
            errors[code] = errors.get(code, 0) + times
    answered = sum(len(v) for v in latencies.values())
    timed = [*latencies.values(), *(consumers or {}).get("latencies", {}).values()]
    served = sum(len(sent_within(v, t0, t1)) for v in timed)  # sent while the CPU was read
    joins = sum(f["joins"] for f in formed)
    syncs = sum(f["syncs"] for f in formed)
    requests = joins + syncs + sum(f["heartbeats"] for f in formed)
    members = args.groups * args.members
    deciles = [max(f["synced_deciles"][k] for f in formed) for k in range(10)]
    client_cpu = sum(f["client_cpu_s"] for f in formed)
    print(f"# {name} burst: {t0 - t_go:.1f} s wall, server CPU {cpu0 - cpu_go:.2f} s "
          f"({(cpu0 - cpu_go) / max(requests, 1) * 1e6:.0f} us per JoinGroup, SyncGroup or "
          f"Heartbeat), "
          f"client processes' CPU {client_cpu:.2f} s, {joins / members:.2f} JoinGroups and "
          f"{syncs / members:.2f} SyncGroups per member ({requests - joins - syncs} "
          f"Heartbeats), members synced by deciles (s) "
          f"{[round(d, 1) for d in deciles]}; one group alone formed in {alone_s:.2f} s",
          flush=True)
    steady_cpu = sum(out["steady_cpu_s"] for out in outputs)
    print(f"# {name} steady phase: the classic client processes' CPU {steady_cpu:.2f} s "
          f"({steady_cpu / max(answered, 1) * 1e6:.0f} us per request, "
          f"{steady_cpu / args.seconds:.0%} of a core), the server's {cpu1 - cpu0:.2f} s; "
          f"load average {os.getloadavg()[0]:.1f}, CPU time stolen by the hypervisor "
          f"{steal_share(stolen0, stolen):.0%}", flush=True)
    return {"latencies": latencies, "steady": steady, "errors": errors, "answered": answered,
            "cpu_us_per_request": (cpu1 - cpu0) / max(served, 1) * 1e6,
            "core_share": (cpu1 - cpu0) / (t1 - t0), "memory": memory,
            "formed_s": max(out["formed_s"] for out in outputs), "join_errors": join_errors,
            "alone_s": alone_s, "joins_per_member": joins / members,
            "cpu_us_per_join_or_sync": (cpu0 - cpu_go) / max(requests, 1) * 1e6,
            "collector": collector, "kip848": consumers}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--members", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--heartbeat-s", type=float, default=3.0)
    parser.add_argument("--commit-s", type=float, default=5.0)
    parser.add_argument("--consumer-groups", type=int, default=100,
                        help="KIP-848 groups of --members members beside the classic ones "
                             "(0: none)")
    parser.add_argument("--tansu", action="store_true", help="also run the fleet on Tansu")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        spec = json.loads(args.worker)
        if spec.get("kind") == "consumer":
            consumer_worker(spec["port"], spec["groups"], spec["size"], spec["seconds"],
                            spec["commit_s"], TOPIC, PARTITIONS)
            return 0
        periods = {int(k): v for k, v in spec["periods"].items()}
        worker(spec["port"], spec["groups"], spec["size"], spec["seconds"], periods)
        return 0
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} · load average {os.getloadavg()[0]:.1f} · "
          f"{args.groups} groups x {args.members} members, {args.seconds:g} s, "
          f"{args.processes} client processes\n")
    print("| broker | heartbeat p50 / p99 ms | commit p50 / p99 ms | answered | errors | "
          "server CPU us/request | of a core | VmRSS / VmHWM MiB | burst formed s | one "
          "group alone s | burst / needed | JoinGroups per member | server CPU us per "
          "request in the burst | join / sync / heartbeat errors | heartbeat / commit p99 "
          "ms, every answer after the burst | steady phase s |\n"
          "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    brokers: list[tuple[str, str | None]] = [("kcoord", None)]
    binary = tansu_binary()
    if args.tansu and binary is not None:
        brokers.append(("tansu", binary))
    collectors: list[tuple[str, dict[str, Any]]] = []
    kip848_rows: list[str] = []
    for name, path in brokers:
        r = run(name, path, args)
        start, end = r["steady"]
        hb, hb_every = steady_and_every(r["latencies"][HEARTBEAT], r["steady"])
        commit, commit_every = steady_and_every(r["latencies"][COMMIT], r["steady"])
        errors = ", ".join(f"{k} {v}" for k, v in sorted(r["errors"].items())) or "none"
        mem = r["memory"]
        print(f"| {name} | {pct(hb, 0.5):.2f} / {pct(hb, 0.99):.2f} | "
              f"{pct(commit, 0.5):.2f} / {pct(commit, 0.99):.2f} | {r['answered']} | "
              f"{errors} | {r['cpu_us_per_request']:.0f} | {r['core_share'] * 100:.0f} % | "
              f"{mem.get('VmRSS', 0):.1f} / {mem.get('VmHWM', 0):.1f} | {r['formed_s']:.1f} | "
              f"{r['alone_s']:.2f} | {r['formed_s'] / r['alone_s']:.2f} | "
              f"{r['joins_per_member']:.2f} | {r['cpu_us_per_join_or_sync']:.0f} | "
              f"{', '.join(f'{k} {v}' for k, v in r['join_errors'].items()) or 'none'} | "
              f"{pct(hb_every, 0.99):.2f} / {pct(commit_every, 0.99):.2f} | {end - start:.1f} |",
              flush=True)
        kip848_rows.append(kip848_row(name, r["kip848"], args.consumer_groups, args.members,
                                      r["steady"]))
        if r["collector"] is not None:
            collectors.append((name, r["collector"]))
    if args.consumer_groups:
        print(KIP848_HEADER + "\n".join(kip848_rows))
    if collectors:
        print(collector_table(collectors))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
