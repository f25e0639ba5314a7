"""Helpers for the broker tests: a fake server state, record batches, and a round trip that
puts every request and response through the real codec (and kio, where it has the schema)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import crc32c
import kio.index
import kio.serial
import trio
from construct import Container

import wire
from coordinator.broker.topics import TopicStore
from coordinator.server.apis import SERVED_API_KEYS, load_routes
from coordinator.server.cluster import Cluster
from coordinator.server.context import BrokerIdentity, Handler, RequestContext

with warnings.catch_warnings():
    # kafka-python 3.0.12 reads its schemas with a deprecated importlib.resources call;
    # pytest turns warnings into errors.
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.record import MemoryRecords
    from kafka.record.default_records import DefaultRecordBatchBuilder

IDENTITY = BrokerIdentity(node_id=0, host="127.0.0.1", port=19092, cluster_id="kcoord-test")


def _served_versions(api_key: int) -> range:
    spec = wire.lookup(api_key)
    assert spec is not None
    return range(spec.min_version, spec.max_version + 1)


# The broker surface's handlers, from the server's routes: the route modules' own
# ``handle`` (the group and transaction APIs run in the coordinators instead).
BROKER_HANDLERS: dict[int, Handler] = {
    key: route.handler
    for key, route in load_routes().items()
    if getattr(route.handler, "__name__", "") == "handle"
}

# Versions each broker API serves (the wire registry's ranges).
VERSIONS = {key: _served_versions(key) for key in BROKER_HANDLERS}

_NOT_FLEXIBLE_HEADER = {18}


def _loaded_event() -> trio.Event:
    loaded = trio.Event()
    loaded.set()
    return loaded


@dataclass
class FakeState:
    """The parts of ServerState the broker handlers use."""

    identity: BrokerIdentity = IDENTITY
    config: dict[str, str] = field(default_factory=dict)
    topics: TopicStore = field(default_factory=TopicStore)
    groups: Any = None
    served_api_keys: frozenset[int] = SERVED_API_KEYS
    #: Open connections by id (the SASL routes read the connection's state).
    connections: dict[int, Any] = field(default_factory=dict)
    cluster: Cluster | None = None
    bind_host: str = IDENTITY.host
    advertised_given: bool = False
    data_dir: str | None = None
    loaded: trio.Event = field(default_factory=_loaded_event)


def make_batch(
    values: list[bytes],
    timestamps: list[int] | None = None,
    *,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
    compression: int = 0,
) -> bytes:
    """One v2 record batch built by kafka-python."""
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=compression,
        is_transactional=transactional,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        batch_size=1 << 24,
    )
    for i, value in enumerate(values):
        ts = timestamps[i] if timestamps is not None else 1_000 + i
        builder.append(i, timestamp=ts, key=None, value=value, headers=[])
    return bytes(builder.build())


def gzip_batch(values: list[bytes], timestamps: list[int]) -> bytes:
    """A gzip-compressed batch (kafka-python's gzip codec)."""
    return make_batch(values, timestamps, compression=1)


def with_body(batch: bytes, body: bytes, codec: int) -> bytes:
    """The batch's header (length, compression bits and CRC fixed) over ``body``: a batch
    whose records are ``body``, as ``codec`` would carry them."""
    data = bytearray(batch[:61]) + body
    data[8:12] = (len(data) - 12).to_bytes(4, "big")
    attributes = int.from_bytes(data[21:23], "big")
    data[21:23] = ((attributes & ~0x07) | codec).to_bytes(2, "big")
    data[17:21] = crc32c.crc32c(bytes(data[21:])).to_bytes(4, "big")
    return bytes(data)


def compress_records(records: bytes, codec: int) -> bytes:
    """``records`` compressed as Kafka's clients do (snappy in snappy-java's xerial frames)."""
    import cramjam

    if codec == 1:
        return bytes(cramjam.gzip.compress(records))
    if codec == 2:
        block = bytes(cramjam.snappy.compress_raw(records))
        return (b"\x82SNAPPY\x00" + (1).to_bytes(4, "big") + (1).to_bytes(4, "big")
                + len(block).to_bytes(4, "big") + block)
    if codec == 3:
        return bytes(cramjam.lz4.compress(records))
    assert codec == 4
    return bytes(cramjam.zstd.compress(records))


def compressed_batch(values: list[bytes], timestamps: list[int], codec: int) -> bytes:
    """A batch of ``values`` whose records are compressed with ``codec`` (1-4)."""
    plain = make_batch(values, timestamps)
    return with_body(plain, compress_records(plain[61:], codec), codec)


def with_codec_bits(batch: bytes, codec: int) -> bytes:
    """The batch with its compression bits set to ``codec`` and its CRC recomputed (the
    body stays as it is: only for tests of code that must not open the records)."""
    data = bytearray(batch)
    attributes = int.from_bytes(data[21:23], "big")
    data[21:23] = ((attributes & ~0x07) | codec).to_bytes(2, "big")
    data[17:21] = crc32c.crc32c(bytes(data[21:])).to_bytes(4, "big")
    return bytes(data)


def read_records(data: bytes) -> list[tuple[int, int, bytes | None]]:
    """(offset, timestamp, value) of every record in a blob, read by kafka-python."""
    out = []
    records = MemoryRecords(data)
    while True:
        batch = records.next_batch()
        if batch is None:
            break
        for record in batch:
            out.append((record.offset, record.timestamp, record.value))
    return out


def _kio_check(api_key: int, version: int, payload: bytes) -> None:
    try:
        schema = kio.index.load_response_schema(api_key, version)
    except Exception:
        return  # a version kio does not know (pre-Kafka-4 ones)
    header = 4 if api_key in _NOT_FLEXIBLE_HEADER or not schema.__flexible__ else 5
    _, size = kio.serial.entity_reader(schema)(payload, header)
    assert header + size == len(payload), f"kio read {size} of {len(payload) - header} bytes"


async def call(
    state: FakeState, api_key: int, version: int, body: dict[str, Any], correlation_id: int = 7
) -> Container | None:
    """Encode the request, decode it as the server does, run the handler, then encode the
    answer and decode it again (checked by kio too). The decoded answer, or None."""
    frame = wire.encode_request(api_key, version, correlation_id, "test-client", body)
    request = wire.decode_request(frame[4:])
    ctx = RequestContext(
        state=state,
        connection_id=1,
        client_host="/127.0.0.1",
        client_id=request.client_id,
        api_version=version,
        correlation_id=correlation_id,
    )
    answer = await BROKER_HANDLERS[api_key](ctx, request)
    if answer is None:
        return None
    raw = wire.encode_response(api_key, version, correlation_id, answer)
    got_correlation, decoded = wire.decode_response(api_key, version, raw[4:])
    assert got_correlation == correlation_id
    _kio_check(api_key, version, raw[4:])
    return decoded
