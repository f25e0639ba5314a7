"""Hypothesis strategies for records (shared by the storage tests)."""

from __future__ import annotations

from hypothesis import strategies as st

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

int16s = st.integers(-(2**15), 2**15 - 1)
int32s = st.integers(-(2**31), 2**31 - 1)
int64s = st.integers(-(2**63), 2**63 - 1)
# Short strings, any Unicode (surrogates cannot be UTF-8 encoded, so they are excluded).
texts = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
small_texts = st.sampled_from(["", "g", "g1", "topic", "é", "グループ"]) | texts
blobs = st.binary(max_size=16)

offset_commit_keys = st.builds(OffsetCommitKey, small_texts, small_texts, int32s)
group_keys = st.builds(GroupMetadataKey, small_texts)
event_keys = st.builds(RebalanceEventKey, small_texts)

offset_commit_values = st.builds(
    OffsetCommitValue,
    offset=int64s,
    leader_epoch=int32s,
    metadata=texts,
    commit_timestamp=int64s,
    expire_timestamp=st.just(-1) | int64s,
)
members = st.builds(
    MemberMetadata,
    member_id=texts,
    group_instance_id=st.none() | texts,
    client_id=texts,
    client_host=texts,
    rebalance_timeout=int32s,
    session_timeout=int32s,
    subscription=blobs,
    assignment=blobs,
)
group_values = st.builds(
    GroupMetadataValue,
    protocol_type=texts,
    generation=int32s,
    protocol=st.none() | texts,
    leader=st.none() | texts,
    current_state_timestamp=int64s,
    members=st.lists(members, max_size=3).map(tuple),
)
event_values = st.builds(
    RebalanceEventValue,
    event=st.sampled_from(["rebalance_start", "rebalance_end", "member_join", "member_leave"]),
    timestamp=int64s,
    generation=int32s,
    member_id=texts,
    group_instance_id=st.none() | texts,
    reason=texts,
    members=st.lists(texts, max_size=3).map(tuple),
)

records = st.one_of(
    st.builds(Record, offset_commit_keys, st.none() | offset_commit_values),
    st.builds(Record, group_keys, st.none() | group_values),
    st.builds(Record, event_keys, event_values),
)

# A small key space, so logs have overwrites and tombstones of the same keys.
few_keys = st.builds(
    OffsetCommitKey, st.sampled_from(["g1", "g2"]), st.just("t"), st.integers(0, 3)
)
overwriting_records = st.one_of(
    st.builds(Record, few_keys, st.none() | offset_commit_values),
    st.builds(
        Record,
        st.builds(GroupMetadataKey, st.sampled_from(["g1", "g2"])),
        st.none() | group_values,
    ),
)
