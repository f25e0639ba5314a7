"""EncodedBatch.encode's OffsetCommit fast path writes the bytes of the general encoder.

The oracle is the schema path (``encode_key_by_schema``/``encode_value_by_schema``) framed
by ``segment.encode_entry``: every field combination, in batches mixed with other records,
gives the same entry bytes and the same (key, size, tombstone) statistics, and whatever
the general encoder rejects the batch encoder rejects with the same error.
"""

from __future__ import annotations

import dataclasses
from dataclasses import FrozenInstanceError

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from storage_strategies import int32s, int64s, records

from storage import batch as batch_module
from storage.batch import EncodedBatch
from storage.key_ints import KeyInts
from storage.record_codec import (
    RecordEncodeError,
    decode_record,
    encode_key_by_schema,
    encode_record,
    encode_value_by_schema,
    value_version_for,
)
from storage.records import OffsetCommitKey, OffsetCommitValue, Record, offset_commit_record
from storage.segment import encode_entry, scan_entries
from storage.segment_summary import SegmentSummary

names = st.sampled_from(["", "g", "topic", "é", "グループ", "x" * 300]) | st.text(
    st.characters(exclude_categories=["Cs"]), max_size=40
)
metadata = (
    st.sampled_from(["", "m", "ü" * 10, "m" * 0x7FFF, "é" * 0x3FFF])
    | st.text(st.characters(exclude_categories=["Cs"]), max_size=60)
)
commit_records = st.builds(
    Record,
    st.builds(OffsetCommitKey, names, names, int32s | st.sampled_from([0, -1, 2**31 - 1])),
    st.builds(
        OffsetCommitValue,
        offset=int64s | st.sampled_from([0, -1]),
        leader_epoch=st.just(-1) | int32s,
        metadata=metadata,
        commit_timestamp=int64s,
        expire_timestamp=st.just(-1) | int64s,
    ),
)


def _oracle(records: list[Record]) -> tuple[bytes, tuple[tuple[bytes, int, bool], ...]]:
    """The entries and statistics through the schema path, record by record."""
    data = b""
    keys = []
    for record in records:
        key = encode_key_by_schema(record.key)
        value = (
            None
            if record.value is None
            else encode_value_by_schema(record.value, value_version_for(record.value))
        )
        entry = encode_entry(key, value)
        data += entry
        keys.append((key, len(entry), value is None))
    return data, tuple(keys)


# The schema path builds 32 KiB strings with construct: slow on a loaded machine.
_UNHURRIED = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_UNHURRIED
@given(st.lists(commit_records | records, max_size=8))
def test_batch_bytes_match_the_schema_path(batch: list[Record]) -> None:
    encoded = EncodedBatch.encode(batch)
    assert (encoded.data, encoded.entry_keys()) == _oracle(batch)
    assert encoded.count == len(batch)
    scanned = scan_entries(encoded.data)
    assert scanned.stop is None
    assert [k for k, _ in scanned.entries] == [k for k, _, _ in encoded.entry_keys()]
    # v3 (no expire timestamp) keeps every field; v1 has no leader epoch.
    for (key, value), record in zip(scanned.entries, batch, strict=True):
        if record.value is None or getattr(record.value, "expire_timestamp", -1) == -1:
            assert decode_record(key, value) == record


@_UNHURRIED
@given(commit_records)
def test_commit_record_bytes_match_the_schema_path(record: Record) -> None:
    # The same key twice: the second one comes from the (group, topic) prefix cache.
    encoded = EncodedBatch.encode([record, record])
    assert (encoded.data, encoded.entry_keys()) == _oracle([record, record])


def test_golden_offset_commit_entry() -> None:
    """One entry's bytes spelled out (framing, key v1, value v3)."""
    record = Record(OffsetCommitKey("g", "t", 2), OffsetCommitValue(7, 3, "m", 9))
    body = (
        b"\x00\x01"  # entry format version
        + b"\x00\x00\x00\x0c"  # key length 12
        + b"\x00\x01\x00\x01g\x00\x01t\x00\x00\x00\x02"  # key v1: group, topic, partition
        + b"\x00\x00\x00\x19"  # value length 25
        + b"\x00\x03" + (7).to_bytes(8, "big") + (3).to_bytes(4, "big")  # v3 offset epoch
        + b"\x00\x01m" + (9).to_bytes(8, "big")  # metadata, commit timestamp
    )
    assert EncodedBatch.encode([record]).data == encode_entry(body[6:18], body[22:])
    assert EncodedBatch.encode([record]).data[8:] == body


@pytest.mark.parametrize(
    "record",
    [
        Record(OffsetCommitKey("g", "t", 2**31), OffsetCommitValue(1)),
        Record(OffsetCommitKey("g", "t", -(2**31) - 1), OffsetCommitValue(1)),
        Record(OffsetCommitKey("g" * 40_000, "t", 0), OffsetCommitValue(1)),
        Record(OffsetCommitKey("g", "é" * 20_000, 0), OffsetCommitValue(1)),
        Record(OffsetCommitKey("g", "t", 0), OffsetCommitValue(2**63)),
        Record(OffsetCommitKey("g", "t", 0), OffsetCommitValue(1, leader_epoch=2**31)),
        Record(OffsetCommitKey("g", "t", 0), OffsetCommitValue(1, commit_timestamp=-(2**63) - 1)),
        Record(OffsetCommitKey("g", "t", 0), OffsetCommitValue(1, metadata="m" * 0x8000)),
        Record(OffsetCommitKey("g", "t", 0), OffsetCommitValue(1, metadata="é" * 0x4000)),
    ],
)
def test_out_of_range_fields_raise_record_encode_error(record: Record) -> None:
    with pytest.raises(RecordEncodeError) as general:
        encode_record(record)
    with pytest.raises(RecordEncodeError) as batch:
        EncodedBatch.encode([Record(OffsetCommitKey("g", "t", 1), OffsetCommitValue(1)), record])
    assert str(batch.value) == str(general.value)


@pytest.mark.parametrize(
    "record",
    [
        Record(OffsetCommitKey("g\ud800", "t", 0), OffsetCommitValue(1)),
        Record(OffsetCommitKey("g", "t", 0), OffsetCommitValue(1, metadata="\udfff")),
    ],
)
def test_unencodable_strings_raise_as_the_general_encoder_does(record: Record) -> None:
    with pytest.raises(ValueError) as general:
        encode_record(record)
    with pytest.raises(ValueError) as batch:
        EncodedBatch.encode([record])
    assert (type(batch.value), str(batch.value)) == (type(general.value), str(general.value))


def test_prefix_cache_stays_bounded_and_right(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch_module._KEY_PREFIXES, "limit", 8)
    batch = [
        Record(OffsetCommitKey(f"group-{i % 20}", f"topic-{i % 3}", i), OffsetCommitValue(i))
        for i in range(200)
    ]
    encoded = EncodedBatch.encode(batch)
    assert (encoded.data, encoded.entry_keys()) == _oracle(batch)
    assert len(batch_module._KEY_PREFIXES) <= 8


# Runs of one (group, topic) broken by others and by records the general path takes (an
# expire timestamp, a tombstone): the encoder keeps the last (group, topic)'s prefix.
_few_names = st.sampled_from(["g", "h", "é"])
run_records = st.builds(
    Record,
    st.builds(OffsetCommitKey, _few_names, _few_names,  # a negative or lone high one too
              st.sampled_from([0, 1, 2, 3, 0, 1, 2, 3, -1, 200])),
    st.none() | st.builds(
        OffsetCommitValue,
        offset=st.integers(0, 10),
        metadata=st.sampled_from(["", "m", "ü"]),
        commit_timestamp=st.integers(0, 10),
        expire_timestamp=st.sampled_from([-1, -1, -1, 5]),
    ),
)


@_UNHURRIED
@given(st.lists(run_records, max_size=40))
def test_runs_of_one_group_and_topic_match_the_schema_path(batch: list[Record]) -> None:
    encoded = EncodedBatch.encode(batch)
    assert (encoded.data, encoded.entry_keys()) == _oracle(batch)
    assert encoded.count == len(batch)


def test_a_refused_record_leaves_the_next_ones_right() -> None:
    """A record the fast path cannot write, then more of the same (group, topic): after
    the general encoder's error the batch is not half-written (it raises), and a batch
    without the bad record still matches."""
    good = [Record(OffsetCommitKey("g", "t", i), OffsetCommitValue(i)) for i in range(3)]
    bad = Record(OffsetCommitKey("g", "t", 2**31), OffsetCommitValue(1))
    with pytest.raises(RecordEncodeError):
        EncodedBatch.encode([*good, bad, *good])
    encoded = EncodedBatch.encode([*good, *good])
    assert (encoded.data, encoded.entry_keys()) == _oracle([*good, *good])


@given(commit_records)
def test_offset_commit_record_is_the_dataclasses(record: Record) -> None:
    """``offset_commit_record`` (the commit hot path's builder) gives the very objects the
    constructors give: equal, hashing alike, frozen, same repr."""
    key = record.key
    value = record.value
    assert isinstance(key, OffsetCommitKey) and isinstance(value, OffsetCommitValue)
    built = offset_commit_record(key.group, key.topic, key.partition, value.offset,
                                 value.leader_epoch, value.metadata, value.commit_timestamp,
                                 value.expire_timestamp)
    assert built == record and hash(built) == hash(record) and repr(built) == repr(record)
    assert type(built.key) is OffsetCommitKey and type(built.value) is OffsetCommitValue
    with pytest.raises(FrozenInstanceError):
        built.key.partition = 1  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        built.value.offset = 1  # type: ignore[misc, union-attr]


@_UNHURRIED
@given(st.lists(run_records | records, max_size=12), st.lists(run_records | records,
                                                                max_size=12))
def test_commit_batches_account_as_every_batch(earlier: list[Record],
                                               batch: list[Record]) -> None:
    """``commits`` is set exactly when every record is a live offset commit the fast path
    framed, and its shortcuts in the log's accounting and the segment summary leave the
    same live bytes, history bytes and summary as classifying every key (the batch also
    commits again the keys of the earlier one's commits)."""
    batch = [r for r in earlier if type(r.value) is OffsetCommitValue] + batch
    encoded = EncodedBatch.encode(batch)
    assert encoded.commits == (bool(batch) and all(
        type(r.key) is OffsetCommitKey and type(r.value) is OffsetCommitValue
        and r.value.expire_timestamp == -1 for r in batch))
    general = dataclasses.replace(encoded, keys=encoded.entry_keys(), commits=False,
                                  commit_keys=())
    before = EncodedBatch.encode(earlier)
    lives = [KeyInts(), KeyInts()]
    summaries = [SegmentSummary.new_segment(0), SegmentSummary.new_segment(0)]
    outcomes = []
    for live, summary, each in zip(lives, summaries, (encoded, general), strict=True):
        before.account(live)
        summary.add_entries(before.entry_keys(), before.count, before.data)
        if each.commits:  # as the log writes a commit batch: both maps in one pass
            outcomes.append((summary.add_commits(each, live), 0))
        else:
            outcomes.append(each.account(live))
            summary.add_entries(each.keys, each.count, each.data)
    alone = KeyInts()  # a commit batch without a summary (the log has none to build)
    before.account(alone)
    assert encoded.account(alone) == outcomes[1]
    assert dict(alone.items()) == dict(lives[1].items())
    assert outcomes[0] == outcomes[1]
    assert dict(lives[0].items()) == dict(lives[1].items())
    assert summaries[0] == summaries[1]
    both = EncodedBatch.concat([before, encoded])
    assert both.commits == (before.commits and encoded.commits)
    assert both.entry_keys() == before.entry_keys() + encoded.entry_keys()
