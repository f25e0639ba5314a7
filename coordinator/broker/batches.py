"""What the broker checks in a produced record batch, and the record-level reads it needs.

Produce accepts exactly one magic-v2 batch per partition (Kafka's
``ProduceRequest.validateRecords``), refuses it when it is larger than
``message.max.bytes``, when its CRC is wrong, or when it breaks Kafka's client-origin
rules (``LogValidator.validateBatch``). ListOffsets by timestamp needs the offset and
timestamp of individual records: :func:`record_timestamps` reads them from uncompressed
and gzip batches (the codecs the standard library can open).
"""

from __future__ import annotations

import zlib

from coordinator.broker.errors import BrokerError
from wire import ErrorCode
from wire.checksum import crc32c
from wire.records import BATCH_OVERHEAD, InvalidRecordBatch, RecordBatchHeader, parse_batches

__all__ = [
    "COMPRESSION_GZIP",
    "COMPRESSION_NONE",
    "COMPRESSION_ZSTD",
    "check_record_framing",
    "compression_codec",
    "record_timestamps",
    "validate_produced_batch",
]

COMPRESSION_NONE = 0
COMPRESSION_GZIP = 1
COMPRESSION_ZSTD = 4
_MAX_CODEC = 4
_MAGIC_AT = 16
_CRC_START = 21
_ATTR_COMPRESSION = 0x07
_ATTR_LOG_APPEND_TIME = 0x08
_ZSTD_MIN_PRODUCE_VERSION = 7


def compression_codec(header: RecordBatchHeader) -> int:
    """The batch's compression codec id (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)."""
    return header.attributes & _ATTR_COMPRESSION


def validate_produced_batch(
    records: bytes | None, produce_version: int, max_message_bytes: int
) -> RecordBatchHeader:
    """The one batch of a Produce partition, or BrokerError with Kafka's code for it."""
    if not records or len(records) <= _MAGIC_AT:
        raise BrokerError(
            ErrorCode.INVALID_RECORD,
            f"Produce requests with version {produce_version} must have at least one "
            "record batch per partition",
        )
    if records[_MAGIC_AT] != 2:
        raise BrokerError(
            ErrorCode.INVALID_RECORD,
            f"Produce requests with version {produce_version} are only allowed to contain "
            "record batches with magic version 2",
        )
    try:
        batches = parse_batches(records, verify_crc=False)
    except InvalidRecordBatch as exc:
        raise BrokerError(ErrorCode.CORRUPT_MESSAGE, str(exc)) from None
    if len(batches) != 1:
        raise BrokerError(
            ErrorCode.INVALID_RECORD,
            f"Produce requests with version {produce_version} are only allowed to contain "
            "exactly one record batch per partition",
        )
    batch = batches[0]
    codec = compression_codec(batch)
    if codec > _MAX_CODEC:
        raise BrokerError(ErrorCode.CORRUPT_MESSAGE, f"Unknown compression type id: {codec}")
    if codec == COMPRESSION_ZSTD and produce_version < _ZSTD_MIN_PRODUCE_VERSION:
        raise BrokerError(
            ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
            f"Produce requests with version {produce_version} are not allowed to use "
            "ZStandard compression",
        )
    if batch.size > max_message_bytes:
        raise BrokerError(
            ErrorCode.MESSAGE_TOO_LARGE,
            f"The record batch size {batch.size} bytes exceeds the maximum allowed "
            f"batch size {max_message_bytes}",
        )
    if crc32c(memoryview(records)[_CRC_START : batch.size]) != batch.crc:
        raise BrokerError(
            ErrorCode.CORRUPT_MESSAGE, f"Record is corrupt (stored crc = {batch.crc})"
        )
    _check_client_batch(batch)
    check_record_framing(records, batch)
    return batch


def _check_client_batch(batch: RecordBatchHeader) -> None:
    count_from_offsets = batch.last_offset_delta + 1
    if batch.record_count <= 0:
        raise BrokerError(
            ErrorCode.INVALID_RECORD,
            f"Invalid reported count for record batch: {batch.record_count}",
        )
    if count_from_offsets != batch.record_count:
        raise BrokerError(
            ErrorCode.INVALID_RECORD,
            f"Inconsistent batch offset range [{batch.base_offset}, {batch.last_offset}] "
            f"and count of records {batch.record_count}",
        )
    if batch.is_control:
        raise BrokerError(
            ErrorCode.INVALID_RECORD, "Clients are not allowed to write control records"
        )
    if batch.producer_id >= 0 and batch.base_sequence < 0:
        raise BrokerError(
            ErrorCode.INVALID_RECORD,
            f"Invalid sequence number {batch.base_sequence} in record batch with producerId "
            f"{batch.producer_id}",
        )


def _read_varint(data: bytes, position: int) -> tuple[int, int]:
    """A zig-zag varint/varlong at ``position``: (value, next position)."""
    shift = 0
    raw = 0
    while True:
        if position >= len(data) or shift > 63:
            raise ValueError("truncated or overlong varint")
        byte = data[position]
        position += 1
        raw |= (byte & 0x7F) << shift
        if not byte & 0x80:
            break
        shift += 7
    return (raw >> 1) ^ -(raw & 1), position


def record_timestamps(batch: bytes) -> list[tuple[int, int]] | None:
    """(offset, timestamp) of every record of one stored batch, in order; None when its
    codec is one this broker cannot open (snappy, lz4, zstd) or its records are garbled."""
    header = parse_batches(batch, verify_crc=False)[0]
    codec = compression_codec(header)
    body = batch[BATCH_OVERHEAD : header.size]
    if codec == COMPRESSION_GZIP:
        try:
            body = zlib.decompress(body, 16 + zlib.MAX_WBITS)
        except zlib.error:
            return None
    elif codec != COMPRESSION_NONE:
        return None
    log_append_time = bool(header.attributes & _ATTR_LOG_APPEND_TIME)
    out: list[tuple[int, int]] = []
    position = 0
    if header.record_count > len(body):  # every record takes at least a byte
        return None
    try:
        for _ in range(header.record_count):
            length, start = _read_varint(body, position)
            if length <= 0 or start + length > len(body):
                return None  # the walk must always advance, inside the batch
            # attributes (one byte), then timestampDelta and offsetDelta
            timestamp_delta, after = _read_varint(body, start + 1)
            offset_delta, _ = _read_varint(body, after)
            timestamp = (
                header.max_timestamp if log_append_time else header.base_timestamp + timestamp_delta
            )
            out.append((header.base_offset + offset_delta, timestamp))
            position = start + length
    except ValueError:
        return None
    return out


def check_record_framing(batch: bytes, header: RecordBatchHeader) -> None:
    """Kafka's LogValidator on an uncompressed batch: exactly ``record_count`` records, each
    with a sane length, filling the batch (CORRUPT_MESSAGE otherwise). Compressed batches
    are checked when they are read (``record_timestamps``)."""
    if compression_codec(header) != COMPRESSION_NONE:
        return
    body = batch[BATCH_OVERHEAD : header.size]
    if header.record_count > len(body):
        raise BrokerError(ErrorCode.CORRUPT_MESSAGE,
                          f"Found invalid record count {header.record_count} in a batch of "
                          f"{len(body)} bytes of records")
    position = 0
    try:
        for _ in range(header.record_count):
            length, start = _read_varint(body, position)
            if length <= 0 or start + length > len(body):
                raise ValueError(f"invalid record length {length}")
            position = start + length
    except ValueError as exc:
        raise BrokerError(ErrorCode.CORRUPT_MESSAGE, f"Record is corrupt: {exc}") from None
    if position != len(body):
        raise BrokerError(ErrorCode.CORRUPT_MESSAGE,
                          f"{len(body) - position} bytes after the batch's "
                          f"{header.record_count} records")
