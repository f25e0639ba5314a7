"""Transaction markers: the control batches Kafka writes to end a transaction on a
partition (``EndTransactionMarker``), and what producer state reads of a stored batch.

A marker is one magic-v2 batch with the transactional and control attribute bits, the
producer's id and epoch, no sequence, and one record whose key is ``(version 0, type)``
(ABORT 0, COMMIT 1) and whose value is ``(version 0, coordinator epoch)``.
"""

from __future__ import annotations

import struct

from coordinator.txn.producer_entry import BatchInfo, ControlType
from wire.checksum import crc32c
from wire.records import (
    ATTR_CONTROL,
    ATTR_TRANSACTIONAL,
    BATCH_OVERHEAD,
    RecordBatchHeader,
)

__all__ = ["batch_info", "control_batch"]

_HEADER_AFTER_CRC = struct.Struct(">hiqqqhii")
_HEAD = struct.Struct(">qiib")
# One record: length 16 (zigzag 32), attributes 0, timestamp and offset deltas 0, a 4-byte
# key (zigzag 8), a 6-byte value (zigzag 12), no headers.
_RECORD_PREFIX = bytes((32, 0, 0, 0, 8))
_CONTROL_KEY = struct.Struct(">hh")
_CONTROL_VALUE = struct.Struct(">hi")
_KEY_AT = BATCH_OVERHEAD + len(_RECORD_PREFIX)
_VALUE_AT = _KEY_AT + _CONTROL_KEY.size + 1


def control_batch(
    producer_id: int, producer_epoch: int, coordinator_epoch: int, commit: bool, timestamp: int
) -> bytes:
    """A COMMIT or ABORT marker batch at base offset 0 (the log assigns the real one)."""
    record = (
        _RECORD_PREFIX
        + _CONTROL_KEY.pack(0, ControlType.COMMIT if commit else ControlType.ABORT)
        + bytes((12,))
        + _CONTROL_VALUE.pack(0, coordinator_epoch)
        + bytes((0,))
    )
    body = _HEADER_AFTER_CRC.pack(
        ATTR_TRANSACTIONAL | ATTR_CONTROL, 0, timestamp, timestamp,
        producer_id, producer_epoch, -1, 1,
    ) + record
    crc = crc32c(body)
    head = _HEAD.pack(0, len(body) + 9, -1, 2)
    return head + struct.pack(">I", crc) + body


def batch_info(header: RecordBatchHeader, data: bytes) -> BatchInfo:
    """What producer state needs of a batch (for a control batch, the marker's type and
    coordinator epoch, read from its single record)."""
    control: ControlType | None = None
    coordinator_epoch = 0
    if header.is_control:
        start = header.position + _KEY_AT
        try:
            _, kind = _CONTROL_KEY.unpack_from(data, start)
            _, coordinator_epoch = _CONTROL_VALUE.unpack_from(data, header.position + _VALUE_AT)
            control = ControlType(kind)
        except (struct.error, ValueError):
            control = ControlType.ABORT
    return BatchInfo(
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        last_offset_delta=header.last_offset_delta,
        max_timestamp=header.max_timestamp,
        is_transactional=header.is_transactional,
        control=control,
        coordinator_epoch=coordinator_epoch,
    )
