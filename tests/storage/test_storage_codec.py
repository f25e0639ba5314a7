"""record_codec: Kafka's __consumer_offsets key/value schemas, every version."""

from __future__ import annotations

import contextlib
import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st
from storage_strategies import (
    event_keys,
    event_values,
    group_keys,
    group_values,
    int64s,
    offset_commit_keys,
    offset_commit_values,
    records,
    texts,
)

from storage import record_codec as codec
from storage.record_codec import (
    RecordDecodeError,
    RecordEncodeError,
    UnknownKey,
    decode_key,
    decode_record,
    decode_value,
    encode_key,
    encode_record,
    encode_value,
)
from storage.records import (
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    RebalanceEventKey,
    RebalanceEventValue,
    Record,
)

# ------------------------------------------------------------------------------------
# Golden bytes, derived by hand from the Kafka JSON schemas (one comment per field).

OFFSET_COMMIT_KEY_V1 = bytes.fromhex(
    "0001"  # key version 1: OffsetCommitKey
    "0002 6731"  # group: STRING "g1"
    "0001 74"  # topic: STRING "t"
    "00000007"  # partition: int32 7
)

OFFSET_COMMIT_VALUE_V3 = bytes.fromhex(
    "0003"  # value version 3
    "000000000000002a"  # offset: int64 42
    "00000005"  # leader_epoch: int32 5
    "0002 6d64"  # metadata: STRING "md"
    "0000018bcfe56800"  # commit_timestamp: int64 1700000000000
)

OFFSET_COMMIT_VALUE_V1 = bytes.fromhex(
    "0001"  # value version 1
    "000000000000002a"  # offset: int64 42
    "0000"  # metadata: STRING ""
    "0000018bcfe56800"  # commit_timestamp: int64 1700000000000
    "0000018bd50bc400"  # expire_timestamp: int64 1700000000000 + 86400000 (v1 only)
)

GROUP_METADATA_KEY_V2 = bytes.fromhex(
    "0002"  # key version 2: GroupMetadataKey
    "0002 6731"  # group: STRING "g1"
)

GROUP_METADATA_VALUE_V3 = bytes.fromhex(
    "0003"  # value version 3
    "0008 636f6e73756d6572"  # protocol_type: STRING "consumer"
    "00000007"  # generation: int32 7
    "0005 72616e6765"  # protocol: NULLABLE_STRING "range"
    "0002 6d31"  # leader: NULLABLE_STRING "m1"
    "0000018bcfe56800"  # current_state_timestamp: int64 1700000000000 (v2+)
    "00000001"  # members: ARRAY count 1
    "0002 6d31"  # . member_id: STRING "m1"
    "0002 6931"  # . group_instance_id: NULLABLE_STRING "i1" (v3+)
    "0001 63"  # . client_id: STRING "c"
    "0002 2f68"  # . client_host: STRING "/h"
    "000493e0"  # . rebalance_timeout: int32 300000 (v1+)
    "00002710"  # . session_timeout: int32 10000
    "00000002 0102"  # . subscription: BYTES 01 02
    "00000000"  # . assignment: BYTES (empty)
)

GROUP_METADATA_VALUE_V4 = bytes.fromhex(
    "0004"  # value version 4 (flexible)
    "09 636f6e73756d6572"  # protocol_type: COMPACT_STRING "consumer" (uvarint 8+1)
    "00000007"  # generation: int32 7
    "00"  # protocol: COMPACT_NULLABLE_STRING null
    "03 6d31"  # leader: COMPACT_NULLABLE_STRING "m1"
    "ffffffffffffffff"  # current_state_timestamp: int64 -1
    "02"  # members: COMPACT_ARRAY count 1 (uvarint 1+1)
    "03 6d31"  # . member_id "m1"
    "00"  # . group_instance_id null
    "02 63"  # . client_id "c"
    "03 2f68"  # . client_host "/h"
    "000493e0"  # . rebalance_timeout 300000
    "00002710"  # . session_timeout 10000
    "03 0102"  # . subscription: COMPACT_BYTES 01 02
    "01"  # . assignment: COMPACT_BYTES (empty)
    "00"  # . member tagged fields: none
    "00"  # tagged fields: none
)

MEMBER = MemberMetadata(
    member_id="m1",
    group_instance_id="i1",
    client_id="c",
    client_host="/h",
    rebalance_timeout=300_000,
    session_timeout=10_000,
    subscription=b"\x01\x02",
    assignment=b"",
)
GROUP_VALUE = GroupMetadataValue("consumer", 7, "range", "m1", 1_700_000_000_000, (MEMBER,))


def test_golden_offset_commit_key() -> None:
    key = OffsetCommitKey("g1", "t", 7)
    assert encode_key(key) == OFFSET_COMMIT_KEY_V1
    assert codec.encode_key_by_schema(key) == OFFSET_COMMIT_KEY_V1
    assert decode_key(OFFSET_COMMIT_KEY_V1) == key


def test_golden_offset_commit_value_v3() -> None:
    value = OffsetCommitValue(42, 5, "md", 1_700_000_000_000)
    assert encode_value(value) == OFFSET_COMMIT_VALUE_V3  # writer picks v3: no expire
    assert codec.encode_value_by_schema(value, 3) == OFFSET_COMMIT_VALUE_V3
    assert decode_value(OffsetCommitKey("g", "t", 0), OFFSET_COMMIT_VALUE_V3) == value


def test_golden_offset_commit_value_v1_when_expire_timestamp() -> None:
    value = OffsetCommitValue(42, -1, "", 1_700_000_000_000, 1_700_086_400_000)
    assert encode_value(value) == OFFSET_COMMIT_VALUE_V1  # writer picks v1: expire set
    assert decode_value(OffsetCommitKey("g", "t", 0), OFFSET_COMMIT_VALUE_V1) == value


def test_golden_group_metadata_key_and_value_v3() -> None:
    assert encode_key(GroupMetadataKey("g1")) == GROUP_METADATA_KEY_V2
    assert encode_value(GROUP_VALUE) == GROUP_METADATA_VALUE_V3
    assert decode_value(GroupMetadataKey("g1"), GROUP_METADATA_VALUE_V3) == GROUP_VALUE


def test_golden_group_metadata_value_v4_flexible() -> None:
    member = MemberMetadata("m1", None, "c", "/h", 300_000, 10_000, b"\x01\x02", b"")
    value = GroupMetadataValue("consumer", 7, None, "m1", -1, (member,))
    assert encode_value(value, 4) == GROUP_METADATA_VALUE_V4
    assert decode_value(GroupMetadataKey("g"), GROUP_METADATA_VALUE_V4) == value


def test_golden_tombstone_and_record() -> None:
    record = Record(OffsetCommitKey("g1", "t", 7), None)
    assert encode_record(record) == (OFFSET_COMMIT_KEY_V1, None)
    assert decode_record(OFFSET_COMMIT_KEY_V1, None) == record


# ------------------------------------------------------------------------------------
# Every type and version round-trips.


@given(records)
def test_record_round_trip(record: Record) -> None:
    key, value = encode_record(record)
    expected = record
    if isinstance(record.value, OffsetCommitValue) and record.value.expire_timestamp != -1:
        # Kafka writes v1 when an expire timestamp is set; v1 has no leader epoch.
        expected = Record(record.key, _expected_offset_value(record.value, 1))
    assert decode_record(key, value) == expected


@pytest.mark.parametrize("version", [0, 1])
@given(key=offset_commit_keys)
def test_offset_commit_key_versions(version: int, key: OffsetCommitKey) -> None:
    data = encode_key(key, version)
    assert data[:2] == version.to_bytes(2, "big")
    assert data == codec.encode_key_by_schema(key, version)
    assert decode_key(data) == key


@given(key=st.one_of(group_keys, event_keys))
def test_group_and_event_keys(key: GroupMetadataKey | RebalanceEventKey) -> None:
    data = encode_key(key)
    assert data == codec.encode_key_by_schema(key)
    assert decode_key(data) == key


def _expected_offset_value(value: OffsetCommitValue, version: int) -> OffsetCommitValue:
    """What survives a write in ``version``: fields the version lacks take defaults."""
    return OffsetCommitValue(
        offset=value.offset,
        leader_epoch=value.leader_epoch if version >= 3 else -1,
        metadata=value.metadata,
        commit_timestamp=value.commit_timestamp,
        expire_timestamp=value.expire_timestamp if version == 1 else -1,
    )


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
@given(value=offset_commit_values)
def test_offset_commit_value_versions(version: int, value: OffsetCommitValue) -> None:
    data = encode_value(value, version)
    assert data is not None
    assert data == codec.encode_value_by_schema(value, version)
    key = OffsetCommitKey("g", "t", 0)
    decoded = decode_value(key, data)
    assert decoded == _expected_offset_value(value, version)
    # The schema path and the struct fast path agree.
    assert codec.decode_value_by_schema(OffsetCommitKey("g", "t", 0), data) == decoded


def _expected_group_value(value: GroupMetadataValue, version: int) -> GroupMetadataValue:
    members = tuple(
        MemberMetadata(
            m.member_id,
            m.group_instance_id if version >= 3 else None,
            m.client_id,
            m.client_host,
            m.rebalance_timeout if version >= 1 else m.session_timeout,
            m.session_timeout,
            m.subscription,
            m.assignment,
        )
        for m in value.members
    )
    return GroupMetadataValue(
        value.protocol_type,
        value.generation,
        value.protocol,
        value.leader,
        value.current_state_timestamp if version >= 2 else -1,
        members,
    )


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
@given(value=group_values)
def test_group_metadata_value_versions(version: int, value: GroupMetadataValue) -> None:
    data = encode_value(value, version)
    assert data is not None
    assert decode_value(GroupMetadataKey("g"), data) == _expected_group_value(value, version)


@given(value=event_values)
def test_rebalance_event_value(value: RebalanceEventValue) -> None:
    data = encode_value(value)
    assert data is not None and data[:2] == b"\x00\x00"
    assert decode_value(RebalanceEventKey("g"), data) == value


def test_writer_versions_are_kafkas() -> None:
    assert encode_key(OffsetCommitKey("g", "t", 0))[:2] == b"\x00\x01"
    assert encode_key(GroupMetadataKey("g"))[:2] == b"\x00\x02"
    assert encode_key(RebalanceEventKey("g"))[:2] == (100).to_bytes(2, "big")
    assert codec.value_version_for(OffsetCommitValue(1)) == 3
    assert codec.value_version_for(OffsetCommitValue(1, expire_timestamp=5)) == 1
    assert codec.value_version_for(GROUP_VALUE) == 3


# ------------------------------------------------------------------------------------
# Defaults of old versions, unknown and future versions, bad bytes.


def test_defaults_for_old_versions() -> None:
    # OffsetCommitValue v0: offset 1, metadata "", commit_timestamp 2.
    v0 = bytes.fromhex("0000 0000000000000001 0000 0000000000000002")
    assert decode_value(OffsetCommitKey("g", "t", 0), v0) == OffsetCommitValue(1, -1, "", 2, -1)
    # GroupMetadataValue v0 with one member: no rebalance timeout, no instance id.
    gv0 = bytes.fromhex(
        "0000 0001 63 00000001 ffff ffff 000000010001 6d 0001 63 0001 68 00001388 00000000 00000000"
    )
    value = decode_value(GroupMetadataKey("g"), gv0)
    assert value == GroupMetadataValue(
        "c", 1, None, None, -1, (MemberMetadata("m", None, "c", "h", 5000, 5000, b"", b""),)
    )


def test_unknown_key_version_is_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    key = bytes.fromhex("0004 0002 6733")  # version 4: ConsumerGroupPartitionMetadata (unused)
    assert decode_key(key) == UnknownKey(4, key)
    codec._warned_key_versions.discard(4)
    with caplog.at_level(logging.WARNING, logger="storage.record_codec"):
        assert decode_record(key, b"\x00\x00anything") is None
        assert decode_record(key, None) is None
    assert [r.message for r in caplog.records] == ["skipping records with unknown key version 4"]


def test_key_versions_negative_and_large_are_unknown() -> None:
    for version in (-1, 16, 99, 110, 32767):
        data = version.to_bytes(2, "big", signed=True) + b"xyz"
        assert decode_key(data) == UnknownKey(version, data)


def test_future_value_version_reads_as_newest_flexible() -> None:
    data = encode_value(OffsetCommitValue(9, 1, "m", 3), 4)
    assert data is not None
    future = b"\x00\x05" + data[2:-1] + bytes.fromhex("01 07 02 abcd")  # + a tag
    assert decode_value(OffsetCommitKey("g", "t", 0), future) == OffsetCommitValue(9, 1, "m", 3)


@given(st.binary(max_size=40))
def test_garbage_values_raise_only_record_decode_error(data: bytes) -> None:
    for key in (OffsetCommitKey("g", "t", 0), GroupMetadataKey("g"), RebalanceEventKey("g")):
        with contextlib.suppress(RecordDecodeError):
            decode_value(key, data)


@given(st.binary(max_size=24))
def test_garbage_keys_raise_only_record_decode_error(data: bytes) -> None:
    with contextlib.suppress(RecordDecodeError):
        decode_key(data)


@pytest.mark.parametrize(
    "data",
    [
        OFFSET_COMMIT_VALUE_V3 + b"\x00",  # trailing byte
        OFFSET_COMMIT_VALUE_V3[:-1],  # short
        b"\x00\x03" + b"\x00" * 12 + b"\xff\xfe",  # negative metadata length
        b"\x00\x03" + b"\x00" * 12 + b"\x00\x02\xff\xfe" + b"\x00" * 8,  # not UTF-8
        b"\xff\xff",  # negative version
        b"\x00",  # no version
    ],
)
def test_bad_offset_commit_values(data: bytes) -> None:
    with pytest.raises(RecordDecodeError):
        decode_value(OffsetCommitKey("g", "t", 0), data)


@given(texts, texts, int64s)
def test_fast_path_matches_schema_on_keys(group: str, topic: str, n: int) -> None:
    key = OffsetCommitKey(group, topic, n % 2**31)
    data = encode_key(key)
    assert data == codec.encode_key_by_schema(key)
    assert codec._decode_offset_commit_key_fast(data) == codec.decode_key_by_schema(data) == key


def test_encode_errors() -> None:
    with pytest.raises(RecordEncodeError):
        encode_record(Record(OffsetCommitKey("g", "t", 0), GROUP_VALUE))  # wrong value type
    with pytest.raises(RecordEncodeError):
        encode_key(OffsetCommitKey("g" * 40_000, "t", 0))  # longer than int16 strings
    with pytest.raises(RecordEncodeError):
        encode_key(OffsetCommitKey("g", "t", 2**31))  # partition out of int32
    with pytest.raises(RecordEncodeError):
        encode_value(OffsetCommitValue(2**63))  # offset out of int64
    with pytest.raises(RecordEncodeError):
        encode_value(OffsetCommitValue(1), 5)  # no such version
    with pytest.raises(RecordEncodeError):
        encode_value(GroupMetadataValue("c", 2**31, None, None, -1))
    with pytest.raises(RecordEncodeError):
        encode_value(OffsetCommitValue(1, metadata="m" * 40_000))
