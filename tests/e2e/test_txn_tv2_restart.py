"""Transaction version 2 (KIP-890 part 2) against a kcoord process, across SIGKILLs.

No installed client speaks TV2 (confluent-kafka 2.16.1 / librdkafka 2.16.0 sends EndTxn v1
and Produce v10 even with ``transaction.version`` 2 finalized; kafka-python caps EndTxn at
v3), so the producer here speaks raw frames as a Kafka 4 Java producer does with TV2:
Produce v12 and TxnOffsetCommit v5 without AddPartitionsToTxn / AddOffsetsToTxn, EndTxn v5
taking the bumped epoch from its answer. Readers are real confluent-kafka consumers."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from e2e_support import raw_request

from wire import ErrorCode

confluent_kafka = pytest.importorskip("confluent_kafka")

PRODUCE, INIT_PRODUCER_ID, END_TXN, TXN_OFFSET_COMMIT = 0, 22, 26, 28
TOPICS = ["tv2-in:1", "tv2-out:2"]


def _batch(value: bytes, producer_id: int, epoch: int, sequence: int) -> bytes:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka.record.default_records import DefaultRecordBatchBuilder
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=True, producer_id=producer_id,
        producer_epoch=epoch, base_sequence=sequence, batch_size=1 << 20)
    builder.append(0, timestamp=1_000, key=None, value=value, headers=[])
    return bytes(builder.build())


class RawTv2Producer:
    """The producer's id, epoch and sequences live here, so it outlives the broker."""

    def __init__(self, bootstrap: str, transactional_id: str) -> None:
        self.bootstrap = bootstrap
        self.transactional_id = transactional_id
        answer = raw_request(bootstrap, INIT_PRODUCER_ID, 4, {
            "transactional_id": transactional_id, "transaction_timeout_ms": 60_000,
            "producer_id": -1, "producer_epoch": -1})
        assert answer.error_code == 0
        self.producer_id, self.epoch = answer.producer_id, answer.producer_epoch
        self.sequences: dict[int, int] = {}

    def produce(self, partition: int, value: bytes, epoch: int | None = None) -> int:
        epoch = self.epoch if epoch is None else epoch
        sequence = self.sequences.get(partition, 0)
        answer = raw_request(self.bootstrap, PRODUCE, 12, {
            "transactional_id": self.transactional_id, "acks": -1, "timeout_ms": 5_000,
            "topic_data": [{"name": "tv2-out", "partition_data": [{
                "index": partition,
                "records": _batch(value, self.producer_id, epoch, sequence)}]}]})
        (result,) = answer.responses[0].partition_responses
        if result.error_code == 0:
            self.sequences[partition] = sequence + 1
        code: int = result.error_code
        return code

    def commit_offset(self, group: str, offset: int) -> int:
        answer = raw_request(self.bootstrap, TXN_OFFSET_COMMIT, 5, {
            "transactional_id": self.transactional_id, "group_id": group,
            "producer_id": self.producer_id, "producer_epoch": self.epoch,
            "generation_id": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": "tv2-in", "partitions": [{
                "partition_index": 0, "committed_offset": offset, "committed_leader_epoch": -1,
                "committed_metadata": ""}]}]})
        code: int = answer.topics[0].partitions[0].error_code
        return code

    def end(self, commit: bool, epoch: int | None = None) -> tuple[int, int, int]:
        answer = raw_request(self.bootstrap, END_TXN, 5, {
            "transactional_id": self.transactional_id, "producer_id": self.producer_id,
            "producer_epoch": self.epoch if epoch is None else epoch, "committed": commit})
        if answer.error_code == 0 and answer.producer_epoch != self.epoch:
            self.producer_id, self.epoch = answer.producer_id, answer.producer_epoch
            self.sequences.clear()  # a new epoch starts its sequences at 0
        return answer.error_code, answer.producer_id, answer.producer_epoch


def _read_committed(bootstrap: str, want: int) -> list[bytes]:
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": "tv2-reader", "enable.auto.commit": False,
        "isolation.level": "read_committed"})
    consumer.assign([confluent_kafka.TopicPartition("tv2-out", p, 0) for p in range(2)])
    got: list[bytes] = []
    empty_polls = 0
    try:
        # Every record wanted, then a second of nothing more.
        while len(got) < want or empty_polls < 10:
            message = consumer.poll(0.1)
            if message is None or message.error():
                empty_polls += 1
                assert empty_polls < 300, f"only {got} after 30 s"
                continue
            got.append(message.value())
    finally:
        consumer.close()
    return sorted(got)


def _committed_offset(bootstrap: str, group: str) -> int:
    consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    try:
        (tp,) = consumer.committed([confluent_kafka.TopicPartition("tv2-in", 0)], 10)
    finally:
        consumer.close()
    offset: int = tp.offset
    return offset


def test_tv2_transactions_bump_the_epoch_and_survive_sigkill(
    start_kcoord: Any, tmp_path: Path
) -> None:
    data = tmp_path / "tv2-data"
    server = start_kcoord(data_dir=data, topics=TOPICS)
    txn = RawTv2Producer(server.bootstrap, "tv2-eos")
    pid, first_epoch = txn.producer_id, txn.epoch

    # 1: committed; its partitions and the group's offsets partition are added implicitly.
    assert (txn.produce(0, b"a0"), txn.produce(1, b"a1"), txn.commit_offset("tv2-g", 1)) == (
        0, 0, 0)
    assert txn.end(True) == (0, pid, first_epoch + 1)

    # 2: open at the new epoch when the broker is killed; its state was persisted first.
    assert (txn.produce(0, b"b0"), txn.commit_offset("tv2-g", 2)) == (0, 0)
    server.kill()
    server = start_kcoord(data_dir=data, topics=TOPICS, port=server.port)
    assert txn.end(True) == (0, pid, first_epoch + 2)

    # 3: committed, then the broker is killed before the client saw the answer: the
    # retry with the previous epoch is answered again after the restart.
    assert txn.produce(1, b"c1") == 0
    assert txn.end(True) == (0, pid, first_epoch + 3)
    server.kill()
    server = start_kcoord(data_dir=data, topics=TOPICS, port=server.port)
    assert txn.end(True, epoch=first_epoch + 2) == (0, pid, first_epoch + 3)

    # 4: aborted: read_committed readers never see it.
    assert txn.produce(0, b"poison") == 0
    assert txn.end(False) == (0, pid, first_epoch + 4)

    assert _read_committed(server.bootstrap, 4) == [b"a0", b"a1", b"b0", b"c1"]
    assert _committed_offset(server.bootstrap, "tv2-g") == 2
    # Every end bumped the epoch: an older one may not write any more.
    assert txn.produce(1, b"stale", epoch=first_epoch + 2) == ErrorCode.INVALID_PRODUCER_EPOCH
