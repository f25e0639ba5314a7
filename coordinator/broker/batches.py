"""What the broker checks in a produced record batch, and the record-level reads it needs.

Produce accepts exactly one magic-v2 batch per partition (Kafka's
``ProduceRequest.validateRecords``), refuses it when it is larger than
``message.max.bytes``, when its CRC is wrong, or when it breaks Kafka's client-origin
rules (``LogValidator.validateBatch``), or when its records are not what its header
declares (:mod:`storage.batch_validation`, every codec, decompressed within
``message.max.bytes``). ListOffsets by timestamp reads the offset and timestamp of
individual records with :func:`record_timestamps`, within a bounded decompression too.
"""

from __future__ import annotations

import struct

from coordinator.broker.errors import BrokerError
from storage.batch_validation import (
    InvalidBatchRecords,
    record_offsets_and_timestamps,
    validate_batch_records,
)
from wire import ErrorCode
from wire.checksum import crc32c
from wire.constants import CompressionType
from wire.records import (
    ATTR_COMPRESSION_MASK,
    ATTR_TIMESTAMP_TYPE,
    CRC_AT,
    CRC_START,
    LENGTH_END,
    MAGIC_AT,
    MAX_TIMESTAMP_AT,
    InvalidRecordBatch,
    RecordBatchHeader,
    parse_batches,
)

__all__ = [
    "compression_codec",
    "record_timestamps",
    "validate_produced_batch",
]

_ZSTD_MIN_PRODUCE_VERSION = 7


def compression_codec(header: RecordBatchHeader) -> int:
    """The batch's compression codec id (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)."""
    return header.attributes & ATTR_COMPRESSION_MASK


def validate_produced_batch(
    records: bytes | None, produce_version: int, max_message_bytes: int
) -> RecordBatchHeader:
    """The one batch of a Produce partition, or BrokerError with Kafka's code for it."""
    if not records or len(records) <= MAGIC_AT:
        raise BrokerError(
            ErrorCode.INVALID_RECORD,
            f"Produce requests with version {produce_version} must have at least one "
            "record batch per partition",
        )
    if records[MAGIC_AT] != 2:
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
    if codec > max(CompressionType):
        raise BrokerError(ErrorCode.CORRUPT_MESSAGE, f"Unknown compression type id: {codec}")
    if codec == CompressionType.ZSTD and produce_version < _ZSTD_MIN_PRODUCE_VERSION:
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
    if crc32c(memoryview(records)[CRC_START : batch.size]) != batch.crc:
        raise BrokerError(
            ErrorCode.CORRUPT_MESSAGE, f"Record is corrupt (stored crc = {batch.crc})"
        )
    _check_client_batch(batch)
    try:
        validate_batch_records(records, batch, max_message_bytes)
    except InvalidBatchRecords as exc:
        raise BrokerError(exc.code, exc.message) from None
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


def record_timestamps(batch: bytes) -> list[tuple[int, int]] | None:
    """(offset, timestamp) of every record of one stored batch, in order; None when its
    records cannot be read (garbled, or decompressing past the read bound)."""
    return record_offsets_and_timestamps(batch, parse_batches(batch, verify_crc=False)[0])


_ATTRIBUTES = struct.Struct(">h")  # at CRC_START


def stamp_log_append_time(records: bytes, now_ms: int) -> bytes:
    """The batch as a ``message.timestamp.type=LogAppendTime`` topic stores it (Kafka's
    ``LogValidator``): the timestamp-type attribute set, the max timestamp the broker's
    clock, the CRC recomputed (it covers the attributes onwards)."""
    batch = bytearray(records)
    (attributes,) = _ATTRIBUTES.unpack_from(batch, CRC_START)
    _ATTRIBUTES.pack_into(batch, CRC_START, attributes | ATTR_TIMESTAMP_TYPE)
    struct.pack_into(">q", batch, MAX_TIMESTAMP_AT, now_ms)
    end = struct.unpack_from(">i", batch, 8)[0] + LENGTH_END
    struct.pack_into(">I", batch, CRC_AT, crc32c(memoryview(batch)[CRC_START:end]))
    return bytes(batch)
