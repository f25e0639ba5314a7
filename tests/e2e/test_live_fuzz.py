"""A live server under fuzzing (issue 15): more than 100,000 mutated frames of every API
kcoord decodes, admin APIs included, sent over many connections to a real ``kcoord serve``
while a healthy kafka-python group consumes and commits beside them. Beside the frame
mutations, well-formed requests carry mutated contents that only the validators see
(issue 32): Produce batches of every codec (garbage, bombs, lying record counts, flipped
bytes, CRCs fixed up), ConsumerGroupHeartbeats with pathological and mutated subscription
regexes against a 30-character topic name, and CreateTopics with mutated partition counts
(mostly far over the 10,000 a request may ask for); each must be answered promptly.

Asserted: the server is still up and answering, wrote no traceback, kept its peak RSS
bounded, and every commit the healthy group got acknowledged is there to read afterwards.

Slow (about ten seconds, with a server start): ``pytest -m slow tests/e2e/test_live_fuzz.py``.
"""

from __future__ import annotations

import importlib.util
import random
import socket
import struct
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from e2e_support import KcoordProcess, raw_request
from kafka import KafkaConsumer, KafkaProducer

import wire
from coordinator.server.apis import SERVED_API_KEYS

pytestmark = pytest.mark.slow

FRAMES = 100_000
CONNECTIONS = 8
FRAMES_PER_CONNECTION = 500
TOPIC, GROUP = "healthy-topic-7f3a", "healthy-group-7f3a"
PEAK_RSS_BOUND = 512 * 2**20
VALIDATOR_REQUESTS = 300


def seed_frames() -> list[bytes]:
    """A sample request of every served (api, version) with every field set (the wire fuzz
    tests' seeds), and one with every field at its default."""
    path = Path(__file__).resolve().parents[1] / "wire" / "fixtures" / "samples.py"
    spec = importlib.util.spec_from_file_location("wire_samples_for_live_fuzz", path)
    assert spec is not None and spec.loader is not None
    samples: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(samples)
    # Only the APIs the server routes: a valid request of one wire decodes but no handler
    # serves (a codec ahead of its server work) just closes the connection.
    seeds = [frame for _, frame in samples.sample_request_frames()
             if struct.unpack_from(">h", frame, 4)[0] in SERVED_API_KEYS]
    for key, version in samples.all_api_versions():
        if key in SERVED_API_KEYS:
            seeds.append(wire.encode_request(key, version, 7, "fuzz", {}))
    return seeds


def mutate(rng: random.Random, seeds: list[bytes]) -> bytes:
    """One mutated frame; its size prefix matches what follows it (a prefix promising more
    would only park the connection until the frame deadline)."""
    payload = bytearray(rng.choice(seeds)[4:])
    for _ in range(rng.randint(1, 4)):
        op = rng.choice(("flip", "set", "insert", "delete", "truncate", "count", "splice"))
        n = len(payload)
        if n <= 8 and op not in ("insert", "splice"):
            op = "insert"
        if op == "flip":
            payload[rng.randrange(8, n)] ^= 1 << rng.randrange(8)
        elif op == "set":
            payload[rng.randrange(8, n)] = rng.choice((0, 1, 0x7F, 0x80, 0xFE, 0xFF))
        elif op == "insert":
            i = rng.randint(min(8, n), n)
            payload[i:i] = rng.randbytes(rng.randint(1, 8))
        elif op == "delete":
            i = rng.randrange(8, n)
            del payload[i:i + rng.randint(1, 8)]
        elif op == "truncate":
            del payload[rng.randrange(8, n):]
        elif op == "count":  # a length or count field claiming too much or too little
            i = rng.randrange(8, n)
            value = rng.choice((-1, 0, 2**31 - 1, 2**15 - 1, 0x7FFFFFFF, rng.randrange(2**31)))
            payload[i:i + 4] = struct.pack(">i", value)
        else:
            other = rng.choice(seeds)[4:]
            i = rng.randint(min(8, n), n)
            payload[i:] = other[rng.randrange(len(other)):]
    return struct.pack(">i", len(payload)) + bytes(payload)


def fuzz(port: int, seed: int, frames: int, sent: list[int]) -> None:
    """Send ``frames`` mutated frames, FRAMES_PER_CONNECTION per connection, draining
    whatever comes back; a connection the server closes is replaced."""
    rng = random.Random(seed)
    seeds = seed_frames()
    done = 0
    while done < frames:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            connections_opened[0] += 1
            sock.setblocking(False)
            closed = False
            for _ in range(FRAMES_PER_CONNECTION):
                data = mutate(rng, seeds)
                try:
                    sock.sendall(data)
                except (BlockingIOError, OSError):
                    break  # closed by the server (or its buffer full): a new connection
                done += 1
                if _closed(sock):
                    closed = True
                    break
            # On a busy machine this thread can send all its frames before the server
            # reads the first: wait (bounded) for the server's verdict on what was sent.
            if closed or _closed(sock, VERDICT_WAIT_S):
                connections_closed[0] += 1
    sent.append(done)


PATHOLOGICAL_REGEXES = ["(.*?)+X", "(a|aa)*b", "((a+)+)+$", "(a*)*b", "(?=a)a", "(a)\\1",
                        "[a", "a**", "x{1001}", "\\C", "(?P<n>a)(?P<n>a)", "a{1000}" * 3]
LONG_TOPIC = "a" * 30
#: Where the validator fuzz produces (not the healthy group's topic: kafka-python cannot
#: read the snappy, lz4 and zstd batches that are valid).
FUZZ_TOPIC = "fuzz-batches"
#: The slowest answer a validated request may take (a backtracking regex took seconds).
ANSWER_BOUND_S = 5.0


def _batch(rng: random.Random) -> bytes:
    """A Produce batch whose records are mutated as only a validator would notice; its
    length and CRC are fixed up so that it reaches the record checks."""
    import cramjam
    import crc32c
    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                        producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                        batch_size=1 << 24)
    count = rng.randint(1, 5)
    for i in range(count):
        builder.append(i, timestamp=1000 + i, key=None, value=rng.randbytes(rng.randint(0, 64)),
                       headers=[])
    plain = bytes(builder.build())
    header, records = bytearray(plain[:61]), plain[61:]
    codec = rng.randint(1, 4)
    op = rng.choice(("garbage", "bomb", "fewer", "more", "flip", "valid"))
    if op == "garbage":
        records = rng.randbytes(rng.randint(1, 200))
    elif op == "bomb":
        records = bytes(rng.choice((2, 8, 32)) << 20)
    elif op == "fewer":
        records = records[: rng.randrange(len(records))]
    elif op == "more":
        records = records + records
    compress = {1: cramjam.gzip.compress, 2: cramjam.snappy.compress_raw,
                3: cramjam.lz4.compress, 4: cramjam.zstd.compress}[codec]
    body = bytearray(rng.randbytes(len(records)) if op == "garbage" else compress(records))
    if op == "flip" and body:
        body[rng.randrange(len(body))] ^= 1 << rng.randrange(8)
    data = header + body
    data[8:12] = struct.pack(">i", len(data) - 12)
    data[21:23] = struct.pack(">h", (struct.unpack(">h", data[21:23])[0] & ~7) | codec)
    data[17:21] = struct.pack(">I", crc32c.crc32c(bytes(data[21:])))
    return bytes(data)


def _regex(rng: random.Random) -> str:
    regex = rng.choice(PATHOLOGICAL_REGEXES)
    if rng.random() < 0.5:
        chars = list(regex)
        for _ in range(rng.randint(1, 3)):
            i = rng.randint(0, len(chars))
            chars[i:i] = rng.choice("()[]{}*+?|\\.^$aX09,")
        regex = "".join(chars)
    return regex


def _create_topics(rng: random.Random, seed: int, correlation: int) -> dict[str, object]:
    """A CreateTopics whose partition counts are mutated: mostly far over the 10,000 a
    request may ask for in all (refused as a whole), otherwise a small validate-only one."""
    topics = rng.randint(1, 40)
    partitions = rng.choice((1, 3, 500, 10_000, 100_000, 2**31 - 1, -1, 0))
    return {"topics": [{"name": f"fuzz-admin-{seed}-{correlation}-{i}",
                        "num_partitions": partitions, "replication_factor": 1,
                        "assignments": [], "configs": []} for i in range(topics)],
            "timeout_ms": 5000,
            "validate_only": topics * max(partitions, 1) <= 10_000 or rng.random() < 0.5}


def validator_fuzz(port: int, seed: int, requests: int, slowest: list[float]) -> None:
    """Well-formed Produce, ConsumerGroupHeartbeat and CreateTopics requests with mutated
    batches, regexes and partition counts, one connection; every one must be answered within
    ANSWER_BOUND_S."""
    import uuid

    rng = random.Random(seed)
    reader = wire.FrameReader()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        # correlation 0, not timed: the first group request waits for the coordinator to
        # load (the server defers it until it listens), which is not what is measured.
        for correlation in range(0, requests + 1):
            if correlation == 0:
                key, version, body = 68, 1, {
                    "group_id": f"fuzz-regex-{seed}-warm-up", "member_id": str(uuid.uuid4()),
                    "member_epoch": 0, "instance_id": None, "rack_id": None,
                    "rebalance_timeout_ms": 1000, "subscribed_topic_names": None,
                    "subscribed_topic_regex": "warm-up", "server_assignor": None,
                    "topic_partitions": []}
            elif rng.random() < 0.15:
                key, version, body = 19, 4, _create_topics(rng, seed, correlation)
            elif rng.random() < 0.5:
                key, version, body = 0, 9, {
                    "transactional_id": None, "acks": 1, "timeout_ms": 5000,
                    "topic_data": [{"name": FUZZ_TOPIC, "partition_data": [
                        {"index": rng.randrange(4), "records": _batch(rng)}]}]}
            else:
                key, version, body = 68, 1, {
                    "group_id": f"fuzz-regex-{seed}-{correlation}",
                    "member_id": str(uuid.uuid4()), "member_epoch": 0, "instance_id": None,
                    "rack_id": None, "rebalance_timeout_ms": 1000,
                    "subscribed_topic_names": None, "subscribed_topic_regex": _regex(rng),
                    "server_assignor": None, "topic_partitions": []}
            start = time.monotonic()
            sock.sendall(wire.encode_request(key, version, correlation, "vfuzz", body))
            while (payload := reader.next_frame()) is wire.NEED_DATA:
                data = sock.recv(1 << 16)
                assert data, f"the server closed on a well-formed request {key} v{version}"
                reader.receive_data(data)
            assert isinstance(payload, bytes)
            answered, _ = wire.decode_response(key, version, payload)
            assert answered == correlation
            if correlation:
                slowest.append(time.monotonic() - start)


connections_opened = [0]
connections_closed = [0]
#: How long a connection waits, after its last frame, for the server to close it.
VERDICT_WAIT_S = 5.0


def _closed(sock: socket.socket, wait_s: float = 0.0) -> bool:
    """Drain what the server answered; True once it closed the connection, waiting up to
    ``wait_s`` seconds for that (0: only what has already come)."""
    deadline = time.monotonic() + wait_s
    try:
        while True:
            left = deadline - time.monotonic()
            sock.settimeout(left if left > 0 else 0.0)  # 0.0: non-blocking
            if not sock.recv(1 << 16):
                return True
    except (BlockingIOError, TimeoutError):
        return False
    except OSError:
        return True


def peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def test_a_live_server_survives_100000_mutated_frames(tmp_path: Path) -> None:
    server = KcoordProcess(tmp_path / "data",
                           topics=[f"{TOPIC}:4", f"{LONG_TOPIC}:1", f"{FUZZ_TOPIC}:4"],
                           fsync="interval")
    server.start()
    stop = threading.Event()
    acked: dict[int, int] = {}
    failures: list[BaseException] = []

    def produce() -> None:
        producer = KafkaProducer(bootstrap_servers=server.bootstrap)
        i = 0
        while not stop.is_set():
            producer.send(TOPIC, f"h{i}".encode(), partition=i % 4)
            i += 1
            time.sleep(0.002)
        producer.flush(10)
        producer.close()

    def consume() -> None:
        consumer = KafkaConsumer(TOPIC, bootstrap_servers=server.bootstrap, group_id=GROUP,
                                 enable_auto_commit=False, auto_offset_reset="earliest",
                                 session_timeout_ms=10000, heartbeat_interval_ms=1000)
        try:
            while not stop.is_set():
                batch = consumer.poll(timeout_ms=1000)
                if not batch:
                    continue
                ends = {tp.partition: msgs[-1].offset + 1 for tp, msgs in batch.items()}
                try:
                    consumer.commit()
                except Exception as exc:  # a failed commit: the test fails below
                    failures.append(exc)
                    continue
                for partition, end in ends.items():
                    acked[partition] = max(acked.get(partition, 0), end)
        finally:
            consumer.close()

    healthy = [threading.Thread(target=produce), threading.Thread(target=consume)]
    try:
        for thread in healthy:
            thread.start()
        sent: list[int] = []
        fuzzers = [threading.Thread(target=fuzz, args=(server.port, seed,
                                                        FRAMES // CONNECTIONS, sent))
                   for seed in range(CONNECTIONS)]
        answer_times: list[float] = []
        validator_failures: list[BaseException] = []

        def run_validator_fuzz(seed: int) -> None:
            try:
                validator_fuzz(server.port, seed, VALIDATOR_REQUESTS, answer_times)
            except BaseException as exc:
                validator_failures.append(exc)

        fuzzers += [threading.Thread(target=run_validator_fuzz, args=(seed,))
                    for seed in range(2)]
        for thread in fuzzers:
            thread.start()
        for thread in fuzzers:
            thread.join(600)
        assert sum(sent) >= FRAMES
        assert validator_failures == []
        assert len(answer_times) == 2 * VALIDATOR_REQUESTS
        assert max(answer_times) < ANSWER_BOUND_S, max(answer_times)
        # Most mutated frames are refused: the server closes (nearly) every connection.
        assert connections_opened[0] >= FRAMES // FRAMES_PER_CONNECTION
        assert connections_closed[0] >= 0.9 * connections_opened[0], (
            connections_closed[0], connections_opened[0])
        time.sleep(3)  # the healthy group goes on committing after the storm
        stop.set()
        for thread in healthy:
            thread.join(60)

        assert server.proc is not None and server.proc.poll() is None, server.stderr()
        assert raw_request(server.bootstrap, 18, 3, {"client_software_name": "fuzz",
                                                     "client_software_version": "1"}
                           ).error_code == 0
        peak = peak_rss(server.proc.pid)
        print(f"live fuzz: {sum(sent):,} frames, {connections_closed[0]:,} of "
              f"{connections_opened[0]:,} connections closed by the server, "
              f"peak RSS {peak / 2**20:.0f} MiB, "
              f"{sum(acked.values()):,} records' commits acknowledged, "
              f"{len(answer_times)} validator-fuzz requests answered in at most "
              f"{max(answer_times):.3f} s")
        assert peak < PEAK_RSS_BOUND
        assert failures == []
        assert sum(acked.values()) > 0, "the healthy group never committed"
        fetched = raw_request(server.bootstrap, 9, 7, {
            "group_id": GROUP, "require_stable": False,
            "topics": [{"name": TOPIC, "partition_indexes": [0, 1, 2, 3]}]})
        committed = {p.partition_index: p.committed_offset for p in fetched.topics[0].partitions}
        for partition, end in acked.items():
            assert committed[partition] >= end, (partition, committed, acked)
    finally:
        stop.set()
        server.kill()
    assert "Traceback" not in server.stderr_path.read_text()
