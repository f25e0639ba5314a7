"""TopicStore and batch validation, without a server: offsets, reads, lookups, producers."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import trio
import trio.testing
from broker_support import compressed_batch, make_batch, read_records, with_codec_bits

from coordinator.broker.batches import record_timestamps, validate_produced_batch
from coordinator.broker.config import BROKER_CONFIG_DEFAULTS, validate_broker_config
from coordinator.broker.errors import BrokerError
from coordinator.broker.partition_log import PartitionLog
from coordinator.broker.topics import FetchTarget, TopicStore, validate_topic_name
from wire import ErrorCode
from wire.records import parse_batches


def _read(log: PartitionLog, *args: Any) -> list[bytes]:
    """``PartitionLog.read`` run to its end (a memory-only log never waits)."""
    return trio.run(log.read, *args)


def produce(store: TopicStore, topic: str, partition: int, batch: bytes) -> int:
    header = validate_produced_batch(batch, 9, 1 << 20)
    return store.append(topic, partition, batch, header)


# -- offsets -----------------------------------------------------------------------------


def test_offsets_are_assigned_across_batches(store: TopicStore) -> None:
    store.create_topic("t", 2)
    assert produce(store, "t", 0, make_batch([b"a", b"b", b"c"])) == 0
    assert produce(store, "t", 0, make_batch([b"d"])) == 3
    assert produce(store, "t", 0, make_batch([b"e", b"f"])) == 4
    assert produce(store, "t", 1, make_batch([b"x"])) == 0
    log = store.partition("t", 0)
    assert log is not None
    assert (log.log_start_offset, log.high_watermark, log.last_stable_offset) == (0, 6, 6)
    assert [(b.base_offset, b.last_offset) for b in log.batches] == [(0, 2), (3, 3), (4, 5)]


def test_base_offset_rewrite_keeps_the_crc_valid(store: TopicStore) -> None:
    store.create_topic("t", 1)
    produce(store, "t", 0, make_batch([b"a", b"b"]))
    produce(store, "t", 0, make_batch([b"c"], [5_000]))
    log = store.partition("t", 0)
    assert log is not None
    blob = b"".join(b.data for b in log.batches)
    headers = parse_batches(blob, verify_crc=True)
    assert [h.base_offset for h in headers] == [0, 2]
    assert all(h.partition_leader_epoch == 0 for h in headers)  # stamped: Kafka's first epoch
    assert read_records(blob) == [(0, 1_000, b"a"), (1, 1_001, b"b"), (2, 5_000, b"c")]


# -- reads -------------------------------------------------------------------------------


def _three_batches(store: TopicStore) -> list[int]:
    store.create_topic("t", 1)
    sizes = []
    for values in ([b"a" * 100, b"b" * 100], [b"c" * 100], [b"d" * 100, b"e" * 100, b"f"]):
        batch = make_batch(values)
        produce(store, "t", 0, batch)
        sizes.append(len(batch))
    return sizes


def test_read_starts_at_the_batch_holding_the_offset(store: TopicStore) -> None:
    _three_batches(store)
    log = store.partition("t", 0)
    assert log is not None
    got = _read(log, 1, 1 << 20, True, log.high_watermark)
    assert [o for o, _, _ in read_records(b"".join(got))] == [0, 1, 2, 3, 4, 5]
    got = _read(log, 3, 1 << 20, True, log.high_watermark)
    assert [o for o, _, _ in read_records(b"".join(got))] == [3, 4, 5]
    assert _read(log, 6, 1 << 20, True, log.high_watermark) == []


def test_read_honours_max_bytes_with_whole_batches(store: TopicStore) -> None:
    sizes = _three_batches(store)
    log = store.partition("t", 0)
    assert log is not None
    assert len(_read(log, 0, sizes[0] + sizes[1], True, 99)) == 2
    assert len(_read(log, 0, sizes[0] + sizes[1] - 1, True, 99)) == 1
    assert len(_read(log, 0, sum(sizes), False, 99)) == 3


def test_read_returns_at_least_one_batch_only_when_asked(store: TopicStore) -> None:
    sizes = _three_batches(store)
    log = store.partition("t", 0)
    assert log is not None
    first = _read(log, 0, 10, True, 99)
    assert len(first) == 1 and len(first[0]) == sizes[0]
    assert _read(log, 0, 0, True, 99) == first
    assert _read(log, 0, 10, False, 99) == []


def test_read_stops_at_max_offset(store: TopicStore) -> None:
    _three_batches(store)
    log = store.partition("t", 0)
    assert log is not None
    assert len(_read(log, 0, 1 << 20, True, 3)) == 2
    assert _read(log, 3, 1 << 20, True, 3) == []
    assert log.bytes_available(0, 3) == sum(len(b.data) for b in log.batches[:2])


def test_offset_range(store: TopicStore) -> None:
    _three_batches(store)
    log = store.partition("t", 0)
    assert log is not None
    assert log.offset_in_range(0) and log.offset_in_range(6)
    assert not log.offset_in_range(7) and not log.offset_in_range(-1)


# -- list offsets ------------------------------------------------------------------------


def test_offset_for_timestamp_finds_the_first_record_at_or_after(store: TopicStore) -> None:
    store.create_topic("t", 1)
    produce(store, "t", 0, make_batch([b"a", b"b", b"c"], [100, 300, 200]))
    produce(store, "t", 0, make_batch([b"d", b"e"], [400, 500]))
    log = store.partition("t", 0)
    assert log is not None
    assert trio.run(log.offset_for_timestamp, 0) == (100, 0)
    assert trio.run(log.offset_for_timestamp, 150) == (300, 1)
    assert trio.run(log.offset_for_timestamp, 300) == (300, 1)
    assert trio.run(log.offset_for_timestamp, 301) == (400, 3)
    assert trio.run(log.offset_for_timestamp, 500) == (500, 4)
    assert trio.run(log.offset_for_timestamp, 501) is None


def test_max_timestamp_is_the_earliest_record_holding_it(store: TopicStore) -> None:
    store.create_topic("t", 1)
    log = store.partition("t", 0)
    assert log is not None
    assert trio.run(log.max_timestamp_offset) is None
    produce(store, "t", 0, make_batch([b"a", b"b", b"c"], [100, 900, 900]))
    produce(store, "t", 0, make_batch([b"d"], [500]))
    assert trio.run(log.max_timestamp_offset) == (900, 1)


def test_gzip_batches_are_searched_record_by_record(store: TopicStore) -> None:
    store.create_topic("t", 1)
    batch = make_batch([b"a" * 50, b"b" * 50, b"c" * 50], [10, 20, 30], compression=1)
    assert parse_batches(batch)[0].attributes & 0x07 == 1
    produce(store, "t", 0, batch)
    log = store.partition("t", 0)
    assert log is not None
    assert record_timestamps(log.batches[0].data) == [(0, 10), (1, 20), (2, 30)]
    assert trio.run(log.offset_for_timestamp, 15) == (20, 1)
    assert trio.run(log.max_timestamp_offset) == (30, 2)


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_batches_of_every_codec_are_searched_record_by_record(
    store: TopicStore, codec: int
) -> None:
    store.create_topic("t", 1)
    produce(store, "t", 0, make_batch([b"a"], [5]))
    produce(store, "t", 0, compressed_batch([b"b", b"c", b"d"], [10, 20, 30], codec))
    log = store.partition("t", 0)
    assert log is not None
    assert record_timestamps(log.batches[1].data) == [(1, 10), (2, 20), (3, 30)]
    assert trio.run(log.offset_for_timestamp, 15) == (20, 2)
    assert trio.run(log.max_timestamp_offset) == (30, 3)


def test_unreadable_stored_batches_fall_back_to_batch_bounds(store: TopicStore) -> None:
    """A stored batch whose records cannot be read (written before Produce validated
    compressed records) is answered by its bounds: never past the wanted record."""
    store.create_topic("t", 1)
    produce(store, "t", 0, make_batch([b"a"], [5]))
    garbled = with_codec_bits(make_batch([b"b", b"c", b"d"], [10, 20, 30]), 3)
    store.append("t", 0, garbled, parse_batches(garbled)[0])
    log = store.partition("t", 0)
    assert log is not None
    assert record_timestamps(log.batches[1].data) is None
    # the batch's base offset: never past it
    assert trio.run(log.offset_for_timestamp, 15) == (30, 1)
    assert trio.run(log.max_timestamp_offset) == (30, 3)


# -- topics ------------------------------------------------------------------------------


def test_topics_have_stable_distinct_ids(store: TopicStore) -> None:
    a = store.create_topic("a", 1)
    b = store.ensure_topic("b", 3)
    assert a.topic_id != b.topic_id and uuid.UUID(int=0) not in (a.topic_id, b.topic_id)
    assert store.ensure_topic("b", 7) is b and len(b.partitions) == 3
    assert store.by_id(b.topic_id) is b and store.get("a") is a
    assert store.names() == ["a", "b"] and "a" in store and len(store) == 2
    assert store.has_partition("b", 2) and not store.has_partition("b", 3)
    assert not store.has_partition("c", 0)


def test_topic_ids_come_from_the_factory() -> None:
    ids = iter([uuid.UUID(int=5), uuid.UUID(int=5), uuid.UUID(int=6)])
    store = TopicStore(topic_id_factory=lambda: next(ids))
    assert store.create_topic("a", 1).topic_id == uuid.UUID(int=5)
    assert store.create_topic("b", 1).topic_id != uuid.UUID(int=5)  # a collision is redrawn


@pytest.mark.parametrize(
    ("name", "partitions", "code"),
    [
        ("", 1, ErrorCode.INVALID_TOPIC_EXCEPTION),
        ("..", 1, ErrorCode.INVALID_TOPIC_EXCEPTION),
        ("a b", 1, ErrorCode.INVALID_TOPIC_EXCEPTION),
        ("x" * 250, 1, ErrorCode.INVALID_TOPIC_EXCEPTION),
        ("t", 1, ErrorCode.TOPIC_ALREADY_EXISTS),
        ("my_topic", 1, ErrorCode.INVALID_TOPIC_EXCEPTION),  # collides with "my.topic"
        ("fresh", 0, ErrorCode.INVALID_PARTITIONS),
    ],
)
def test_create_topic_errors(store: TopicStore, name: str, partitions: int, code: int) -> None:
    store.create_topic("t", 1)
    store.create_topic("my.topic", 1)
    with pytest.raises(BrokerError) as info:
        store.create_topic(name, partitions)
    assert info.value.code == code


def test_topic_name_validation_accepts_kafka_names() -> None:
    validate_topic_name("a-b_c.D9")
    validate_topic_name("x" * 249)


def test_delete_topic(store: TopicStore) -> None:
    topic = store.create_topic("t", 1)
    produce(store, "t", 0, make_batch([b"a"]))
    assert store.delete_topic("t") is topic
    assert store.get("t") is None and store.by_id(topic.topic_id) is None
    with pytest.raises(BrokerError) as info:
        store.delete_topic("t")
    assert info.value.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert len(store.create_topic("t", 2).partitions) == 2


def test_append_to_a_missing_partition(store: TopicStore) -> None:
    store.create_topic("t", 1)
    batch = make_batch([b"a"])
    with pytest.raises(BrokerError) as info:
        store.append("t", 1, batch, parse_batches(batch)[0])
    assert info.value.code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_producer_ids_are_fresh(store: TopicStore) -> None:
    assert [store.next_producer_id() for _ in range(3)] == [0, 1, 2]


# -- idempotent producers ----------------------------------------------------------------


def _idem(seq: int, count: int = 2, epoch: int = 0, pid: int = 42) -> bytes:
    return make_batch([b"v"] * count, producer_id=pid, producer_epoch=epoch, base_sequence=seq)


def test_a_retried_batch_gets_its_first_offset_back(store: TopicStore) -> None:
    store.create_topic("t", 1)
    assert produce(store, "t", 0, _idem(0)) == 0
    assert produce(store, "t", 0, _idem(2)) == 2
    assert produce(store, "t", 0, _idem(0)) == 0  # duplicate of the first
    assert produce(store, "t", 0, _idem(2)) == 2
    log = store.partition("t", 0)
    assert log is not None and log.high_watermark == 4


def test_sequence_gaps_and_old_epochs_are_refused(store: TopicStore) -> None:
    store.create_topic("t", 1)
    produce(store, "t", 0, _idem(0, epoch=1))
    with pytest.raises(BrokerError) as info:
        produce(store, "t", 0, _idem(5, epoch=1))
    assert info.value.code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    with pytest.raises(BrokerError) as info:
        produce(store, "t", 0, _idem(2, epoch=0))
    assert info.value.code == ErrorCode.INVALID_PRODUCER_EPOCH
    with pytest.raises(BrokerError) as info:
        produce(store, "t", 0, _idem(3, epoch=2))
    assert info.value.code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert produce(store, "t", 0, _idem(0, epoch=2)) == 2  # a new epoch restarts at 0
    assert produce(store, "t", 0, _idem(7, pid=43)) == 4  # unknown producer: any sequence


def test_sequences_wrap_at_int32_max(store: TopicStore) -> None:
    store.create_topic("t", 1)
    produce(store, "t", 0, _idem(2**31 - 2, count=2))
    assert produce(store, "t", 0, _idem(0)) == 2


# -- batch validation --------------------------------------------------------------------


def _corrupt(batch: bytes) -> bytes:
    data = bytearray(batch)
    data[-1] ^= 0xFF
    return bytes(data)


@pytest.mark.parametrize(
    ("records", "version", "code"),
    [
        (None, 9, ErrorCode.INVALID_RECORD),
        (b"", 9, ErrorCode.INVALID_RECORD),
        (make_batch([b"a"])[:16], 9, ErrorCode.INVALID_RECORD),
        (make_batch([b"a"])[:16] + b"\x01" + make_batch([b"a"])[17:], 9, ErrorCode.INVALID_RECORD),
        (make_batch([b"a"])[:-3], 9, ErrorCode.CORRUPT_MESSAGE),
        (_corrupt(make_batch([b"a"])), 9, ErrorCode.CORRUPT_MESSAGE),
        (make_batch([b"a"]) + make_batch([b"b"]), 9, ErrorCode.INVALID_RECORD),
        (make_batch([b"x" * 2000]), 9, ErrorCode.MESSAGE_TOO_LARGE),
        (with_codec_bits(make_batch([b"a"]), 4), 6, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE),
        (with_codec_bits(make_batch([b"a"]), 5), 9, ErrorCode.CORRUPT_MESSAGE),
        (make_batch([b"a"], producer_id=1, producer_epoch=0), 9, ErrorCode.INVALID_RECORD),
    ],
)
def test_produced_batch_validation(records: bytes | None, version: int, code: int) -> None:
    with pytest.raises(BrokerError) as info:
        validate_produced_batch(records, version, 1000)
    assert info.value.code == code


def test_zstd_is_fine_from_produce_v7() -> None:
    header = validate_produced_batch(compressed_batch([b"a"], [1], 4), 7, 1000)
    assert header.record_count == 1


# -- fetch readiness and the long-poll ---------------------------------------------------


def test_fetch_ready(store: TopicStore) -> None:
    store.create_topic("t", 2)
    first = make_batch([b"a" * 100])
    produce(store, "t", 0, first)
    targets = [FetchTarget("t", 0, 0, 1 << 20), FetchTarget("t", 1, 0, 1 << 20)]
    assert store.fetch_ready(targets, 1)
    assert store.fetch_ready(targets, len(first))
    assert not store.fetch_ready(targets, len(first) + 1)
    assert not store.fetch_ready([FetchTarget("t", 0, 0, 10)], 11)  # capped by max bytes
    assert not store.fetch_ready([FetchTarget("t", 0, 1, 1 << 20)], 1)
    assert store.fetch_ready([FetchTarget("t", 0, 5, 1 << 20)], 1)  # out of range: answer
    assert store.fetch_ready([FetchTarget("gone", 0, 0, 1 << 20)], 1)
    assert store.fetch_ready([], 0)


async def test_wait_for_data_is_woken_by_an_append(
    store: TopicStore, autojump_clock: trio.testing.MockClock
) -> None:
    store.create_topic("t", 1)
    targets = [FetchTarget("t", 0, 0, 1 << 20)]
    start = trio.current_time()
    woke_at: list[float] = []

    async def waiter() -> None:
        assert await store.wait_for_data(targets, start + 10)
        woke_at.append(trio.current_time() - start)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(waiter)
        await trio.sleep(3)
        produce(store, "t", 0, make_batch([b"a"]))
    assert woke_at == [pytest.approx(3)]


async def test_wait_for_data_times_out(
    store: TopicStore, autojump_clock: trio.testing.MockClock
) -> None:
    store.create_topic("t", 1)
    start = trio.current_time()
    store.notify()  # an unrelated change: the waiter re-checks and keeps waiting
    assert not await store.wait_for_data([FetchTarget("t", 0, 0, 100)], start + 2.5, 1)
    assert trio.current_time() - start == pytest.approx(2.5)


async def test_wait_for_data_is_woken_by_a_deletion(
    store: TopicStore, autojump_clock: trio.testing.MockClock
) -> None:
    store.create_topic("t", 1)
    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.sleep, 0)

        async def delete_soon() -> None:
            await trio.sleep(1)
            store.delete_topic("t")

        nursery.start_soon(delete_soon)
        assert await store.wait_for_data([FetchTarget("t", 0, 0, 100)], start + 60)
    assert trio.current_time() - start == pytest.approx(1)


# -- config ------------------------------------------------------------------------------


def test_broker_config_defaults_and_normalisation() -> None:
    assert validate_broker_config({}) == BROKER_CONFIG_DEFAULTS
    got = validate_broker_config(
        {"auto.create.topics.enable": " FALSE ", "num.partitions": "12", "group.x": "?"}
    )
    assert got["auto.create.topics.enable"] == "false" and got["num.partitions"] == "12"
    assert "group.x" not in got


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("auto.create.topics.enable", "yes"),
        ("num.partitions", "0"),
        ("num.partitions", "many"),
        ("message.max.bytes", "-1"),
        ("fetch.max.bytes", "1023"),
        ("num.partitions", str(2**31)),
    ],
)
def test_broker_config_rejects_bad_values(key: str, value: str) -> None:
    with pytest.raises(ValueError, match=key) as info:
        validate_broker_config({key: value})
    assert "\n" not in str(info.value)


def test_a_batch_claiming_more_records_than_it_holds_is_corrupt() -> None:
    """Issue 15 item 2: a CRC-valid batch claiming 2^31-1 records around one record of
    length -1 is refused at Produce (INVALID_RECORD, as Kafka's record iterator refuses it),
    and the timestamp walker stops on it instead of looping."""
    import struct

    import crc32c

    good = make_batch([b"v"])
    body = bytearray(good)
    # record count (the last int32 of the header) -> 2^31 - 1, last offset delta to match
    struct.pack_into(">i", body, 57, 2**31 - 1)
    struct.pack_into(">i", body, 23, 2**31 - 2)
    # the one record's length varint -> -1 (zig-zag 1)
    body[61] = 0x01
    struct.pack_into(">I", body, 17, crc32c.crc32c(bytes(body[21:])))
    forged = bytes(body)
    with pytest.raises(BrokerError) as info:
        validate_produced_batch(forged, 9, 1 << 20)
    assert info.value.code == ErrorCode.INVALID_RECORD
    assert record_timestamps(forged) is None
    # one record, of length -1: the walkers must not step backwards
    negative = bytearray(good)
    negative[61] = 0x01
    struct.pack_into(">I", negative, 17, crc32c.crc32c(bytes(negative[21:])))
    with pytest.raises(BrokerError) as info:
        validate_produced_batch(bytes(negative), 9, 1 << 20)
    assert "expected to read -1 bytes" in info.value.message
    assert record_timestamps(bytes(negative)) is None
    # trailing garbage after the last record is refused too
    padded = bytearray(good + b"\x00")
    struct.pack_into(">i", padded, 8, len(padded) - 12)
    struct.pack_into(">I", padded, 17, crc32c.crc32c(bytes(padded[21:])))
    with pytest.raises(BrokerError) as info:
        validate_produced_batch(bytes(padded), 9, 1 << 20)
    assert (info.value.code, info.value.message) == (
        ErrorCode.INVALID_RECORD, "Incorrect declared batch size, records still remaining in file")
    # and the honest batch still passes
    assert validate_produced_batch(good, 9, 1 << 20).record_count == 1
