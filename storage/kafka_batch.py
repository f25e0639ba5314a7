"""The records inside a Kafka magic-v2 record batch, as the log cleaner reads and rewrites
them (Kafka's ``DefaultRecordBatch``, ``DefaultRecord`` and ``MemoryRecordsBuilder``).

A record is ``length varint | attributes int8 | timestampDelta varlong | offsetDelta varint
| keyLength varint | key | valueLength varint | value | headers``; a null key or value has
length -1. Records of every codec are read (``batch_validation.batch_records``); a batch is rebuilt
with its own codec when that is none, gzip or zstd, and kept whole otherwise.

:func:`rebuild_batch` writes a batch holding some of an original's records, as Kafka's
``MemoryRecords.filterTo`` does: same base offset, last offset delta (so the producer's last
sequence survives), producer id, epoch, base sequence, leader epoch and attribute bits, the
same codec; the base timestamp is the first kept record's, or the delete horizon (KIP-534:
attribute bit 0x40, the record timestamps rewritten as deltas from it). :func:`empty_batch`
is Kafka's ``writeEmptyHeader``: the header alone, no records.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from storage.batch_validation import (
    READ_DECOMPRESSION_LIMIT,
    InvalidBatchRecords,
    _varint,
    batch_records,
)
from wire.checksum import crc32c
from wire.constants import CompressionType
from wire.records import (
    ATTR_COMPRESSION_MASK,
    ATTR_CONTROL,
    ATTR_TIMESTAMP_TYPE,
    ATTR_TRANSACTIONAL,
    RecordBatchHeader,
)
from wire.varint import encode_uvarint

__all__ = [
    "ATTR_DELETE_HORIZON",
    "BatchRecord",
    "can_rebuild",
    "delete_horizon_ms",
    "empty_batch",
    "read_records",
    "read_varint",
    "rebuild_batch",
]

#: KIP-534: the base timestamp holds the delete horizon of the batch's tombstones/markers.
ATTR_DELETE_HORIZON = 0x40
NO_TIMESTAMP = -1
_NONE, _GZIP, _ZSTD = CompressionType.NONE, CompressionType.GZIP, CompressionType.ZSTD
_AFTER_CRC = struct.Struct(">hiqqqhii")
_HEAD = struct.Struct(">qiib")


@dataclass(frozen=True, slots=True)
class BatchRecord:
    """One record: its offset and timestamp, key (None: unkeyed), whether it has a value,
    and the bytes after its offset delta (key, value, headers) kept verbatim."""

    offset: int
    timestamp: int
    key: bytes | None
    has_value: bool
    attributes: int
    offset_delta: int
    rest: bytes


def delete_horizon_ms(header: RecordBatchHeader) -> int | None:
    """The batch's delete horizon (its base timestamp when bit 0x40 is set), else None."""
    return header.base_timestamp if header.attributes & ATTR_DELETE_HORIZON else None


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """A zig-zag varint/varlong at ``pos``: (value, next position); ValueError when cut."""
    try:
        return _varint(data, pos)
    except IndexError:
        raise ValueError("truncated varint") from None


def _put_varint(value: int) -> bytes:
    """A zig-zag varint/varlong."""
    return encode_uvarint(((value << 1) ^ (value >> 63)) & ((1 << 64) - 1))


def can_rebuild(header: RecordBatchHeader) -> bool:
    """Whether :func:`rebuild_batch` can write this batch's codec (none, gzip, zstd); the
    cleaner keeps a snappy or lz4 batch it would have to rewrite whole (Kafka's framings of
    those two are not the standard library's)."""
    return header.attributes & ATTR_COMPRESSION_MASK in (_NONE, _GZIP, _ZSTD)


def read_records(data: bytes, header: RecordBatchHeader) -> list[BatchRecord]:
    """The records of one batch (``data`` is the batch alone), any codec, decompressed into
    at most ``READ_DECOMPRESSION_LIMIT`` bytes. ValueError for garbled records."""
    try:
        body = batch_records(data, header, READ_DECOMPRESSION_LIMIT)
    except InvalidBatchRecords as exc:
        raise ValueError(str(exc)) from None
    log_append = bool(header.attributes & ATTR_TIMESTAMP_TYPE)
    out: list[BatchRecord] = []
    pos = 0
    for _ in range(header.record_count):
        length, start = read_varint(body, pos)
        end = start + length
        if length <= 0 or end > len(body):
            raise ValueError(f"record length {length} outside the batch")
        attributes = body[start]
        ts_delta, at = read_varint(body, start + 1)
        offset_delta, after_offset = read_varint(body, at)
        key_len, at = read_varint(body, after_offset)
        key = None if key_len < 0 else body[at : at + key_len]
        at += max(key_len, 0)
        value_len, _ = read_varint(body, at)
        timestamp = header.max_timestamp if log_append else header.base_timestamp + ts_delta
        out.append(BatchRecord(header.base_offset + offset_delta, timestamp, key, value_len >= 0,
                               attributes, offset_delta, body[after_offset:end]))
        pos = end
    return out


def _encode_record(record: BatchRecord, base_timestamp: int, log_append: bool) -> bytes:
    ts_delta = 0 if log_append else record.timestamp - base_timestamp
    inner = (bytes((record.attributes,)) + _put_varint(ts_delta)
             + _put_varint(record.offset_delta) + record.rest)
    return _put_varint(len(inner)) + inner


def _assemble(header: RecordBatchHeader, attributes: int, base_timestamp: int,
              max_timestamp: int, count: int, records: bytes) -> bytes:
    after = _AFTER_CRC.pack(attributes, header.last_offset_delta, base_timestamp, max_timestamp,
                            header.producer_id, header.producer_epoch, header.base_sequence,
                            count) + records
    crc = crc32c(after)
    head = _HEAD.pack(header.base_offset, len(after) + 9, header.partition_leader_epoch, 2)
    return head + struct.pack(">I", crc) + after


def rebuild_batch(header: RecordBatchHeader, kept: list[BatchRecord],
                  delete_horizon: int | None) -> bytes:
    """A batch with the ``kept`` records of the one ``header`` describes (at least one),
    stamped with ``delete_horizon`` when given (Kafka's ``buildRetainedRecordsInto``)."""
    log_append = bool(header.attributes & ATTR_TIMESTAMP_TYPE)
    attributes = header.attributes & ~ATTR_DELETE_HORIZON
    if delete_horizon is not None:
        base_timestamp = delete_horizon
        attributes |= ATTR_DELETE_HORIZON
    else:
        base_timestamp = kept[0].timestamp
    if log_append:
        max_timestamp = header.max_timestamp
    else:
        max_timestamp = max(r.timestamp for r in kept)
    records = b"".join(_encode_record(r, base_timestamp, log_append) for r in kept)
    codec = header.attributes & ATTR_COMPRESSION_MASK
    if codec == _GZIP:
        compressor = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
        records = compressor.compress(records) + compressor.flush()
    elif codec == _ZSTD:
        import cramjam

        records = bytes(cramjam.zstd.compress(records))
    elif codec != _NONE:
        raise ValueError(f"cannot rewrite a batch with compression codec {codec}")
    return _assemble(header, attributes, base_timestamp, max_timestamp, len(kept), records)


def empty_batch(header: RecordBatchHeader) -> bytes:
    """The header of the batch alone, no records, uncompressed (Kafka's ``RETAIN_EMPTY``):
    it keeps the producer's last sequence and epoch, or the round's last offset."""
    attributes = header.attributes & (ATTR_TIMESTAMP_TYPE | ATTR_CONTROL | ATTR_TRANSACTIONAL)
    return _assemble(header, attributes, NO_TIMESTAMP, header.max_timestamp, 0, b"")
