"""Reproduce kafka-python 3.0.12's silent member (issue 32 item 12): see
``kafka_python_livelock.md`` next to this file.

Each run starts a two-member static group on an in-process kcoord, restarts the group's
leader with its instance id (Kafka's "leader rejoin" rebalance), waits until the group is
Stable, then waits one more session. A member removed by session timeout is judged from
kcoord's per-connection tallies (``coordinator/testing/removals.py``); for a silent client
the script prints the consumer's group state (``rejoin_needed``, member state, heartbeat
enabled, heartbeat loop and join task) and the stacks of its threads, and counts it.

    python tests/e2e/clients/kafka_python_livelock.py [--runs N] [--burners N]

Exit status 0 when no member was removed, 1 when a silent client was, 2 when kcoord failed
to renew a session it heard (a server fault: report it).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
import traceback
import warnings
from typing import Any

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka import KafkaConsumer

from coordinator.testing.double import KcoordServer

SESSION_S = 6.0


class Member(threading.Thread):
    def __init__(self, bootstrap: str, instance: str, incarnation: int) -> None:
        super().__init__(daemon=True, name=f"{instance}-{incarnation}")
        self.bootstrap, self.instance = bootstrap, instance
        self.consumer: Any = None
        self.done = threading.Event()

    def run(self) -> None:
        consumer = KafkaConsumer(
            bootstrap_servers=self.bootstrap, group_id="livelock", client_id=self.instance,
            group_instance_id=self.instance, enable_auto_commit=False,
            auto_offset_reset="earliest", session_timeout_ms=int(SESSION_S * 1000),
            heartbeat_interval_ms=500, max_poll_interval_ms=20_000)
        self.consumer = consumer
        consumer.subscribe(["t"])
        while not self.done.is_set():
            consumer.poll(timeout_ms=1000)
        consumer.close()

    @property
    def member_id(self) -> str:
        return "" if self.consumer is None else self.consumer._coordinator._generation.member_id

    def stop(self) -> None:
        self.done.set()
        self.join(20)


def client_state(member: Member) -> str:
    """What kafka-python's group coordinator and threads are doing."""
    coordinator = member.consumer._coordinator
    lines = [f"client {member.name}: state={coordinator.state} "
             f"rejoin_needed={coordinator.rejoin_needed} "
             f"heartbeat_enabled={coordinator._heartbeat_enabled} "
             f"heartbeat_loop={coordinator._heartbeat_loop_future} "
             f"join_task={coordinator._join_task} generation={coordinator._generation} "
             f"coordinator_id={coordinator.coordinator_id} "
             f"find_coordinator_future={coordinator._find_coordinator_future}"]
    frames = sys._current_frames()
    for thread in threading.enumerate():
        if thread is member or thread.name.startswith(f"kafka-io-{member.instance}"):
            frame = frames.get(thread.ident or -1)
            if frame is not None:
                lines.append(f"-- thread {thread.name}\n" + "".join(traceback.format_stack(frame)))
    return "\n".join(lines)


def stable(server: KcoordServer) -> bool:
    described = server.describe_group("livelock")
    return described is not None and described["state"] == "Stable" and len(
        described["members"]) == 2


def one_run(server: KcoordServer, run: int) -> int:
    members = {name: Member(server.bootstrap, name, run) for name in ("a", "b")}
    for member in members.values():
        member.start()
    watch = server.watch_removals()
    try:
        deadline = time.monotonic() + 60
        while not stable(server) and time.monotonic() < deadline:
            time.sleep(0.1)
        leader = (server.describe_group("livelock") or {}).get("leader", "")
        name = next((n for n, m in members.items() if m.member_id == leader), "a")
        members[name].stop()  # a static member sends no LeaveGroup
        members[name] = Member(server.bootstrap, name, run + 1000)
        members[name].start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not watch.taken():
            time.sleep(0.2)
            if stable(server) and time.monotonic() > deadline - 60 + SESSION_S + 3:
                break  # stable for longer than a session after the rejoin
        removals = watch.taken()
        status = 0
        for removal in removals:
            verdict = removal.verdict(SESSION_S)
            print(f"run {run}: {removal.member_id} removed: {verdict}; its connections: "
                  f"{removal.of({removal.prefix})}", flush=True)
            owner = members.get(removal.prefix)
            if owner is not None and owner.consumer is not None:
                print(client_state(owner), flush=True)
            status = max(status, 2 if verdict == "server failed to renew" else 1)
        return status
    finally:
        watch.uninstall()
        for member in members.values():
            member.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--burners", type=int, default=2)
    args = parser.parse_args()
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
               for _ in range(args.burners)]
    worst = 0
    try:
        for run in range(args.runs):
            with KcoordServer({"group.min.session.timeout.ms": "1000"},
                              topics={"t": 4}) as server:
                status = one_run(server, run)
            print(f"run {run}: {'no removal' if status == 0 else 'removal'}", flush=True)
            worst = max(worst, status)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    return worst


if __name__ == "__main__":
    sys.exit(main())
