"""Raw ShareFetch/ShareAcknowledge/Produce frames for the share server tests, over Trio (an
in-process server) or a blocking socket (a ``kcoord serve`` process)."""

from __future__ import annotations

import itertools
import socket
import uuid
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import trio

from wire import NEED_DATA, FrameReader, decode_response, encode_request

SHARE_FETCH, SHARE_ACKNOWLEDGE, PRODUCE, METADATA = 78, 79, 0, 3
SHARE_VERSION = 1
ACCEPT, RELEASE, REJECT = 1, 2, 3

Acks = Mapping[int, Sequence[tuple[int, int, int]]]
"""Acknowledgements by partition: (first offset, last offset, acknowledge type)."""

__all__ = [
    "ACCEPT",
    "REJECT",
    "RELEASE",
    "AsyncClient",
    "BlockingClient",
    "ack_body",
    "acquired",
    "fetch_body",
    "produce_body",
    "topic_id_of",
    "values_by_offset",
]


def _partitions(partitions: Sequence[int], acks: Acks | None) -> list[dict[str, Any]]:
    acks = acks or {}
    return [
        {"partition_index": p, "acknowledgement_batches": [
            {"first_offset": first, "last_offset": last, "acknowledge_types": [kind]}
            for first, last, kind in acks.get(p, ())]}
        for p in sorted(set(partitions) | set(acks))
    ]


def fetch_body(
    group: str, member: str, epoch: int, topic_id: uuid.UUID, partitions: Sequence[int] = (0,),
    *, acks: Acks | None = None, max_wait_ms: int = 0, min_bytes: int = 1,
    max_records: int = 500, batch_size: int = 500, forgotten: Sequence[int] = (),
    max_bytes: int = 1 << 20,
) -> dict[str, Any]:
    """A ShareFetch v1 body."""
    return {
        "group_id": group, "member_id": member, "share_session_epoch": epoch,
        "max_wait_ms": max_wait_ms, "min_bytes": min_bytes, "max_bytes": max_bytes,
        "max_records": max_records, "batch_size": batch_size,
        "topics": [{"topic_id": topic_id, "partitions": _partitions(partitions, acks)}],
        "forgotten_topics_data": (
            [{"topic_id": topic_id, "partitions": list(forgotten)}] if forgotten else []),
    }


def ack_body(
    group: str, member: str, epoch: int, topic_id: uuid.UUID, acks: Acks
) -> dict[str, Any]:
    """A ShareAcknowledge v1 body."""
    return {"group_id": group, "member_id": member, "share_session_epoch": epoch,
            "topics": [{"topic_id": topic_id, "partitions": _partitions((), acks)}]}


def produce_body(topic: str, partition: int, values: Sequence[bytes]) -> dict[str, Any]:
    """A Produce v9 body (acks=-1) of one uncompressed batch."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka.record.default_records import DefaultRecordBatchBuilder
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=False, producer_id=-1,
        producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for i, value in enumerate(values):
        builder.append(i, timestamp=1_000 + i, key=None, value=value, headers=[])
    return {"transactional_id": None, "acks": -1, "timeout_ms": 5_000,
            "topic_data": [{"name": topic, "partition_data": [
                {"index": partition, "records": bytes(builder.build())}]}]}


def _partition(response: Any, partition: int) -> Any:
    for topic in response.responses:
        for p in topic.partitions:
            if p.partition_index == partition:
                return p
    return None


def acquired(response: Any, partition: int = 0) -> list[tuple[int, int, int]]:
    """(first, last, delivery count) of each AcquiredRecords range of ``partition``."""
    p = _partition(response, partition)
    if p is None:
        return []
    assert p.error_code == 0, p
    return [(r.first_offset, r.last_offset, r.delivery_count) for r in p.acquired_records]


def values_by_offset(response: Any, partition: int = 0) -> dict[int, bytes]:
    """The values of the returned records that lie in the acquired ranges."""
    p = _partition(response, partition)
    if p is None or not p.records:
        return {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from kafka.record.memory_records import MemoryRecords
    ranges = [(r.first_offset, r.last_offset) for r in p.acquired_records]
    found = {}
    records = MemoryRecords(bytes(p.records))
    while (batch := records.next_batch()) is not None:
        for record in batch:
            if any(first <= record.offset <= last for first, last in ranges):
                found[record.offset] = bytes(record.value)
    return found


def topic_id_of(client: BlockingClient, name: str = "t") -> uuid.UUID:
    """Topic ``name``'s id, by Metadata v12."""
    answer = client.request(METADATA, 12, {
        "topics": [{"topic_id": uuid.UUID(int=0), "name": name}],
        "allow_auto_topic_creation": False, "include_topic_authorized_operations": False})
    (topic,) = answer.topics
    assert topic.error_code == 0
    return uuid.UUID(str(topic.topic_id))


class AsyncClient:
    """One Trio TCP connection speaking size-prefixed frames."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.reader = FrameReader(1 << 30)
        self._corr = itertools.count(1)

    @classmethod
    async def connect(cls, port: int) -> AsyncClient:
        return cls(await trio.open_tcp_stream("127.0.0.1", port))

    async def send(self, api_key: int, version: int, body: Any) -> int:
        corr = next(self._corr)
        await self.stream.send_all(encode_request(api_key, version, corr, "share-test", body))
        return corr

    async def recv(self, api_key: int, version: int) -> Any:
        while (payload := self.reader.next_frame()) is NEED_DATA:
            data = await self.stream.receive_some(1 << 16)
            assert data, "closed by the server"
            self.reader.receive_data(data)
        assert isinstance(payload, bytes)
        return decode_response(api_key, version, payload)[1]

    async def request(self, api_key: int, version: int, body: Any) -> Any:
        await self.send(api_key, version, body)
        return await self.recv(api_key, version)

    async def share_fetch(self, *args: Any, **kwargs: Any) -> Any:
        """A ShareFetch v1 answer; the arguments are :func:`fetch_body`'s."""
        return await self.request(SHARE_FETCH, SHARE_VERSION, fetch_body(*args, **kwargs))

    async def share_acknowledge(self, *args: Any) -> Any:
        """A ShareAcknowledge v1 answer; the arguments are :func:`ack_body`'s."""
        return await self.request(SHARE_ACKNOWLEDGE, SHARE_VERSION, ack_body(*args))

    async def produce(self, topic: str, partition: int, values: Sequence[bytes]) -> Any:
        """A Produce v9 answer (:func:`produce_body`)."""
        return await self.request(PRODUCE, 9, produce_body(topic, partition, values))


class BlockingClient:
    """One blocking TCP connection (for a server in another process)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.reader = FrameReader(1 << 30)
        self._corr = itertools.count(1)

    def close(self) -> None:
        self.sock.close()

    def request(self, api_key: int, version: int, body: Any) -> Any:
        corr = next(self._corr)
        self.sock.sendall(encode_request(api_key, version, corr, "share-test", body))
        while (payload := self.reader.next_frame()) is NEED_DATA:
            data = self.sock.recv(1 << 16)
            assert data, "closed by the server"
            self.reader.receive_data(data)
        assert isinstance(payload, bytes)
        got, response = decode_response(api_key, version, payload)
        assert got == corr
        return response

    def share_fetch(self, *args: Any, **kwargs: Any) -> Any:
        """A ShareFetch v1 answer; the arguments are :func:`fetch_body`'s."""
        return self.request(SHARE_FETCH, SHARE_VERSION, fetch_body(*args, **kwargs))

    def share_acknowledge(self, *args: Any) -> Any:
        """A ShareAcknowledge v1 answer; the arguments are :func:`ack_body`'s."""
        return self.request(SHARE_ACKNOWLEDGE, SHARE_VERSION, ack_body(*args))

    def produce(self, topic: str, partition: int, values: Sequence[bytes]) -> Any:
        """A Produce v9 answer (:func:`produce_body`)."""
        return self.request(PRODUCE, 9, produce_body(topic, partition, values))
