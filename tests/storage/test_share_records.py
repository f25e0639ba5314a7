"""The share coordinator's records (storage/share_records.py): hand-annotated golden bytes,
every field round-trips through the codec, and the dump/compaction view of their keys."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from storage import record_codec as codec
from storage.record_codec import decode_record, encode_record
from storage.record_types import RECORD_TYPES, SHARE_SNAPSHOT_KEY_VERSION, SHARE_UPDATE_KEY_VERSION
from storage.records import Record
from storage.share_records import (
    ShareSnapshotKey,
    ShareSnapshotValue,
    ShareStateBatch,
    ShareUpdateKey,
    ShareUpdateValue,
)

TOPIC_ID = uuid.UUID("00010203-0405-0607-0809-0a0b0c0d0e0f")

SNAPSHOT_KEY = bytes.fromhex(
    "0067"  # key version 103: ShareSnapshotKey
    "0001" "67"  # group_id "g" (int16 length)
    "000102030405060708090a0b0c0d0e0f"  # topic_id
    "00000003"  # partition 3
)
SNAPSHOT_VALUE = bytes.fromhex(
    "0000"  # value version 0 (flexible)
    "00000001"  # snapshot_epoch 1
    "00000002"  # state_epoch 2
    "00000000"  # leader_epoch 0
    "000000000000000a"  # start_offset 10
    "0000000000000005"  # create_timestamp 5
    "0000000000000006"  # write_timestamp 6
    "02"  # state_batches: compact array of 1
    "000000000000000a" "000000000000000c" "02" "0001" "00"  # 10-12 ACKNOWLEDGED x1, no tags
    "01" "00" "04" "00000003"  # one tagged field: tag 0 (delivery_complete_count), 4 bytes, 3
)
UPDATE_VALUE = bytes.fromhex(
    "0000"  # value version 0 (flexible)
    "00000001"  # snapshot_epoch 1
    "00000000"  # leader_epoch 0
    "000000000000000d"  # start_offset 13
    "01"  # state_batches: empty compact array
    "00"  # no tagged fields: delivery_complete_count is its default, -1
)


def test_golden_share_snapshot() -> None:
    record = Record(
        ShareSnapshotKey("g", TOPIC_ID, 3),
        ShareSnapshotValue(1, 2, 0, 10, 5, 6, (ShareStateBatch(10, 12, 2, 1),), 3),
    )
    assert encode_record(record) == (SNAPSHOT_KEY, SNAPSHOT_VALUE)
    assert decode_record(SNAPSHOT_KEY, SNAPSHOT_VALUE) == record


def test_golden_share_update() -> None:
    key = ShareUpdateKey("g", TOPIC_ID, 3)
    record = Record(key, ShareUpdateValue(1, 0, 13, ()))
    key_bytes, value_bytes = encode_record(record)
    assert key_bytes == b"\x00\x68" + SNAPSHOT_KEY[2:]  # key version 104, same fields
    assert value_bytes == UPDATE_VALUE
    assert decode_record(key_bytes, value_bytes) == record


def test_share_record_types_are_registered() -> None:
    assert RECORD_TYPES[SHARE_SNAPSHOT_KEY_VERSION].key_type is ShareSnapshotKey
    assert RECORD_TYPES[SHARE_UPDATE_KEY_VERSION].value_type is ShareUpdateValue
    assert codec.decode_key(SNAPSHOT_KEY) == ShareSnapshotKey("g", TOPIC_ID, 3)


_INT16 = st.integers(-(2**15), 2**15 - 1)
_INT32 = st.integers(-(2**31), 2**31 - 1)
_INT64 = st.integers(-(2**63), 2**63 - 1)
_BATCHES = st.lists(
    st.builds(ShareStateBatch, _INT64, _INT64, st.sampled_from([0, 1, 2, 4]), _INT16),
    max_size=4,
).map(tuple)
_KEY_FIELDS = (st.text(max_size=20), st.uuids(), _INT32)


@given(
    st.one_of(
        st.builds(
            Record,
            st.builds(ShareSnapshotKey, *_KEY_FIELDS),
            st.none() | st.builds(
                ShareSnapshotValue, _INT32, _INT32, _INT32, _INT64, _INT64, _INT64, _BATCHES,
                _INT32,
            ),
        ),
        st.builds(
            Record,
            st.builds(ShareUpdateKey, *_KEY_FIELDS),
            st.none() | st.builds(ShareUpdateValue, _INT32, _INT32, _INT64, _BATCHES, _INT32),
        ),
    )
)
def test_share_record_round_trip(record: Record) -> None:
    key, value = encode_record(record)
    assert decode_record(key, value) == record


def test_dump_shows_share_records(tmp_path: object) -> None:
    import io
    import json
    import os

    from storage.dump import main
    from storage.log import Log

    data_dir = os.path.join(str(tmp_path), "d")
    snapshot = Record(
        ShareSnapshotKey("sg", TOPIC_ID, 0),
        ShareSnapshotValue(0, 0, 0, 5, 1, 2, (ShareStateBatch(5, 6, 2, 1),), 2),
    )
    update = Record(ShareUpdateKey("sg", TOPIC_ID, 0), ShareUpdateValue(0, 0, 7, ()))
    with Log.open(data_dir) as log:
        log.append([snapshot, update])
    out, err = io.StringIO(), io.StringIO()
    assert main([data_dir, "--json"], out, err) == 0
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert (first["type"], first["key_version"]) == ("share_snapshot", 103)
    assert first["key"] == {"group_id": "sg", "topic_id": str(TOPIC_ID), "partition": 0}
    assert first["value"]["state_batches"] == [
        {"first_offset": 5, "last_offset": 6, "delivery_state": 2, "delivery_count": 1}]
    assert (second["type"], second["value"]["start_offset"]) == ("share_update", 7)
