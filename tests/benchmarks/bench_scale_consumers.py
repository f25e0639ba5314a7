"""bench_scale.py's KIP-848 groups: members speaking the consumer protocol
(ConsumerGroupHeartbeat, API key 68) as a client does, in their own client process.

A member joins at member epoch 0 with its full state (subscribed to the benchmark topic,
owning nothing), then heartbeats at the interval the server returns with its member epoch
only, except that when an answer carries an assignment that differs from what it last told
the server it owns, it acknowledges it at once with its owned partitions (what a client does
once it has reconciled). In the steady phase each member's first heartbeat and commit come
at a random moment of their period, as the classic members' do. It commits an owned
partition every ``commit_s`` with OffsetCommit v9 and its member epoch (none while it owns
nothing). UNKNOWN_MEMBER_ID and FENCED_MEMBER_EPOCH make it rejoin at epoch 0; those and
STALE_MEMBER_EPOCH are counted (the goal: none).
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import uuid
from typing import Any

from bench_load import assigned_partitions, consumer_join_body, consumer_steady_body
from scale_fleet import Connection, close_when_told, count, drive, pct, steady_and_every

from wire import decode_response, encode_request

CONSUMER_HEARTBEAT, COMMIT = 68, 8
FENCING = {25: "UNKNOWN_MEMBER_ID", 110: "FENCED_MEMBER_EPOCH", 113: "STALE_MEMBER_EPOCH"}
FORM_LIMIT_S = 180.0


class ConsumerMember(Connection):
    def __init__(self, group: str, port: int, topic: str, commit_s: float) -> None:
        super().__init__(group, port)
        self.topic = topic
        self.commit_s = commit_s
        self.member_id = str(uuid.uuid4())
        self.epoch = 0
        self.interval_s = 5.0  # Kafka's default until the server says
        self.owned: list[dict[str, Any]] = []
        self.told: list[dict[str, Any]] | None = None  # what the server last heard it owns
        self.heartbeats = 0

    def request(self, key: int) -> bytes | None:
        if key == CONSUMER_HEARTBEAT:
            self.heartbeats += 1
            if self.epoch == 0:
                body = consumer_join_body(self.group, self.member_id, self.topic)
                self.told = []
            else:
                body = consumer_steady_body(self.group, self.member_id, self.epoch)
                if self.owned != self.told:
                    body["topic_partitions"] = self.told = self.owned
            self.corr += 1
            return encode_request(CONSUMER_HEARTBEAT, 1, self.corr, "bench-scale", body)
        if not self.owned or self.epoch == 0:
            return None
        self.corr += 1
        partition = self.owned[0]["partitions"][0]
        return encode_request(COMMIT, 9, self.corr, "bench-scale", {
            "group_id": self.group, "generation_id_or_member_epoch": self.epoch,
            "member_id": self.member_id, "group_instance_id": None,
            "retention_time_ms": -1, "topics": [{"name": self.topic, "partitions": [
                {"partition_index": partition, "committed_offset": self.corr,
                 "committed_leader_epoch": -1, "committed_metadata": ""}]}]})

    def period(self, key: int) -> float:
        return self.interval_s if key == CONSUMER_HEARTBEAT else self.commit_s

    def read(self, key: int, payload: bytes, errors: dict[str, int]) -> None:
        if key == COMMIT:
            for t in decode_response(COMMIT, 9, payload)[1].topics:
                for p in t.partitions:
                    if p.error_code:
                        count(errors, f"OffsetCommit {FENCING.get(p.error_code, p.error_code)}")
            return
        answer = decode_response(CONSUMER_HEARTBEAT, 1, payload)[1]
        if answer.error_code:
            count(errors, f"ConsumerGroupHeartbeat "
                          f"{FENCING.get(answer.error_code, answer.error_code)}")
            if answer.error_code in (25, 110):  # rejoin with the same id at epoch 0
                self.epoch, self.owned, self.told = 0, [], None
                self.next[CONSUMER_HEARTBEAT] = time.monotonic()
            return
        self.member_id = answer.member_id or self.member_id
        self.epoch = answer.member_epoch
        self.interval_s = answer.heartbeat_interval_ms / 1000
        if answer.assignment is not None:
            self.owned = assigned_partitions(answer.assignment)
            if self.owned != self.told:  # reconciled: acknowledge at once
                self.next[CONSUMER_HEARTBEAT] = time.monotonic()


def _formed(members: list[ConsumerMember], partitions: int) -> bool:
    """Every group's partitions owned, spread over its members (one each at least while
    there are enough), every member's ownership acknowledged."""
    groups: dict[str, list[ConsumerMember]] = {}
    for m in members:
        groups.setdefault(m.group, []).append(m)
    return all(
        sum(len(tp["partitions"]) for m in group for tp in m.owned) == partitions
        and all(m.epoch > 0 and m.owned == m.told and (m.owned or len(group) > partitions)
                for m in group)
        for group in groups.values())


def consumer_worker(port: int, groups: list[str], size: int, seconds: float,
                    commit_s: float, topic: str, partitions: int) -> None:
    """One client process of KIP-848 members: connect, wait for the parent's word, form
    (heartbeats only), report that on a line, heartbeat and commit for ``seconds``, report
    that on a line, and close when the parent closes stdin (``close_when_told``)."""
    members = [ConsumerMember(g, port, topic, commit_s) for g in groups for _ in range(size)]
    print("ready", flush=True)
    sys.stdin.readline()
    forming, cpu = time.monotonic(), time.process_time()
    for m in members:
        m.next = {CONSUMER_HEARTBEAT: forming, COMMIT: float("inf")}
    form_errors: dict[str, int] = {}
    drive(members, forming + FORM_LIMIT_S, form_errors,
          done=lambda: _formed(members, partitions))
    formed = _formed(members, partitions)
    print(json.dumps({"formed_s": time.monotonic() - forming, "formed": formed,
                      "heartbeats": sum(m.heartbeats for m in members),
                      "client_cpu_s": time.process_time() - cpu,
                      "interval_s": members[0].interval_s if members else 0.0,
                      "form_errors": form_errors}), flush=True)
    rng = random.Random(os.getpid())
    began = time.monotonic()
    for m in members:  # each member's first at a random moment of its period, as the
        # classic members' (formed at once, they would otherwise all heartbeat together)
        m.next = {CONSUMER_HEARTBEAT: began + rng.uniform(0, m.interval_s),
                  COMMIT: began + rng.uniform(0, commit_s)}
    errors: dict[str, int] = {}
    latencies = drive(members, began + seconds, errors)
    print(json.dumps({"latencies": {str(k): v for k, v in latencies.items()},
                      "errors": errors, "steady_end": began + seconds}), flush=True)
    close_when_told(members)


KIP848_HEADER = (
    "\n| broker | KIP-848 groups x members | ConsumerGroupHeartbeat p50 / p99 ms | commit "
    "(v9, member epoch) p50 / p99 ms | answered | fencing errors (UNKNOWN_MEMBER_ID, "
    "FENCED/STALE_MEMBER_EPOCH) and others | formed s | heartbeats per member to form | "
    "heartbeat interval s | heartbeat / commit p99 ms, every answer after forming |\n"
    "|---|---|---:|---:|---:|---|---:|---:|---:|---:|\n")


def kip848_row(name: str, r: dict[str, Any] | None, groups: int, size: int,
               steady: tuple[float, float]) -> str:
    """One row of the KIP-848 table (``r``: the worker's output, None: not served); the
    latencies of the requests sent in the ``steady`` phase (start, end: monotonic), and the
    p99 of every answer after the groups formed."""
    if r is None:
        return f"| {name} | not served | | | | | | | | |"
    hb, hb_every = steady_and_every(r["latencies"].get(str(CONSUMER_HEARTBEAT), []), steady)
    commit, commit_every = steady_and_every(r["latencies"].get(str(COMMIT), []), steady)
    errors = {**{f"forming: {k}": v for k, v in r["form_errors"].items()}, **r["errors"]}
    return (f"| {name} | {groups} x {size} | {pct(hb, 0.5):.2f} / {pct(hb, 0.99):.2f} | "
            f"{pct(commit, 0.5):.2f} / {pct(commit, 0.99):.2f} | {len(hb) + len(commit)} | "
            f"{', '.join(f'{k} {v}' for k, v in sorted(errors.items())) or 'none'} | "
            f"{r['formed_s']:.1f} | {r['heartbeats'] / max(groups * size, 1):.1f} | "
            f"{r['interval_s']:g} | {pct(hb_every, 0.99):.2f} / {pct(commit_every, 0.99):.2f} |")
