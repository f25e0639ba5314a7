"""A raw-frame Kafka client over Trio for the server tests (and the benchmark)."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence
from typing import Any

import trio

from coordinator.server.sink import MemorySink
from storage.config_records import ConfigRecordKey
from storage.records import Record
from wire import NEED_DATA, FrameReader, decode_response, encode_request

API_VERSIONS, HEARTBEAT, JOIN_GROUP, SYNC_GROUP = 18, 12, 11, 14
OFFSET_COMMIT, OFFSET_FETCH, DESCRIBE_GROUPS, LIST_GROUPS, LEAVE_GROUP = 8, 9, 15, 16, 13
PRODUCE, INIT_PRODUCER_ID, ADD_PARTITIONS, ADD_OFFSETS = 0, 22, 24, 25
END_TXN, TXN_OFFSET_COMMIT = 26, 28


class RawClient:
    """One TCP connection speaking size-prefixed frames."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.reader = FrameReader(1 << 30)
        self._corr = itertools.count(1)

    @classmethod
    async def connect(cls, port: int, host: str = "127.0.0.1") -> RawClient:
        return cls(await trio.open_tcp_stream(host, port))

    async def aclose(self) -> None:
        await self.stream.aclose()

    def frame(
        self, api_key: int, version: int, body: Any, corr: int | None = None
    ) -> tuple[int, bytes]:
        """(correlation id, encoded request)."""
        corr = next(self._corr) if corr is None else corr
        return corr, encode_request(api_key, version, corr, "raw-client", body)

    async def send(self, api_key: int, version: int, body: Any, corr: int | None = None) -> int:
        corr, data = self.frame(api_key, version, body, corr)
        await self.stream.send_all(data)
        return corr

    async def recv_frame(self) -> bytes | None:
        """The next response payload, or None when the server closed the connection."""
        while True:
            payload = self.reader.next_frame()
            if payload is not NEED_DATA:
                assert isinstance(payload, bytes)
                return payload
            try:
                data = await self.stream.receive_some(1 << 16)
            except trio.BrokenResourceError:
                return None
            if not data:
                return None
            self.reader.receive_data(data)

    async def recv(self, api_key: int, version: int) -> tuple[int, Any]:
        payload = await self.recv_frame()
        assert payload is not None, "connection closed by the server"
        return decode_response(api_key, version, payload)

    async def request(self, api_key: int, version: int, body: Any) -> Any:
        corr = await self.send(api_key, version, body)
        got, response = await self.recv(api_key, version)
        assert got == corr
        return response

    async def closed_by_server(self) -> bool:
        """True once the server closes (EOF/reset); False if it answers something instead."""
        return await self.recv_frame() is None


def join_body(
    group: str,
    member_id: str = "",
    *,
    session_timeout_ms: int = 10_000,
    rebalance_timeout_ms: int = 10_000,
    instance_id: str | None = None,
) -> dict[str, Any]:
    return {
        "group_id": group,
        "session_timeout_ms": session_timeout_ms,
        "rebalance_timeout_ms": rebalance_timeout_ms,
        "member_id": member_id,
        "group_instance_id": instance_id,
        "protocol_type": "consumer",
        "protocols": [{"name": "range", "metadata": b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"}],
        "reason": None,
    }


async def join(client: RawClient, group: str, **kwargs: Any) -> Any:
    """JoinGroup v7 including the MEMBER_ID_REQUIRED round trip; the final response."""
    first = await client.request(JOIN_GROUP, 7, join_body(group, **kwargs))
    if first.error_code != 79:
        return first
    return await client.request(JOIN_GROUP, 7, join_body(group, first.member_id, **kwargs))


async def sync(client: RawClient, group: str, joined: Any, assignment: bytes = b"") -> Any:
    """SyncGroup v5 for a JoinGroup response (the leader assigns ``assignment`` to all)."""
    assignments = []
    if joined.leader == joined.member_id:
        assignments = [{"member_id": m.member_id, "assignment": assignment} for m in joined.members]
    return await client.request(
        SYNC_GROUP,
        5,
        {
            "group_id": group,
            "generation_id": joined.generation_id,
            "member_id": joined.member_id,
            "group_instance_id": None,
            "protocol_type": "consumer",
            "protocol_name": joined.protocol_name,
            "assignments": assignments,
        },
    )


def heartbeat_body(group: str, generation: int, member_id: str) -> dict[str, Any]:
    return {
        "group_id": group,
        "generation_id": generation,
        "member_id": member_id,
        "group_instance_id": None,
    }


def batch(values: list[bytes], producer_id: int, epoch: int, sequence: int,
          transactional: bool = True) -> bytes:
    """A record batch of ``values`` (kafka-python's builder, magic 2, uncompressed)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka.record.default_records import DefaultRecordBatchBuilder
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=transactional, producer_id=producer_id,
        producer_epoch=epoch, base_sequence=sequence, batch_size=1 << 20)
    for i, value in enumerate(values):
        builder.append(i, timestamp=1_000 + i, key=None, value=value, headers=[])
    return bytes(builder.build())


class TxnClient:
    """A transactional producer speaking raw frames."""

    def __init__(self, client: RawClient, transactional_id: str) -> None:
        self.client = client
        self.transactional_id = transactional_id
        self.producer_id = -1
        self.epoch = -1
        self.sequence: dict[tuple[str, int], int] = {}

    async def init(self, timeout_ms: int = 60_000) -> Any:
        answer = await self.client.request(INIT_PRODUCER_ID, 4, {
            "transactional_id": self.transactional_id, "transaction_timeout_ms": timeout_ms,
            "producer_id": -1, "producer_epoch": -1})
        if answer.error_code == 0:
            self.producer_id, self.epoch = answer.producer_id, answer.producer_epoch
            self.sequence.clear()
        return answer

    async def add(self, topic: str, *partitions: int, version: int = 3) -> dict[int, int]:
        answer = await self.client.request(ADD_PARTITIONS, version, {
            "v3_and_below_transactional_id": self.transactional_id,
            "v3_and_below_producer_id": self.producer_id,
            "v3_and_below_producer_epoch": self.epoch,
            "v3_and_below_topics": [{"name": topic, "partitions": list(partitions)}]})
        (result,) = answer.results_by_topic_v3_and_below
        return {r.partition_index: r.partition_error_code for r in result.results_by_partition}

    async def produce(self, topic: str, partition: int, *values: bytes) -> Any:
        sequence = self.sequence.get((topic, partition), 0)
        records = batch(list(values), self.producer_id, self.epoch, sequence)
        answer = await self.client.request(PRODUCE, 9, {
            "transactional_id": self.transactional_id, "acks": -1, "timeout_ms": 5_000,
            "topic_data": [{"name": topic, "partition_data": [
                {"index": partition, "records": records}]}]})
        (p,) = answer.responses[0].partition_responses
        if p.error_code == 0:
            self.sequence[(topic, partition)] = sequence + len(values)
        return p

    async def add_offsets(self, group: str) -> int:
        answer = await self.client.request(ADD_OFFSETS, 0, {
            "transactional_id": self.transactional_id, "producer_id": self.producer_id,
            "producer_epoch": self.epoch, "group_id": group})
        code: int = answer.error_code
        return code

    async def commit_offsets(self, group: str, topic: str, offsets: dict[int, int],
                             generation: int = -1) -> dict[int, int]:
        answer = await self.client.request(TXN_OFFSET_COMMIT, 3, {
            "transactional_id": self.transactional_id, "group_id": group,
            "producer_id": self.producer_id, "producer_epoch": self.epoch,
            "generation_id": generation, "member_id": "", "group_instance_id": None,
            "topics": [{"name": topic, "partitions": [
                {"partition_index": p, "committed_offset": o, "committed_leader_epoch": -1,
                 "committed_metadata": ""} for p, o in offsets.items()]}]})
        (t,) = answer.topics
        return {p.partition_index: p.error_code for p in t.partitions}

    async def end(self, commit: bool, version: int = 1) -> int:
        answer = await self.client.request(END_TXN, version, {
            "transactional_id": self.transactional_id, "producer_id": self.producer_id,
            "producer_epoch": self.epoch, "committed": commit})
        code: int = answer.error_code
        return code


class CountingSink(MemorySink):
    """A memory sink whose appends are never synchronous, take ``delay_s`` (a disk's fsync)
    and are counted (records per append; not the config shard's activation append, the
    cluster-level min.insync.replicas a fresh server writes)."""

    def __init__(self, delay_s: float = 0.005) -> None:
        super().__init__()
        self.delay_s = delay_s
        self.appends: list[int] = []

    def append_nowait(self, records: Sequence[Record]) -> bool:
        return False

    async def append(self, records: Sequence[Record]) -> None:
        if not all(isinstance(r.key, ConfigRecordKey) for r in records):
            self.appends.append(len(records))
        await trio.sleep(self.delay_s)
        await super().append(records)


async def jump(seconds: float) -> None:
    """Move this trio run's MockClock by ``seconds`` and let every task it wakes run."""
    import trio.testing

    clock = trio.lowlevel.current_clock()
    assert isinstance(clock, trio.testing.MockClock)
    clock.jump(seconds)
    await trio.testing.wait_all_tasks_blocked()


async def settle(*runtimes: Any) -> None:
    """Wait until no append of ``runtimes`` (CoordinatorRuntimes) is queued or being
    written: a clock move can fire timers whose records a worker thread writes, and
    ``wait_all_tasks_blocked`` does not wait for threads. Bounded: 10 s of real time."""
    import time

    import trio.testing

    deadline = time.monotonic() + 10
    await trio.testing.wait_all_tasks_blocked()
    while any(runtime._queue or runtime._writing for runtime in runtimes):
        assert time.monotonic() < deadline, "an append did not finish within 10 s"
        await trio.lowlevel.checkpoint()
        await trio.testing.wait_all_tasks_blocked()


def create_topics(store: Any, topics: Sequence[tuple[str, int]]) -> None:
    """Create ``topics`` (name, partitions) in a server's topic store with the ids 1, 2, ...
    in order, so two servers' records and answers carry the same topic ids."""
    import uuid

    ids = iter(uuid.UUID(int=n) for n in range(1, len(topics) + 1))
    store._new_topic_id = lambda: next(ids)
    for name, partitions in topics:
        store.create_topic(name, partitions)
