"""``parse_batches`` reads a batch header with one ``struct`` unpack
(``wire.records.BATCH_HEADER_FIELDS``); ``BATCH_HEADER`` (construct) is the declared layout.
They must read any 61 bytes alike, field by field, and ``parse_batches`` must report what
the declaration reads."""

from __future__ import annotations

import struct

from hypothesis import given
from hypothesis import strategies as st

from wire.records import (
    BATCH_HEADER,
    BATCH_HEADER_FIELDS,
    BATCH_OVERHEAD,
    LENGTH_END,
    parse_batches,
)

FIELDS = ("base_offset", "batch_length", "partition_leader_epoch", "magic", "crc",
          "attributes", "last_offset_delta", "base_timestamp", "max_timestamp", "producer_id",
          "producer_epoch", "base_sequence", "record_count")


def test_the_struct_covers_the_declared_header() -> None:
    assert BATCH_HEADER_FIELDS.size == BATCH_OVERHEAD == BATCH_HEADER.sizeof()
    assert [sub.name for sub in BATCH_HEADER.defersubcon.subcons] == list(FIELDS)


@given(st.binary(min_size=BATCH_OVERHEAD, max_size=BATCH_OVERHEAD))
def test_any_61_bytes_read_alike(header: bytes) -> None:
    declared = BATCH_HEADER.parse(header)
    assert BATCH_HEADER_FIELDS.unpack(header) == tuple(declared[name] for name in FIELDS)


@given(st.binary(min_size=BATCH_OVERHEAD, max_size=BATCH_OVERHEAD),
       st.binary(max_size=40), st.integers(0, 3))
def test_parse_batches_reports_the_declared_fields(
    header: bytes, records: bytes, position_batches: int
) -> None:
    # A well-formed v2 header: its length covers the records, magic 2, counts not negative.
    batch = bytearray(header) + records
    struct.pack_into(">i", batch, 8, len(batch) - LENGTH_END)
    batch[16] = 2
    struct.pack_into(">i", batch, 23, abs(struct.unpack_from(">i", batch, 23)[0]) >> 1)
    struct.pack_into(">i", batch, 57, abs(struct.unpack_from(">i", batch, 57)[0]) >> 1)
    blob = bytes(batch) * (position_batches + 1)
    parsed = parse_batches(blob, verify_crc=False)
    declared = BATCH_HEADER.parse(bytes(batch))
    assert [(h.position, h.size) for h in parsed] == [
        (i * len(batch), len(batch)) for i in range(position_batches + 1)]
    for found in parsed:
        for name in FIELDS:
            if name != "batch_length":
                assert getattr(found, name) == declared[name], name
