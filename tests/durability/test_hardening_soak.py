"""Issue 32's hostile inputs against a real ``kcoord serve`` (items 1-6; item 12's group
restarts are ``test_group_restart_soak.py``), each case on its own server, bounded, and
stopping by itself. Throughout each case a probe (``hardening_support.Probe``) makes an
ApiVersions + Metadata round trip on a fresh connection every 100 ms: every one must be
answered within ``PROBE_BOUND_S`` (1 s; ``KCOORD_PROBE_BOUND_S`` overrides it) -- a slower
one counts only if the server was on CPU for half the bound meanwhile, so a loaded,
shared machine's scheduling is not blamed on the server (``hardening_support.held``) --
and the server's RSS may grow only by the case's bound.

1. A ConsumerGroupHeartbeat whose ``subscribed_topic_regex`` backtracks exponentially in
   Python's ``re`` against a 26-character topic name: answered within the bound (RE2).
2. A gzip bomb (512 MiB of zeros in a 0.5 MB batch) and garbage under each of the four
   codecs: Produce refuses them (CORRUPT_MESSAGE, INVALID_RECORD, or MESSAGE_TOO_LARGE for
   records inflating past message.max.bytes), and a ListOffsets by
   timestamp on the partition afterwards is answered within the bound.
3. Two connections trickling 100 MiB frames a byte at a time beside a 1 MB Produce sent in
   pieces: the Produce is answered within 5 s.
4. Ten connections pipelining twenty Fetches for 2^31-1 bytes each and never reading: the
   server closes them after ``socket.send.timeout.ms`` (3 s here) and holds at most its
   answer memory.
5. CreateTopics of 20 topics x 10,000 partitions, five times: POLICY_VIOLATION at once.
6. A server under RLIMIT_NOFILE 256 producing to 600 partitions: every Produce succeeds,
   no traceback, and it starts again on its own data under the same limit.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from durability_support import ServerProcess, Session, fetch_committed, recv_frame
from hardening_support import (
    LimitedServer,
    Probe,
    Trickle,
    batch,
    cpu_seconds,
    gzip_bomb,
    held,
    partition_error,
    plain_batch,
    produce_body,
)

from wire import decode_response, encode_request

pytestmark = pytest.mark.slow

PROBE_BOUND_S = float(os.environ.get("KCOORD_PROBE_BOUND_S", "1.0"))
MiB = 1 << 20
PRODUCE, FETCH, LIST_OFFSETS, CREATE_TOPICS, CGH = 0, 1, 2, 19, 68
CORRUPT_MESSAGE, INVALID_RECORD, POLICY_VIOLATION, MESSAGE_TOO_LARGE = 2, 87, 44, 10
#: A refused batch: garbage, malformed records, or records inflating past message.max.bytes.
REFUSED = (CORRUPT_MESSAGE, INVALID_RECORD, MESSAGE_TOO_LARGE)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., tuple[ServerProcess, Probe]]]:
    """``serve(topics=..., config=...)``: a started server with its probe running; both
    stopped (the server SIGKILLed) at teardown."""
    started: list[tuple[ServerProcess, Probe]] = []

    def start(server_class: type[ServerProcess] = ServerProcess,
              **kwargs: Any) -> tuple[ServerProcess, Probe]:
        server = server_class(tmp_path / f"data{len(started)}", fsync="never", **kwargs)
        server.start()
        # Untimed: a new server imports its routes and loads its log in stages after it
        # listens (about a second of CPU on a fresh clone; issue 33 measures the start). A
        # coordinator API's answer shows both done; the bounds here are about the requests.
        assert fetch_committed(server.port, ["warm-up"]) == {}
        probe = Probe(server)
        probe.bound_s = PROBE_BOUND_S
        probe.start()
        started.append((server, probe))
        return server, probe

    yield start
    for server, probe in started:
        probe.stop()
        server.kill()


def answered_within(server: ServerProcess, session: Session, bound_s: float, api_key: int,
                    version: int, body: dict[str, Any]) -> Any:
    """The answer, which must come within ``bound_s`` (``hardening_support.held``: a slow
    answer counts when the server was on CPU for half the bound meanwhile), and within
    ten times the bound whatever the machine's load."""
    assert server.proc is not None
    pid = server.proc.pid
    session.sock.settimeout(bound_s * 10)
    began, cpu = time.monotonic(), cpu_seconds(pid)
    try:
        answer = session.call(api_key, version, body)
    except TimeoutError:
        raise AssertionError(f"no answer to API {api_key} within {bound_s * 10} s") from None
    took, cpu = time.monotonic() - began, cpu_seconds(pid) - cpu
    assert not held(took, cpu, bound_s), (
        f"API {api_key} answered in {took:.2f} s with the server {cpu:.2f} s on CPU "
        f"(bound {bound_s} s)")
    return answer


def test_hostile_regex_heartbeats_answer_within_the_bound(serve: Any) -> None:
    name = "a" * 26
    server, probe = serve(topics=[f"{name}:1"])
    with Session(server.port) as session:
        for regex in ("(.*?)+X", "(a+)+$X", "(a|aa)+X"):
            answer = answered_within(server, session, PROBE_BOUND_S, CGH, 1, {
                "group_id": f"regex-{len(regex)}", "member_id": str(uuid.uuid4()),
                "member_epoch": 0, "rebalance_timeout_ms": 45_000,
                "subscribed_topic_regex": regex, "topic_partitions": []})
            assert answer["error_code"] == 0, answer
        time.sleep(2)  # a match the server ran later, off the request, shows in the probe
    probe.stop()
    probe.check(64 * MiB)


def test_gzip_bomb_and_garbage_batches_are_refused(serve: Any) -> None:
    server, probe = serve(topics=["bomb:1"])
    hostile = [gzip_bomb(512 * MiB)] + [batch(b"\xff\x00garbage" * 200, 3, codec)
                                        for codec in (1, 2, 3, 4)]
    with Session(server.port) as session:
        for records in hostile:
            answer = answered_within(server, session, 5.0, PRODUCE, 9,
                                     produce_body("bomb", 0, records))
            assert partition_error(answer) in REFUSED, answer
        listed = answered_within(server, session, PROBE_BOUND_S, LIST_OFFSETS, 7, {
            "replica_id": -1, "isolation_level": 0, "topics": [{"name": "bomb", "partitions": [
                {"partition_index": 0, "current_leader_epoch": -1, "timestamp": 0}]}]})
        assert listed["topics"][0]["partitions"][0]["error_code"] == 0
    probe.stop()
    probe.check(128 * MiB)


def test_slow_tricklers_leave_room_for_a_large_produce(serve: Any) -> None:
    server, probe = serve(topics=["t:1"])
    tricklers = [Trickle(server.port, 100 * MiB, 0.5) for _ in range(2)]
    for trickler in tricklers:
        trickler.start()
    try:
        time.sleep(2)
        frame = encode_request(PRODUCE, 9, 1, "large", produce_body("t", 0, plain_batch(1_000_000)))
        began = time.monotonic()
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            for start in range(0, len(frame), 64 * 1024):
                sock.sendall(frame[start:start + 64 * 1024])
                time.sleep(0.005)
            correlation, answer = decode_response(PRODUCE, 9, recv_frame(sock))
        took = time.monotonic() - began
        assert correlation == 1 and partition_error(answer) == 0, answer
        assert took <= 5.0, f"the 1 MB Produce took {took:.1f} s beside the tricklers"
    finally:
        for trickler in tricklers:
            trickler.stop()
    probe.stop()
    probe.check(64 * MiB)


def _closed_by_server(server_port: int, sock: socket.socket) -> bool:
    """Whether the server closed its end of ``sock`` (read without reading from ``sock``:
    the server's socket is no longer ESTABLISHED in /proc/net/tcp)."""
    client_port = sock.getsockname()[1]
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, remote, state = line.split()[1:4]
        if (int(local.split(":")[1], 16) == server_port
                and int(remote.split(":")[1], 16) == client_port):
            return state != "01"
    return True


def test_unread_fetch_answers_are_bounded_and_closed(serve: Any) -> None:
    server, probe = serve(topics=["f:1"], config={"socket.send.timeout.ms": "3000"})
    with Session(server.port) as session:
        for _ in range(16):
            answer = session.call(PRODUCE, 9, produce_body("f", 0, plain_batch(1_000_000)))
            assert partition_error(answer) == 0
    probe.rebase()
    fetch = b"".join(encode_request(FETCH, 12, correlation, "unread", {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 2**31 - 1,
        "isolation_level": 0, "session_id": 0, "session_epoch": -1,
        "topics": [{"topic": "f", "partitions": [
            {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
             "last_fetched_epoch": -1, "log_start_offset": -1,
             "partition_max_bytes": 2**31 - 1}]}],
        "forgotten_topics_data": [], "rack_id": ""}) for correlation in range(20))
    readers = []
    for _ in range(10):
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", server.port))
        sock.sendall(fetch)
        readers.append(sock)
    try:
        deadline = time.monotonic() + 20
        open_ = list(readers)
        while open_ and time.monotonic() < deadline:
            time.sleep(1)
            open_ = [s for s in open_ if not _closed_by_server(server.port, s)]
        assert not open_, f"{len(open_)} of 10 unread connections still open after 20 s"
    finally:
        for sock in readers:
            sock.close()
    probe.stop()
    # Answers queued for ten readers: the answer memory (kcoord.queued.max.response.bytes,
    # 110 MiB) and the allocator's slack; unbounded, 10 x 16 MB answers and their encoded
    # copies held for socket.send.timeout.ms (issue 32 measured +1.1 GiB).
    probe.check(200 * MiB)


def test_create_topics_over_the_partition_limit_is_refused_at_once(serve: Any) -> None:
    server, probe = serve()
    request = {"topics": [{"name": f"huge{i}", "num_partitions": 10_000,
                           "replication_factor": 1} for i in range(20)], "timeout_ms": 10_000}
    with Session(server.port) as session:
        for _ in range(5):
            answer = answered_within(server, session, PROBE_BOUND_S, CREATE_TOPICS, 7, request)
            assert {t["error_code"] for t in answer["topics"]} == {POLICY_VIOLATION}
    probe.stop()
    probe.check(64 * MiB)


def _produce_everywhere(port: int, topic: str, partitions: int) -> list[int]:
    errors = []
    with Session(port) as session:
        for first in range(0, partitions, 10):
            answer = session.call(PRODUCE, 9, {
                "transactional_id": None, "acks": 1, "timeout_ms": 10_000, "topic_data": [
                    {"name": topic, "partition_data": [
                        {"index": p, "records": plain_batch(100)}
                        for p in range(first, min(first + 10, partitions))]}]})
            errors += [p["error_code"] for p in answer["responses"][0]["partition_responses"]]
    return errors


def test_a_descriptor_limited_server_writes_to_many_partitions(serve: Any) -> None:
    server, probe = serve(LimitedServer, nofile=256, topics=["many:600"])
    errors = _produce_everywhere(server.port, "many", 600)
    assert errors == [0] * 600, {code: errors.count(code) for code in set(errors)}
    probe.stop()
    probe.check(128 * MiB)
    assert server.stop() == 0
    assert "Traceback" not in server.stderr(), server.stderr()[-3000:]
    server.start()  # on its own data, under the same limit
    probe = Probe(server)
    probe.bound_s = PROBE_BOUND_S
    probe.start()
    try:
        errors = _produce_everywhere(server.port, "many", 600)
        assert errors == [0] * 600, {code: errors.count(code) for code in set(errors)}
        time.sleep(1)
    finally:
        probe.stop()
    probe.check(128 * MiB)
    assert "Traceback" not in server.stderr(), server.stderr()[-3000:]

