"""The records inside a Kafka magic-v2 record batch, as the log cleaner reads and rewrites
them (Kafka's ``DefaultRecordBatch``, ``DefaultRecord`` and ``MemoryRecordsBuilder``).

A record is ``length varint | attributes int8 | timestampDelta varlong | offsetDelta varint
| keyLength varint | key | valueLength varint | value | headers``; a null key or value has
length -1. Records of uncompressed and gzip batches are read here (the codecs the standard
library opens); a batch with another codec is :data:`None` to :func:`read_records` and the
cleaner keeps it whole.

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

from wire.checksum import crc32c
from wire.records import (
    ATTR_COMPRESSION_MASK,
    ATTR_CONTROL,
    ATTR_TIMESTAMP_TYPE,
    ATTR_TRANSACTIONAL,
    BATCH_OVERHEAD,
    RecordBatchHeader,
)

__all__ = [
    "ATTR_DELETE_HORIZON",
    "BatchRecord",
    "delete_horizon_ms",
    "empty_batch",
    "read_records",
    "read_varint",
    "rebuild_batch",
]

#: KIP-534: the base timestamp holds the delete horizon of the batch's tombstones/markers.
ATTR_DELETE_HORIZON = 0x40
NO_TIMESTAMP = -1
_GZIP = 1
_NONE = 0
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
    shift = raw = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("truncated or overlong varint")
        byte = data[pos]
        pos += 1
        raw |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7


def _put_varint(value: int) -> bytes:
    raw = (value << 1) ^ (value >> 63)
    raw &= (1 << 64) - 1
    out = bytearray()
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def read_records(data: bytes, header: RecordBatchHeader) -> list[BatchRecord] | None:
    """The records of one batch (``data`` is the batch alone), or None when its codec is
    not one this broker opens. ValueError for garbled records."""
    codec = header.attributes & ATTR_COMPRESSION_MASK
    body = data[BATCH_OVERHEAD : header.size]
    if codec == _GZIP:
        try:
            body = zlib.decompress(body, 16 + zlib.MAX_WBITS)
        except zlib.error as exc:
            raise ValueError(f"gzip batch does not decompress: {exc}") from None
    elif codec != _NONE:
        return None
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
    if header.attributes & ATTR_COMPRESSION_MASK == _GZIP:
        compressor = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
        records = compressor.compress(records) + compressor.flush()
    return _assemble(header, attributes, base_timestamp, max_timestamp, len(kept), records)


def empty_batch(header: RecordBatchHeader) -> bytes:
    """The header of the batch alone, no records, uncompressed (Kafka's ``RETAIN_EMPTY``):
    it keeps the producer's last sequence and epoch, or the round's last offset."""
    attributes = header.attributes & (ATTR_TIMESTAMP_TYPE | ATTR_CONTROL | ATTR_TRANSACTIONAL)
    return _assemble(header, attributes, NO_TIMESTAMP, header.max_timestamp, 0, b"")
