"""Kafka's ``LogValidator`` for the records of one magic-v2 batch, and bounded reads of them.

A produced batch is opened and every record walked, as Kafka's broker does before it
appends (``validateMessagesAndAssignOffsetsCompressed`` / ``assignOffsetsNonCompressed``
over ``DefaultRecordBatch``'s record iterators): exactly the header's record count, each
record's length, fields and offset delta consistent, nothing left over. Records are
decompressed into a buffer of at most ``limit`` bytes (the partition's
``message.max.bytes``: a batch may not carry more records than it could hold uncompressed),
so a compression bomb costs no more than that and stops there.

Errors follow Kafka: a record that does not parse is INVALID_RECORD with
``DefaultRecord``'s and ``DefaultRecordBatch``'s messages; a body the codec cannot decode is
CORRUPT_MESSAGE (Kafka's ``Failed to decompress record stream``); records that decompress
to more than ``limit`` are MESSAGE_TOO_LARGE (Kafka's ``RecordTooLargeException``, on which
the Java producer splits the batch and retries).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wire.constants import CompressionType, ErrorCode
from wire.records import (
    ATTR_COMPRESSION_MASK,
    ATTR_TIMESTAMP_TYPE,
    BATCH_OVERHEAD,
    RecordBatchHeader,
)

__all__ = [
    "READ_DECOMPRESSION_LIMIT",
    "InvalidBatchRecords",
    "batch_records",
    "record_offsets_and_timestamps",
    "validate_batch_records",
]

_NONE, _GZIP, _SNAPPY, _LZ4, _ZSTD = (
    CompressionType.NONE, CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4,
    CompressionType.ZSTD,
)
#: The bound of a read of stored records (ListOffsets by timestamp): the largest batch a
#: Produce accepts decompresses to at most its partition's ``message.max.bytes``; batches
#: written before that check was made are cut off here.
READ_DECOMPRESSION_LIMIT = 64 << 20
#: xerial snappy-java framing (Kafka's SnappyOutputStream): magic, version, compatible
#: version, then blocks of int32 length + raw snappy.
_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = 16


class InvalidBatchRecords(Exception):
    """The records of a batch Kafka would refuse: ``code`` and Kafka's ``message``."""

    def __init__(self, code: ErrorCode, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def _invalid(message: str) -> InvalidBatchRecords:
    return InvalidBatchRecords(ErrorCode.INVALID_RECORD, message)


def _too_large(limit: int) -> InvalidBatchRecords:
    return InvalidBatchRecords(
        ErrorCode.MESSAGE_TOO_LARGE,
        f"The records of the batch decompress to more than {limit} bytes, "
        "the maximum allowed batch size",
    )


def _into(decompress_into: Callable[[Any, Any], int], body: bytes, limit: int) -> bytes:
    """``decompress_into`` a buffer one byte larger than ``limit``: the codec stops when the
    buffer is full, so at most ``limit`` + 1 bytes are ever written."""
    import cramjam

    out = bytearray(limit + 1)
    try:
        written = decompress_into(body, out)
    except cramjam.DecompressionError as exc:
        if "failed to write whole buffer" in str(exc):
            raise _too_large(limit) from None
        raise
    if written > limit:
        raise _too_large(limit)
    del out[written:]
    return bytes(out)


def _snappy(body: bytes, limit: int) -> bytes:
    """Kafka's snappy: xerial-framed blocks, or one raw block (snappy-java reads both). Each
    raw block states its length before it is decompressed."""
    import cramjam

    if body[:8] != _XERIAL_MAGIC:
        blocks = [body]
    else:
        blocks = []
        position = _XERIAL_HEADER
        while position < len(body):
            if position + 4 > len(body):
                raise ValueError("truncated snappy block length")
            length = int.from_bytes(body[position : position + 4], "big")
            if length <= 0 or position + 4 + length > len(body):
                raise ValueError(f"invalid snappy block length {length}")
            blocks.append(body[position + 4 : position + 4 + length])
            position += 4 + length
    total = 0
    parts = []
    for block in blocks:
        total += cramjam.snappy.decompress_raw_len(block)
        if total > limit:
            raise _too_large(limit)
        parts.append(bytes(cramjam.snappy.decompress_raw(block)))
    return b"".join(parts)


def batch_records(batch: bytes, header: RecordBatchHeader, limit: int) -> bytes:
    """The batch's records, decompressed (at most ``limit`` bytes of them)."""
    body = batch[BATCH_OVERHEAD : header.size]
    codec = header.attributes & ATTR_COMPRESSION_MASK
    if codec == _NONE:
        return body
    import cramjam  # ~4 ms: the first compressed batch pays it, not start-up

    try:
        if codec == _GZIP:
            return _into(cramjam.gzip.decompress_into, body, limit)
        if codec == _LZ4:
            return _into(cramjam.lz4.decompress_into, body, limit)
        if codec == _ZSTD:
            return _into(cramjam.zstd.decompress_into, body, limit)
        if codec == _SNAPPY:
            return _snappy(body, limit)
    except InvalidBatchRecords:
        raise
    except (cramjam.DecompressionError, ValueError) as exc:
        raise InvalidBatchRecords(
            ErrorCode.CORRUPT_MESSAGE,
            f"Failed to decompress record stream ({CompressionType(codec).name.lower()}): {exc}",
        ) from None
    raise InvalidBatchRecords(ErrorCode.CORRUPT_MESSAGE, f"Unknown compression type id: {codec}")


def _long_varint(data: bytes, position: int) -> tuple[int, int]:
    """A zig-zag varint/varlong of more than one byte at ``position`` (Kafka's
    ``ByteUtils.readVarlong``): (value, next position); IndexError when it runs off the end,
    ValueError past 64 bits."""
    raw = 0
    shift = 0
    while True:
        byte = data[position]
        position += 1
        raw |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (raw >> 1) ^ -(raw & 1), position
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 64 bits")


def _varint(data: bytes, position: int) -> tuple[int, int]:
    """A zig-zag varint/varlong at ``position``: (value, next position)."""
    byte = data[position]
    if byte < 0x80:
        return (byte >> 1) ^ -(byte & 1), position + 1
    return _long_varint(data, position)


def _walk(records: bytes, header: RecordBatchHeader, keep: bool) -> list[tuple[int, int]]:
    """Every record parsed as ``DefaultRecord.readFrom`` does; with ``keep``, each record's
    (offset, timestamp). The produce hot path: the record's length and its key's and
    value's lengths, one or two bytes as a rule, are decoded inline."""
    data = records
    total = len(data)
    out: list[tuple[int, int]] = []
    log_append_time = bool(header.attributes & ATTR_TIMESTAMP_TYPE)
    count = header.record_count
    if count < 0:
        raise _invalid(f"Found invalid record count {count} in magic v2 batch")
    pos = 0
    try:
        for index in range(count):
            if pos >= total:
                raise _invalid("Incorrect declared batch size, premature EOF reached")
            b = data[pos]
            if b < 0x80:
                size = (b >> 1) ^ -(b & 1)
                pos += 1
            elif (c := data[pos + 1]) < 0x80:  # two bytes: records up to 8 KiB
                raw = (b & 0x7F) | (c << 7)
                size = (raw >> 1) ^ -(raw & 1)
                pos += 2
            else:
                size, pos = _long_varint(data, pos)
            start = pos
            if size < 0:
                raise _invalid(f"Invalid record size: expected to read {size} bytes in "
                               "record payload")
            end = start + size
            if end > total:
                raise _invalid(
                    f"Invalid record size: expected {size} bytes in record payload, but "
                    f"instead the buffer has only {total - start} remaining bytes.")
            pos += 1  # attributes
            timestamp_delta, pos = _varint(data, pos)
            offset_delta, pos = _varint(data, pos)
            if offset_delta != index:
                raise _invalid(f"Record {index} of the batch has offset delta {offset_delta}")
            for _ in range(2):  # key, then value: length (-1: null) and bytes
                b = data[pos]
                if b < 0x80:
                    length = (b >> 1) ^ -(b & 1)
                    pos += 1
                elif (c := data[pos + 1]) < 0x80:
                    raw = (b & 0x7F) | (c << 7)
                    length = (raw >> 1) ^ -(raw & 1)
                    pos += 2
                else:
                    length, pos = _long_varint(data, pos)
                if length > 0:
                    pos += length
                elif length < -1:
                    raise _invalid("Found invalid record structure")
            headers, pos = _varint(data, pos)
            if headers < 0:
                raise _invalid(f"Found invalid number of record headers {headers}")
            if headers > end - pos:
                raise _invalid(f"Found invalid number of record headers. {headers} is larger "
                               "than the remaining size of the buffer")
            for _ in range(headers):
                key_size, pos = _varint(data, pos)
                if key_size < 0:
                    raise _invalid(f"Invalid negative header key size {key_size}")
                pos += key_size
                value_size, pos = _varint(data, pos)
                if value_size < -1:
                    raise _invalid("Found invalid record structure")
                pos += max(value_size, 0)
                if pos > end:
                    raise _invalid("Found invalid record structure")
            if pos != end:
                raise _invalid(f"Invalid record size: expected to read {size} bytes in record "
                               f"payload, but instead read {pos - start}")
            if keep:
                timestamp = (header.max_timestamp if log_append_time
                             else header.base_timestamp + timestamp_delta)
                out.append((header.base_offset + offset_delta, timestamp))
    except (IndexError, ValueError):  # a field ran off the records, a varint past 64 bits
        raise _invalid("Found invalid record structure") from None
    if pos != total:
        raise _invalid("Incorrect declared batch size, records still remaining in file")
    return out


def validate_batch_records(batch: bytes, header: RecordBatchHeader, limit: int) -> None:
    """InvalidBatchRecords unless the batch's records are what its header declares."""
    _walk(batch_records(batch, header, limit), header, keep=False)


def record_offsets_and_timestamps(
    batch: bytes, header: RecordBatchHeader, limit: int | None = None
) -> list[tuple[int, int]] | None:
    """(offset, timestamp) of every record of a stored batch, in order; None when its
    records cannot be read within ``limit`` decompressed bytes (by default
    ``READ_DECOMPRESSION_LIMIT``)."""
    if limit is None:
        limit = READ_DECOMPRESSION_LIMIT
    try:
        return _walk(batch_records(batch, header, limit), header, keep=True)
    except InvalidBatchRecords:
        return None
