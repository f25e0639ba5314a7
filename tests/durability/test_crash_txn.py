"""Acknowledged transactions survive SIGKILL (issue 12): a real ``kcoord serve`` under
transactional load is killed at a random moment and restarted on the same data directory.

The load: 4 transactional producers (raw frames), each looping over transactions of one
record on its own partition plus an offset commit for its group partition
(AddPartitionsToTxn, Produce, AddOffsetsToTxn, TxnOffsetCommit, EndTxn). The record's value
and the committed offset are the transaction's sequence number; an EndTxn answered with
error 0 acknowledges it. After each restart:

- a new instance of every producer initializes (fencing the killed one; its open
  transaction is aborted), and the partitions' last stable offsets reach their ends;
- every acknowledged transaction's record is visible to read_committed, in order, and no
  record of a transaction that was never ended with a commit (the log loaded cleanly);
- every group's committed offset is at least its last acknowledged transaction's and at
  most the last sent.

``KCOORD_CRASH_SEED`` picks the kill times.
"""

from __future__ import annotations

import os
import random
import struct
import threading
import time
import warnings
from pathlib import Path

import pytest
from durability_support import (
    LOAD_IN_PROGRESS,
    ServerProcess,
    Session,
    fetch_committed,
    load_report_problems,
)

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

TOPIC = "txn-crash"
PRODUCERS = 4
CONCURRENT_TRANSACTIONS = 51


def batch(value: int, producer_id: int, epoch: int, sequence: int) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=True, producer_id=producer_id,
        producer_epoch=epoch, base_sequence=sequence, batch_size=1 << 16)
    builder.append(0, timestamp=1_000, key=None, value=struct.pack(">q", value), headers=[])
    return bytes(builder.build())


class TxnProducer:
    """One transactional id over raw frames; ``acked`` and ``sent`` transaction numbers."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.txn_id = f"crash-tx-{index}"
        self.group = f"crash-group-{index}"
        self.acked = 0
        self.sent = 0

    def init(self, session: Session) -> tuple[int, int]:
        deadline = time.monotonic() + 30
        while True:
            answer = session.call(22, 4, {"transactional_id": self.txn_id,
                                          "transaction_timeout_ms": 60_000,
                                          "producer_id": -1, "producer_epoch": -1})
            if answer.error_code == 0:
                return answer.producer_id, answer.producer_epoch
            # A restarted coordinator still loading answers COORDINATOR_LOAD_IN_PROGRESS (14)
            # after its load wait; clients retry both, for a bounded time.
            assert answer.error_code in (CONCURRENT_TRANSACTIONS, LOAD_IN_PROGRESS), answer
            assert time.monotonic() < deadline, f"InitProducerId kept answering {answer}"
            time.sleep(0.02)

    def run(self, port: int, stop: threading.Event) -> None:
        try:
            with Session(port) as session:
                producer_id, epoch = self.init(session)
                sequence = 0
                while not stop.is_set():
                    number = self.sent + 1
                    self.sent = number
                    ids = {"producer_id": producer_id, "producer_epoch": epoch}
                    added = session.call(24, 3, {
                        "v3_and_below_transactional_id": self.txn_id,
                        "v3_and_below_producer_id": producer_id,
                        "v3_and_below_producer_epoch": epoch,
                        "v3_and_below_topics": [{"name": TOPIC, "partitions": [self.index]}]})
                    assert added.results_by_topic_v3_and_below[0].results_by_partition[0] \
                        .partition_error_code == 0, added
                    produced = session.call(0, 9, {
                        "transactional_id": self.txn_id, "acks": -1, "timeout_ms": 10_000,
                        "topic_data": [{"name": TOPIC, "partition_data": [
                            {"index": self.index,
                             "records": batch(number, producer_id, epoch, sequence)}]}]})
                    assert produced.responses[0].partition_responses[0].error_code == 0
                    sequence += 1
                    assert session.call(25, 0, {"transactional_id": self.txn_id, **ids,
                                                "group_id": self.group}).error_code == 0
                    committed = session.call(28, 3, {
                        "transactional_id": self.txn_id, "group_id": self.group, **ids,
                        "generation_id": -1, "member_id": "", "group_instance_id": None,
                        "topics": [{"name": TOPIC, "partitions": [{
                            "partition_index": self.index, "committed_offset": number,
                            "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
                    assert committed.topics[0].partitions[0].error_code == 0
                    ended = session.call(26, 1, {"transactional_id": self.txn_id, **ids,
                                                 "committed": True})
                    assert ended.error_code == 0, ended
                    self.acked = number
        except (OSError, ConnectionError):
            return  # the kill


def read_committed(port: int, partition: int) -> tuple[list[int], int, int]:
    """(values read_committed sees, high watermark, last stable offset)."""
    values: list[int] = []
    with Session(port) as session:
        offset = 0
        while True:
            answer = session.call(1, 11, {
                "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 22,
                "isolation_level": 1, "session_id": 0, "session_epoch": -1,
                "topics": [{"topic": TOPIC, "partitions": [{
                    "partition": partition, "current_leader_epoch": -1, "fetch_offset": offset,
                    "log_start_offset": -1, "partition_max_bytes": 1 << 22}]}],
                "forgotten_topics_data": [], "rack_id": ""})
            p = answer.responses[0].partitions[0]
            assert p.error_code == 0, p
            aborted = {(a.producer_id, a.first_offset) for a in p.aborted_transactions}
            data = bytes(p.records)
            if not data:
                return values, p.high_watermark, p.last_stable_offset
            skipping: set[int] = set()
            position = 0
            while position < len(data):
                size = struct.unpack_from(">i", data, position + 8)[0] + 12
                record_batch = DefaultRecordBatch(data[position : position + size])
                base = struct.unpack_from(">q", data, position)[0]
                pid = record_batch.producer_id
                if (pid, base) in aborted:
                    skipping.add(pid)
                if record_batch.is_control_batch:
                    skipping.discard(pid)
                elif pid not in skipping:
                    values.extend(struct.unpack(">q", r.value)[0] for r in record_batch)
                offset = base + record_batch.last_offset_delta + 1
                position += size


def kill_rounds(tmp_path: Path, kills: int, seed: int) -> None:
    rng = random.Random(seed)
    server = ServerProcess(tmp_path / "data", fsync=None, topics=[f"{TOPIC}:{PRODUCERS}"])
    server.start()
    producers = [TxnProducer(i) for i in range(PRODUCERS)]
    try:
        for round_no in range(kills):
            context = f"seed {seed}, round {round_no}"
            stop = threading.Event()
            threads = [threading.Thread(target=p.run, args=(server.port, stop), daemon=True)
                       for p in producers]
            before = [p.acked for p in producers]
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + 30
            while any(p.acked == b for p, b in zip(producers, before, strict=True)):
                assert time.monotonic() < deadline, f"{context}: no transaction acknowledged"
                time.sleep(0.01)
            time.sleep(rng.uniform(0.2, 1.0))
            server.kill()
            stop.set()
            for thread in threads:
                thread.join(15)
            server.start()
            # New instances fence the killed ones (and abort their open transactions).
            with Session(server.port) as session:
                for p in producers:
                    p.init(session)
            problems = load_report_problems(server.stderr())
            assert not problems, f"{context}: the log did not load cleanly: {problems}"
            committed = fetch_committed(server.port, [p.group for p in producers])
            for p in producers:
                values, high_watermark, stable = read_committed(server.port, p.index)
                assert stable == high_watermark, f"{context}: LSO {stable} < HW {high_watermark}"
                assert values == sorted(set(values)), f"{context}: duplicates or disorder"
                assert set(range(1, p.acked + 1)) <= set(values), (
                    f"{context}: acknowledged transactions lost on partition {p.index}: "
                    f"{sorted(set(range(1, p.acked + 1)) - set(values))[:10]}")
                assert not values or values[-1] <= p.sent, f"{context}: values never sent"
                offset = committed.get((p.group, TOPIC, p.index), 0)
                assert p.acked <= offset <= p.sent, (
                    f"{context}: group offset {offset} outside [{p.acked}, {p.sent}]")
                # The next round continues numbering after whatever survived.
                p.sent = p.acked = max([offset, *values])
    finally:
        server.kill()


def _seed() -> int:
    return int(os.environ.get("KCOORD_CRASH_SEED", time.time_ns() % 2**32))


def test_acknowledged_transactions_survive_kill9(tmp_path: Path) -> None:
    kill_rounds(tmp_path, kills=1, seed=_seed())


@pytest.mark.slow
def test_acknowledged_transactions_survive_kill9_long(tmp_path: Path) -> None:
    kill_rounds(tmp_path, kills=12, seed=_seed())

