"""Property: replaying only the live set (``Log.replay_live``) leaves exactly the state that
replaying every record (``Log.replay``) leaves.

Random logs of every record type kcoord writes -- offset commits (key v1, and v0 keys that
decode equal to v1 ones), group metadata, the five consumer group record types, transaction
state, staged transactional offsets, rebalance history -- over a small key space, so keys
are overwritten and tombstoned, in batches through the REAL log with segments of a few
hundred bytes. Then both replays are applied to what the server applies them to: the
coordinator's record store (offsets, classic groups, consumer group records in log order,
staged transactional offsets), the transaction coordinator's last-per-id metadata and the
producer-id high-water mark every transaction-state record raises. The compaction
statistics both replays rebuild must agree too, and the live records must be a subsequence
of all records. Logs are reopened with and without the live index, appended to after open,
and compacted, so every way ``replay_live`` completes or rebuilds its index is exercised.

Closed segments get summaries (``storage/segment_summary.py``) when they roll, when
compaction writes them and when open checks one without; steps also delete every summary
(an old log). At the end, what open learns (segments, live index, live replay) with the
summaries left is exactly what it learns checking every segment entry by entry.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coordinator.core.store import HardState
from storage.batch import EncodedBatch
from storage.compaction import CompactionPolicy, compact
from storage.log import Log
from storage.record_codec import encode_key_by_schema, encode_value
from storage.records import (
    ConsumerGroupCurrentMemberAssignmentKey,
    ConsumerGroupCurrentMemberAssignmentValue,
    ConsumerGroupMemberMetadataKey,
    ConsumerGroupMemberMetadataValue,
    ConsumerGroupMetadataKey,
    ConsumerGroupMetadataValue,
    ConsumerGroupTargetAssignmentMemberKey,
    ConsumerGroupTargetAssignmentMemberValue,
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    RebalanceEventKey,
    RebalanceEventValue,
    Record,
    TopicPartitions,
    TransactionStateKey,
    TransactionStateValue,
    TxnOffsetCommitKey,
    TxnOffsetCommitValue,
)
from storage.segment import encode_entry

GROUPS = st.sampled_from(["g1", "g2"])
MEMBERS = st.sampled_from(["m1", "m2"])
SMALL = st.integers(0, 5)
TOPIC_ID = uuid.UUID(int=7)


def _maybe(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | values


RECORDS = st.one_of(
    st.builds(
        Record,
        st.builds(OffsetCommitKey, GROUPS, st.just("t"), st.integers(0, 2)),
        _maybe(st.builds(OffsetCommitValue, SMALL, SMALL, st.sampled_from(["", "m"]), SMALL)),
    ),
    st.builds(
        Record,
        st.builds(GroupMetadataKey, GROUPS),
        _maybe(st.builds(GroupMetadataValue, st.just("consumer"), SMALL, st.just("range"),
                         st.none(), SMALL, st.just(()))),
    ),
    st.builds(
        Record,
        st.builds(ConsumerGroupMetadataKey, GROUPS),
        _maybe(st.builds(ConsumerGroupMetadataValue, SMALL)),
    ),
    st.builds(
        Record,
        st.builds(ConsumerGroupMemberMetadataKey, GROUPS, MEMBERS),
        _maybe(st.builds(ConsumerGroupMemberMetadataValue, st.none(), st.none(), st.just("c"),
                         st.just("/h"), st.just(("t",)), st.none(), SMALL, st.none())),
    ),
    st.builds(
        Record,
        st.builds(ConsumerGroupTargetAssignmentMemberKey, GROUPS, MEMBERS),
        _maybe(st.builds(ConsumerGroupTargetAssignmentMemberValue,
                         st.just((TopicPartitions(TOPIC_ID, (0, 1)),)))),
    ),
    st.builds(
        Record,
        st.builds(ConsumerGroupCurrentMemberAssignmentKey, GROUPS, MEMBERS),
        _maybe(st.builds(ConsumerGroupCurrentMemberAssignmentValue, SMALL, SMALL, st.just(0),
                         st.just(()), st.just(()))),
    ),
    st.builds(
        Record,
        st.builds(TransactionStateKey, st.sampled_from(["tx1", "tx2"])),
        _maybe(st.builds(TransactionStateValue, st.integers(0, 50), SMALL, st.just(60_000),
                         st.integers(0, 7), st.just(()), SMALL, SMALL, st.just(-1),
                         st.just(-1), st.just(0))),
    ),
    st.builds(
        Record,
        st.builds(TxnOffsetCommitKey, st.integers(1, 2), GROUPS, st.just("t"), st.integers(0, 1)),
        _maybe(st.builds(TxnOffsetCommitValue, SMALL, SMALL, st.just(""), SMALL)),
    ),
    st.builds(
        Record,
        st.builds(RebalanceEventKey, GROUPS),
        _maybe(st.builds(RebalanceEventValue, st.just("rebalance_start"), SMALL, SMALL)),
    ),
)

# (records, written as one batch | "v0": the record with an OffsetCommitKey v0 key |
#  "reopen" with or without the live index | "compact")
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("batch"), st.lists(RECORDS, min_size=1, max_size=6)),
        st.tuples(st.just("v0"), st.builds(
            Record,
            st.builds(OffsetCommitKey, GROUPS, st.just("t"), st.integers(0, 2)),
            _maybe(st.builds(OffsetCommitValue, SMALL, SMALL, st.just(""), SMALL)),
        )),
        st.tuples(st.just("reopen"), st.booleans()),
        st.tuples(st.just("compact"), st.booleans()),
        st.tuples(st.just("unsummarise"), st.none()),
    ),
    max_size=30,
)


def _state(records: list[Record]) -> tuple[Any, ...]:
    """What the server's replay leaves: the record store, the transaction coordinator's
    metadata (last per id) and the producer-id high-water mark."""
    store = HardState()
    transactions: dict[str, Any] = {}
    reserved = -1
    for record in records:
        if isinstance(record.key, TransactionStateKey):
            transactions[record.key.transactional_id] = record.value
            if isinstance(record.value, TransactionStateValue):
                reserved = max(reserved, record.value.producer_id)
        else:
            store.apply(record)
    consumer_order = {group: list(recs) for group, recs in store.consumer.items()}
    return store.snapshot(), consumer_order, transactions, reserved


def _write_v0(log: Log, record: Record) -> None:
    """Append ``record`` with its OffsetCommitKey encoded as key version 0."""
    key = encode_key_by_schema(record.key, 0)
    value = None if record.value is None else encode_value(record.value)
    entry = encode_entry(key, value)
    log.write_batch(EncodedBatch(entry, 1, ((key, len(entry), value is None),)))


def _is_subsequence(part: list[Record], whole: list[Record]) -> bool:
    it = iter(whole)
    return all(any(r == w for w in it) for r in part)


def _drop_summaries(path: str) -> int:
    names = [n for n in os.listdir(path) if n.endswith(".summary")]
    for name in names:
        os.unlink(os.path.join(path, name))
    return len(names)


def _opened(path: str, segment_bytes: int) -> tuple[Any, ...]:
    """What open learns: segments, the live index, the live replay and its statistics."""
    with Log.open(path, fsync="never", segment_bytes=segment_bytes, live_index=True) as log:
        index = log._live_index
        assert index is not None
        learnt = (
            [(s.base, s.size, s.count, s.verified) for s in log.segments],
            dict(index.newest), sorted(index.kept), index.event_bytes, dict(index.covered),
            index.complete,
        )
        return learnt, list(log.replay_live()), log.live_bytes, log.event_bytes


def _check(log: Log) -> None:
    live = list(log.replay_live())
    live_stats = (log.live_bytes, log.event_bytes)
    every = list(log.replay())
    assert (log.live_bytes, log.event_bytes) == live_stats
    assert _is_subsequence(live, every)
    assert not any(isinstance(r.key, RebalanceEventKey) for r in live)
    assert _state(live) == _state(every)


@settings(max_examples=40, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(steps=STEPS, segment_bytes=st.sampled_from([200, 600, 1 << 20]))
def test_live_replay_leaves_the_state_full_replay_leaves(
    steps: list[tuple[Any, Any]], segment_bytes: int
) -> None:
    with tempfile.TemporaryDirectory(prefix="kcoord-live-") as tmp:
        path = os.path.join(tmp, "data")

        def reopen(indexed: bool) -> Log:
            return Log.open(path, fsync="never", segment_bytes=segment_bytes,
                            live_index=indexed)

        log = reopen(True)
        try:
            for step, arg in steps:
                if step == "batch":
                    log.append(arg)
                elif step == "v0":
                    _write_v0(log, arg)
                elif step == "reopen":
                    log.close()
                    log = reopen(arg)
                elif step == "unsummarise":
                    _drop_summaries(path)
                else:
                    policy = CompactionPolicy(tombstone_retention_ms=0 if arg else 10**12)
                    compact(log, policy)
            _check(log)
            log.close()
            log = reopen(True)
            _check(log)
            log.close()
            closed = len(log.segments) - 1
            with_summaries = _opened(path, segment_bytes)
            assert _drop_summaries(path) == closed  # every closed segment has one
            assert _opened(path, segment_bytes) == with_summaries
        finally:
            log.close()
