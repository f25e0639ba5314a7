"""Issue 32 item 12: static and dynamic kafka-python groups restarted hundreds of times under
CPU load, every removal by session timeout judged by what the member's client sent.

Four groups of two kafka-python 3.0.12 consumers (two static, two dynamic) on the in-process
server, one driver thread per group, with CPU burners beside them. A round restarts one
member of its group -- alternately the leader, so a static group sees Kafka's "leader
rejoin" rebalance -- and waits (bounded) until the group is Stable, each client at the
server's generation, and the partitions exactly covered. A static member is closed without
LeaveGroup (kafka-python sends none for static members) and its instance id rejoins; a
dynamic one leaves. No removal by session timeout is intended, so each one is judged at the
moment it happens (``coordinator/testing/removals.py``, from the server's per-connection
tallies): a removal whose client's Heartbeat, JoinGroup, SyncGroup or OffsetCommit reached
the server during the session fails the test (kcoord did not renew it); a removal of a
client that sent nothing for a session is kafka-python's selector livelock
(``tests/e2e/clients/kafka_python_livelock.md``), counted and reported, and the round
replaces that client. A round that never stabilises fails with the group, the clients'
state and their tallies.

Bounded: ``KCOORD_SOAK_SECONDS`` (default 150) of restarts, each wait 45 s at most;
``KCOORD_SOAK_BURNERS`` CPU burner processes (default 2).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka import KafkaConsumer

from coordinator.testing.double import KcoordServer
from coordinator.testing.removals import Removal, RemovalWatch

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::ResourceWarning"),
              pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")]

SOAK_S = float(os.environ.get("KCOORD_SOAK_SECONDS", "150"))
BURNERS = int(os.environ.get("KCOORD_SOAK_BURNERS", "2"))
PARTITIONS = 4
SESSION_S = 6.0
STABLE_WITHIN_S = 45.0
GROUPS = (("static", 0), ("static", 1), ("dynamic", 0), ("dynamic", 1))
MIN_RESTARTS = 40  # far below what the default budget reaches: the soak did run


class Member(threading.Thread):
    """One kafka-python consumer polling in its own thread, with its own client id."""

    def __init__(self, bootstrap: str, group: str, client_id: str,
                 instance_id: str | None) -> None:
        super().__init__(daemon=True, name=client_id)
        self.bootstrap, self.group = bootstrap, group
        self.client_id, self.instance_id = client_id, instance_id
        self.assignment: frozenset[int] = frozenset()
        self.generation = -1
        self.member_id = ""
        self.error: BaseException | None = None
        self.started_at = time.monotonic()
        self.stopped_at: float | None = None
        self.polls = 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        try:
            consumer = KafkaConsumer(
                bootstrap_servers=self.bootstrap, group_id=self.group,
                client_id=self.client_id, group_instance_id=self.instance_id,
                enable_auto_commit=False, auto_offset_reset="earliest",
                session_timeout_ms=int(SESSION_S * 1000), heartbeat_interval_ms=500,
                max_poll_interval_ms=20_000)
            consumer.subscribe(["t"])
            while not self._stop_event.is_set():
                batch = consumer.poll(timeout_ms=1000)  # kp_support.POLL_MS
                self.polls += 1
                if batch:
                    consumer.commit()
                generation = consumer._coordinator._generation
                self.assignment = frozenset(tp.partition for tp in consumer.assignment())
                self.generation, self.member_id = generation.generation_id, generation.member_id
            consumer.close()
        except BaseException as exc:  # reported by the driver
            self.error = exc

    def stop(self) -> bool:
        """Stop and close (bounded); False if the thread did not end (left behind)."""
        self._stop_event.set()
        self.join(20)
        self.stopped_at = time.monotonic()
        return not self.is_alive()


@dataclass
class Driver:
    """Restarts one group's members in turn; what it saw."""

    server: KcoordServer
    kind: str
    index: int
    restarts: int = 0
    replaced_silent: int = 0
    left_behind: int = 0
    failures: list[str] = field(default_factory=list)
    members: list[Member] = field(default_factory=list)
    history: list[Member] = field(default_factory=list)
    incarnation: int = 0

    @property
    def group(self) -> str:
        return f"soak-{self.kind}-{self.index}"

    def start_member(self, slot: int) -> Member:
        self.incarnation += 1
        instance = f"{self.group}-i{slot}" if self.kind == "static" else None
        member = Member(self.server.bootstrap, self.group,
                        f"{self.group}-c{slot}-{self.incarnation}", instance)
        member.start()
        self.history.append(member)
        return member

    def stable(self) -> bool:
        described = self.server.describe_group(self.group)
        if described is None or described["state"] != "Stable":
            return False
        generation = described["generation_id"]
        owned = [m.assignment for m in self.members]
        return (len(described["members"]) == 2
                and all(m.generation == generation for m in self.members)
                and sum(len(a) for a in owned) == PARTITIONS
                and frozenset().union(*owned) == frozenset(range(PARTITIONS)))

    def wait_stable(self, deadline: float) -> bool:
        until = min(deadline + STABLE_WITHIN_S, time.monotonic() + STABLE_WITHIN_S)
        while time.monotonic() < until:
            if self.stable():
                return True
            for member in self.members:
                if member.error is not None:
                    self.failures.append(f"{member.name} failed: {member.error!r}")
                    return False
            time.sleep(0.1)
        return self.stable()

    def replace(self, slot: int) -> None:
        if not self.members[slot].stop():
            self.left_behind += 1
        self.members[slot] = self.start_member(slot)
        self.restarts += 1

    def leader_slot(self) -> int:
        described = self.server.describe_group(self.group) or {}
        leader = described.get("leader", "")
        return next((slot for slot, m in enumerate(self.members) if m.member_id == leader),
                    self.restarts % 2)

    def run(self, deadline: float, silent: set[str]) -> None:
        self.members = [self.start_member(0), self.start_member(1)]
        if not self.wait_stable(deadline):
            self.failures.append(f"{self.group} never stabilised at the start: {self.state()}")
            return
        while time.monotonic() < deadline and not self.failures:
            slot = self.leader_slot() if self.restarts % 2 == 0 else 1 - self.leader_slot()
            self.replace(slot)
            if self.wait_stable(deadline):
                continue
            # A client the removal watch found silent is replaced (kafka-python's
            # livelock); anything else is a failure.
            stuck = [s for s, m in enumerate(self.members) if m.client_id in silent]
            if not stuck:
                self.failures.append(f"{self.group} did not stabilise: {self.state()}")
                return
            for slot in stuck:
                self.replaced_silent += 1
                self.replace(slot)
            if not self.wait_stable(deadline):
                self.failures.append(f"{self.group} did not stabilise after replacing "
                                     f"silent clients: {self.state()}")
                return

    def state(self) -> str:
        described = self.server.describe_group(self.group)
        clients = [(m.client_id, m.member_id, m.generation, sorted(m.assignment), m.polls,
                    m.is_alive()) for m in self.members]
        tallies = [self.server.connection_tallies(m.client_id) for m in self.members]
        return f"group={described} clients={clients} tallies={tallies}"

    def stop(self) -> None:
        for member in self.members:
            if not member.stop():
                self.left_behind += 1


def client_ids_of(removal: Removal, drivers: list[Driver]) -> set[str]:
    """The client ids whose connections spoke for the removed member: the incarnation that
    had its member id, else (static) every incarnation of its instance id."""
    for driver in drivers:
        for member in driver.history:
            if member.member_id == removal.member_id:
                return {member.client_id}
    return {m.client_id for d in drivers for m in d.history
            if removal.prefix in (m.client_id, m.instance_id)}


@pytest.fixture
def burners() -> Iterator[None]:
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
             for _ in range(BURNERS)]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(10)


def test_group_restarts_under_cpu_load_lose_no_member_to_the_server(
        tmp_path: Any, burners: None) -> None:
    server = KcoordServer({"group.min.session.timeout.ms": "1000"},
                          data_dir=str(tmp_path / "data"), topics={"t": PARTITIONS})
    server.start()
    watch: RemovalWatch = server.watch_removals()
    drivers = [Driver(server, kind, index) for kind, index in GROUPS]
    silent: set[str] = set()
    deadline = time.monotonic() + SOAK_S
    stop_judging = threading.Event()

    def judge() -> None:  # marks silent clients as removals happen
        while not stop_judging.wait(0.2):
            for removal in watch.taken():
                clients = client_ids_of(removal, drivers)
                if removal.verdict(SESSION_S, clients) != "server failed to renew":
                    silent.update(clients)

    threads = [threading.Thread(target=d.run, args=(deadline, silent), daemon=True)
               for d in drivers]
    judging = threading.Thread(target=judge, daemon=True)
    judging.start()
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(SOAK_S + 4 * STABLE_WITHIN_S + 60)
            assert not thread.is_alive(), "a group driver did not finish"
    finally:
        stop_judging.set()
        judging.join(5)
        for driver in drivers:
            driver.stop()
        removals = watch.taken()
        watch.uninstall()
        server.close()

    verdicts = [(r.member_id, r.verdict(SESSION_S, client_ids_of(r, drivers)),
                 r.of(client_ids_of(r, drivers))) for r in removals]
    restarts = sum(d.restarts for d in drivers)
    summary = (f"{restarts} restarts, {len(removals)} removals by session timeout "
               f"{[(m, v) for m, v, _ in verdicts]}, "
               f"{sum(d.replaced_silent for d in drivers)} silent clients replaced, "
               f"{sum(d.left_behind for d in drivers)} client threads left behind")
    print(summary)
    server_faults = [v for v in verdicts if v[1] == "server failed to renew"]
    assert not server_faults, f"kcoord expired members whose sessions it heard: {server_faults}"
    failures = [f for d in drivers for f in d.failures]
    assert not failures, f"{summary}\n" + "\n".join(failures)
    assert restarts >= min(MIN_RESTARTS, int(SOAK_S / 4)), summary
