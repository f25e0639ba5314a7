"""Produce validates every batch's records as Kafka's LogValidator does, for every codec,
decompressing within ``message.max.bytes``; later reads of stored records are bounded too
(issue 32 item 2)."""

from __future__ import annotations

import struct
import tracemalloc
import zlib
from collections.abc import Callable
from typing import TypeVar

import crc32c
import pytest
import trio
from broker_support import compress_records, compressed_batch, make_batch, with_body

import storage.batch_validation as batch_validation
from coordinator.broker.batches import record_timestamps, validate_produced_batch
from coordinator.broker.errors import BrokerError
from coordinator.broker.topics import TopicStore
from wire import ErrorCode
from wire.records import parse_batches

T = TypeVar("T")
LIMIT = 1 << 20
CODECS = [1, 2, 3, 4]


def _refusal(batch: bytes, limit: int = LIMIT) -> tuple[ErrorCode, str]:
    with pytest.raises(BrokerError) as info:
        validate_produced_batch(batch, 9, limit)
    return info.value.code, info.value.message


@pytest.mark.parametrize("codec", CODECS)
def test_valid_compressed_batches_are_accepted(codec: int) -> None:
    batch = compressed_batch([b"a" * 100, b"b", b""], [1, 2, 3], codec)
    assert validate_produced_batch(batch, 9, LIMIT).record_count == 3
    assert record_timestamps(batch) == [(0, 1), (1, 2), (2, 3)]


@pytest.mark.parametrize("codec", CODECS)
def test_garbage_in_any_codec_is_corrupt(codec: int) -> None:
    """Garbage with a valid CRC used to be stored, then stopped the partition's consumers."""
    batch = with_body(make_batch([b"a"]), b"\x00garbage, not compressed records" * 4, codec)
    code, message = _refusal(batch)
    assert code == ErrorCode.CORRUPT_MESSAGE
    assert message.startswith("Failed to decompress record stream")


@pytest.mark.parametrize("codec", CODECS)
def test_compressed_records_must_match_the_header(codec: int) -> None:
    """Record count, offset deltas and sizes are checked inside compressed batches too."""
    three = make_batch([b"a", b"b", b"c"], [1, 2, 3])
    two = make_batch([b"a", b"b"], [1, 2])
    fewer = with_body(three, compress_records(two[61:], codec), codec)
    assert _refusal(fewer) == (ErrorCode.INVALID_RECORD,
                               "Incorrect declared batch size, premature EOF reached")
    more = with_body(two, compress_records(three[61:], codec), codec)
    assert _refusal(more) == (ErrorCode.INVALID_RECORD,
                              "Incorrect declared batch size, records still remaining in file")
    # the second record's offset delta (its third byte: length, attributes, timestamp delta)
    records = bytearray(two[61:])
    second = 1 + records[0] // 2
    records[second + 3] = 0x08  # zig-zag 4
    shifted = with_body(two, compress_records(bytes(records), codec), codec)
    assert _refusal(shifted) == (ErrorCode.INVALID_RECORD,
                                 "Record 1 of the batch has offset delta 4")


def _gzip_bomb(size: int) -> bytes:
    """``size`` zero bytes gzip-compressed, made without holding them."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = bytes(1 << 20)
    parts = [compressor.compress(chunk) for _ in range(size >> 20)]
    parts.append(compressor.flush())
    return b"".join(parts)


def _traced(call: Callable[[], T]) -> tuple[T, int]:
    """``call()`` and the peak of the memory Python allocated during it."""
    tracemalloc.start()
    try:
        result = call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


def test_gzip_bomb_is_refused_within_the_batch_limit() -> None:
    """100 MiB of zeros in ~100 KB of gzip: refused having decompressed at most the limit."""
    bomb = with_body(make_batch([b"a"]), _gzip_bomb(100 << 20), 1)
    assert len(bomb) < LIMIT
    (code, message), peak = _traced(lambda: _refusal(bomb))
    assert code == ErrorCode.MESSAGE_TOO_LARGE
    assert f"more than {LIMIT} bytes" in message
    assert peak < 3 * LIMIT, peak


@pytest.mark.parametrize("codec", [2, 3, 4])
def test_bombs_of_other_codecs_are_refused_within_the_limit(codec: int) -> None:
    bomb = with_body(make_batch([b"a"]), compress_records(bytes(8 << 20), codec), codec)
    (code, _), peak = _traced(lambda: _refusal(bomb))
    assert code == ErrorCode.MESSAGE_TOO_LARGE
    assert peak < 3 * LIMIT, peak


def test_list_offsets_reads_a_stored_bomb_within_the_read_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bomb stored before Produce validated records: ListOffsets by timestamp reads at
    most READ_DECOMPRESSION_LIMIT of it (it decompressed the whole bomb), answering by the
    batch's bounds."""
    monkeypatch.setattr(batch_validation, "READ_DECOMPRESSION_LIMIT", LIMIT)
    bomb = with_body(make_batch([b"a"], [50]), _gzip_bomb(64 << 20), 1)
    store = TopicStore()
    store.create_topic("t", 1)
    store.append("t", 0, bomb, parse_batches(bomb)[0])
    log = store.partition("t", 0)
    assert log is not None
    found, peak = _traced(lambda: trio.run(log.offset_for_timestamp, 10))
    assert found == (50, 0)
    assert peak < 3 * LIMIT, peak


def test_uncompressed_records_are_walked_field_by_field() -> None:
    """A record whose key length runs past its end is INVALID_RECORD (Kafka's
    ``DefaultRecord.readFrom``)."""
    good = bytearray(make_batch([b"value"]))
    # length, attributes, timestamp delta, offset delta, then the key length: -1 -> 60
    good[61 + 4] = 120
    struct.pack_into(">I", good, 17, crc32c.crc32c(bytes(good[21:])))
    assert _refusal(bytes(good)) == (ErrorCode.INVALID_RECORD, "Found invalid record structure")
