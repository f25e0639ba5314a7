"""Transaction version 2 (KIP-890 part 2) over TCP against an in-process server.

No installed client uses it (confluent-kafka 2.16.1 / librdkafka 2.16.0 sends EndTxn v1,
Produce v10 and AddPartitionsToTxn v0 even when ``transaction.version`` 2 is finalized;
kafka-python caps EndTxn at v3), so these tests speak the frames a Kafka 4 Java producer
sends with TV2: Produce v12 without AddPartitionsToTxn, TxnOffsetCommit v5
without AddOffsetsToTxn, and EndTxn v5, whose answer carries the bumped epoch."""

from __future__ import annotations

from typing import Any

import pytest
from raw_client import (
    API_VERSIONS,
    END_TXN,
    OFFSET_FETCH,
    PRODUCE,
    TXN_OFFSET_COMMIT,
    RawClient,
    TxnClient,
    batch,
)

from coordinator.server.app import RunningServer
from coordinator.server.options import ConfigError, build_options
from wire import ErrorCode

FETCH, DESCRIBE_TRANSACTIONS = 1, 65
OFFSETS_TOPIC = "__consumer_offsets"


class Tv2Producer(TxnClient):
    """A transaction-version-2 producer speaking raw frames."""

    async def produce_to(self, topic: str, partitions: list[int], value: bytes,
                         version: int = 12, epoch: int | None = None) -> dict[int, int]:
        """One record to each partition in one request; the error per partition."""
        epoch = self.epoch if epoch is None else epoch
        data = [{"index": p, "records": batch([value], self.producer_id, epoch,
                                               self.sequence.get((topic, p), 0))}
                for p in partitions]
        answer = await self.client.request(PRODUCE, version, {
            "transactional_id": self.transactional_id, "acks": -1, "timeout_ms": 5_000,
            "topic_data": [{"name": topic, "partition_data": data}]})
        errors = {r.index: r.error_code for r in answer.responses[0].partition_responses}
        for p, code in errors.items():
            if code == 0:
                self.sequence[(topic, p)] = self.sequence.get((topic, p), 0) + 1
        return errors

    async def commit_offsets_v5(self, group: str, topic: str,
                                offsets: dict[int, int]) -> set[int]:
        answer = await self.client.request(TXN_OFFSET_COMMIT, 5, {
            "transactional_id": self.transactional_id, "group_id": group,
            "producer_id": self.producer_id, "producer_epoch": self.epoch,
            "generation_id": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": topic, "partitions": [
                {"partition_index": p, "committed_offset": o, "committed_leader_epoch": -1,
                 "committed_metadata": ""} for p, o in offsets.items()]}]})
        return {p.error_code for t in answer.topics for p in t.partitions}

    async def end_v5(self, commit: bool, epoch: int | None = None) -> tuple[int, int, int]:
        """EndTxn v5; on success the producer continues with the answered id and epoch."""
        answer = await self.client.request(END_TXN, 5, {
            "transactional_id": self.transactional_id, "producer_id": self.producer_id,
            "producer_epoch": self.epoch if epoch is None else epoch, "committed": commit})
        if answer.error_code == 0:
            if (answer.producer_id, answer.producer_epoch) != (self.producer_id, self.epoch):
                self.sequence.clear()
            self.producer_id, self.epoch = answer.producer_id, answer.producer_epoch
        return answer.error_code, answer.producer_id, answer.producer_epoch


async def read_committed(client: RawClient, topic: str, partition: int) -> Any:
    answer = await client.request(FETCH, 11, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20,
        "isolation_level": 1, "session_id": 0, "session_epoch": -1,
        "topics": [{"topic": topic, "partitions": [{
            "partition": partition, "current_leader_epoch": -1, "fetch_offset": 0,
            "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}],
        "forgotten_topics_data": [], "rack_id": ""})
    (p,) = answer.responses[0].partitions
    return p


async def stable_offset(client: RawClient, group: str, topic: str, partition: int) -> Any:
    answer = await client.request(OFFSET_FETCH, 7, {
        "group_id": group, "topics": [{"name": topic, "partition_indexes": [partition]}],
        "require_stable": True})
    (p,) = answer.topics[0].partitions
    return p.error_code, p.committed_offset


async def described(client: RawClient, transactional_id: str) -> Any:
    answer = await client.request(DESCRIBE_TRANSACTIONS, 0,
                                  {"transactional_ids": [transactional_id]})
    (state,) = answer.transaction_states
    return state


@pytest.fixture
async def producer(server: RunningServer, connect: Any) -> Tv2Producer:
    txn = Tv2Producer(await connect(server.port), "tv2")
    assert (await txn.init()).error_code == 0
    return txn


async def _api_versions(client: RawClient, version: int) -> Any:
    body = {"client_software_name": "raw", "client_software_version": "1"} if version >= 3 else {}
    return await client.request(API_VERSIONS, version, body)


async def test_api_versions_advertises_the_transaction_version_feature(
    server: RunningServer, start_server: Any, connect: Any
) -> None:
    client = await connect(server.port)
    answer = await _api_versions(client, 4)
    ranges = {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}
    assert (ranges[END_TXN], ranges[TXN_OFFSET_COMMIT], ranges[PRODUCE]) == (
        (0, 5), (0, 5), (0, 13))
    assert [(f.name, f.min_version, f.max_version) for f in answer.supported_features] == [
        ("transaction.version", 0, 2), ("share.version", 0, 1)]
    assert [(f.name, f.min_version_level, f.max_version_level)
            for f in answer.finalized_features] == [("transaction.version", 2, 2),
                                                    ("share.version", 1, 1)]
    assert answer.finalized_features_epoch == 0
    # Below v4 a supported minimum of 0 is not sent (KAFKA-17492); the level still is.
    old = await _api_versions(client, 3)
    assert list(old.supported_features) == []
    assert [f.max_version_level for f in old.finalized_features] == [2, 1]
    for level, finalized in (("1", [1]), ("0", [])):
        other = await start_server({"transaction.version": level})
        answer = await _api_versions(await connect(other.port), 4)
        assert [f.max_version_level for f in answer.finalized_features
                if f.name == "transaction.version"] == finalized


def test_transaction_version_must_be_a_known_level() -> None:
    for bad in ("3", "-1", "two"):
        with pytest.raises(ConfigError, match=r"transaction\.version"):
            build_options({"transaction.version": bad}, host="127.0.0.1", port=0,
                          data_dir=None)


async def test_a_tv2_transaction_adds_its_partitions_and_bumps_the_epoch(
    server: RunningServer, connect: Any, producer: Tv2Producer
) -> None:
    admin = await connect(server.port)
    pid, epoch = producer.producer_id, producer.epoch
    # No AddPartitionsToTxn: Produce v12 adds the partitions, TxnOffsetCommit v5 the group's.
    assert await producer.produce_to("t", [0, 1], b"one") == {0: 0, 1: 0}
    assert await producer.commit_offsets_v5("eos", "t", {0: 5}) == {0}
    ongoing = await described(admin, "tv2")
    partitions = sorted((t.topic, p) for t in ongoing.topics for p in t.partitions)
    assert ongoing.transaction_state == "Ongoing"
    assert [tp for tp in partitions if tp[0] == "t"] == [("t", 0), ("t", 1)]
    assert [tp[0] for tp in partitions if tp[0] != "t"] == [OFFSETS_TOPIC]
    assert (await read_committed(admin, "t", 0)).last_stable_offset == 0
    assert await stable_offset(admin, "eos", "t", 0) == (ErrorCode.UNSTABLE_OFFSET_COMMIT, -1)

    assert await producer.end_v5(True) == (0, pid, epoch + 1)
    visible = await read_committed(admin, "t", 1)
    assert (visible.high_watermark, visible.last_stable_offset) == (2, 2)
    assert await stable_offset(admin, "eos", "t", 0) == (0, 5)
    # A retry of the end with the old epoch is answered again with the new one.
    assert await producer.end_v5(True, epoch=epoch) == (0, pid, epoch + 1)
    assert (await described(admin, "tv2")).producer_epoch == epoch + 1

    # The next transaction runs at the bumped epoch; the old epoch is fenced by the marker.
    assert await producer.produce_to("t", [1], b"stale", epoch=epoch) == {
        1: ErrorCode.INVALID_PRODUCER_EPOCH}
    assert await producer.produce_to("t", [1], b"two") == {1: 0}
    assert await producer.end_v5(False) == (0, pid, epoch + 2)
    aborted = await read_committed(admin, "t", 1)
    assert (aborted.high_watermark, aborted.last_stable_offset) == (4, 4)
    assert [a.first_offset for a in aborted.aborted_transactions] == [2]


async def test_produce_below_v12_still_needs_add_partitions(producer: Tv2Producer) -> None:
    # Produce v11 is a TV0/TV1 client's: the partition must have been added first.
    assert await producer.produce_to("t", [2], b"x", version=11) == {
        2: ErrorCode.INVALID_TXN_STATE}
    assert await producer.produce_to("t", [2], b"x", version=12) == {2: 0}


async def test_an_implicit_add_for_a_fenced_producer_is_invalid_producer_epoch(
    server: RunningServer, connect: Any, producer: Tv2Producer
) -> None:
    zombie_epoch = producer.epoch
    successor = Tv2Producer(await connect(server.port), "tv2")
    assert (await successor.init()).error_code == 0 and successor.epoch == zombie_epoch + 1
    # The coordinator's PRODUCER_FENCED, as Kafka's broker answers a Produce.
    assert await producer.produce_to("t", [3], b"zombie") == {3: ErrorCode.INVALID_PRODUCER_EPOCH}
    assert await producer.commit_offsets_v5("eos", "t", {3: 1}) == {
        ErrorCode.INVALID_PRODUCER_EPOCH}
    assert await successor.produce_to("t", [3], b"live") == {3: 0}
    assert (await successor.end_v5(True))[0] == 0


async def test_batches_of_two_producer_ids_are_invalid_producer_id_mapping(
    producer: Tv2Producer,
) -> None:
    # Kafka refuses a transactional Produce whose batches carry more than one producer id.
    mixed = [{"index": p, "records": batch([b"x"], producer.producer_id + p, producer.epoch, 0)}
             for p in (4, 5)]
    answer = await producer.client.request(PRODUCE, 12, {
        "transactional_id": producer.transactional_id, "acks": -1, "timeout_ms": 5_000,
        "topic_data": [{"name": "t", "partition_data": mixed}]})
    assert {r.index: r.error_code for r in answer.responses[0].partition_responses} == {
        4: ErrorCode.INVALID_PRODUCER_ID_MAPPING, 5: ErrorCode.INVALID_PRODUCER_ID_MAPPING}
    assert await producer.produce_to("t", [4], b"fine") == {4: 0}

