"""A Hypothesis state machine over one share partition, with appends that complete late or
fail and crashes that lose every pending change: a record is never acquired by two members
at once, delivery counts never decrease (a crash brings an acquired record back with the
count durable before its acquisition), accepted records never come back, records below the
log start offset are never delivered, and the live state always equals the replay of the
records in the log."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from share_harness import KEY, ShareHarness

from coordinator.share import (
    AcknowledgementBatch,
    AcknowledgeType,
    RecordState,
    ShareError,
    SharePartitionConfig,
    ShareStateChange,
)

MEMBERS = ("m1", "m2", "m3")
END_OFFSET = 40
TYPES = (AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE, AcknowledgeType.REJECT,
         AcknowledgeType.GAP, AcknowledgeType.RENEW)


class SharePartitionMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.h = ShareHarness(
            SharePartitionConfig(
                delivery_count_limit=3, record_lock_duration_ms=1000, max_record_locks=25,
                updates_per_snapshot=4,
            )
        )
        self.inflight: list[ShareStateChange] = []  # changes whose append has not completed
        self.holder: dict[int, str] = {}  # offset -> the member the model says holds it
        self.accepted: set[int] = set()
        self.counts: dict[int, int] = {}  # offset -> highest delivery count seen

    # ------------------------------------------------------------------ rules

    @rule(member=st.sampled_from(MEMBERS), max_records=st.integers(1, 8),
          skip=st.none() | st.tuples(st.integers(0, END_OFFSET), st.integers(0, 3)))
    def acquire(self, member: str, max_records: int, skip: tuple[int, int] | None) -> None:
        skipped = [] if skip is None else [(skip[0], skip[0] + skip[1])]
        found = self.h.partition.acquire(
            member, max_records, END_OFFSET, self.h.now, skipped=skipped)
        offsets = [o for r in found.records for o in range(r.first_offset, r.last_offset + 1)]
        assert len(offsets) <= max_records
        for offset in offsets:
            assert offset >= self.h.partition.log_start_offset  # still in the log
            assert offset not in self.holder, f"{offset} held by {self.holder[offset]}"
            assert offset not in self.accepted
            self.holder[offset] = member
        if found.change is not None:
            self.inflight.append(found.change)

    @rule(member=st.sampled_from(MEMBERS), data=st.data())
    def acknowledge(self, member: str, data: st.DataObject) -> None:
        held = self.h.partition.acquired_by(member)
        if not held:
            return
        first = data.draw(st.sampled_from(held))
        last = data.draw(st.integers(first, first + 3))
        types = data.draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=1)
                          | st.lists(st.sampled_from(TYPES), min_size=last - first + 1,
                                     max_size=last - first + 1))
        before = self._live()
        try:
            change = self.h.partition.acknowledge(
                member, [AcknowledgementBatch(first, last, tuple(types))], self.h.now)
        except ShareError:
            assert self._live() == before  # all or nothing
            return
        if change is not None:
            self.inflight.append(change)

    @rule(ms=st.integers(0, 1500))
    def tick(self, ms: int) -> None:
        self.h.now += ms
        change = self.h.partition.expire_locks(self.h.now)
        if change is not None:
            self.inflight.append(change)

    @rule(member=st.sampled_from(MEMBERS))
    def member_leaves(self, member: str) -> None:
        change = self.h.partition.release_member(member, self.h.now)
        if change is not None:
            self.inflight.append(change)

    @precondition(lambda self: self.inflight)
    @rule(ok=st.booleans())
    def complete_oldest_append(self, ok: bool) -> None:
        change = self.inflight.pop(0)
        pending = self.h.partition.pending
        if ok:
            done = pending[: pending.index(change) + 1]
            self.h.persist(change)
            for applied in done:
                for offset, (state, _) in applied.transitions.items():
                    self.holder.pop(offset, None)
                    if state is RecordState.ACKNOWLEDGED:
                        self.accepted.add(offset)
        else:
            self.h.partition.append_failed(change)
        still = self.h.partition.pending
        self.inflight = [c for c in self.inflight if c in still]

    @rule(by=st.integers(0, 6))
    def log_start_moves(self, by: int) -> None:
        partition = self.h.partition
        target = max(partition.start_offset, partition.log_start_offset) + by
        change = partition.advance_log_start_offset(target, self.h.now)
        if change is not None:
            self.inflight.append(change)

    @rule()
    def crash_and_restart(self) -> None:
        self.inflight.clear()
        self.holder.clear()
        log_start = self.h.partition.log_start_offset
        self.h.restart()
        self.h.partition.log_start_offset = log_start  # the runtime reports it after a load
        self.counts = {o: r.delivery_count for o, r in self.h.partition.records.items()}

    # ------------------------------------------------------------------ invariants

    def _live(self) -> dict[int, tuple[RecordState, int, str | None, int]]:
        return {
            o: (r.state, r.delivery_count, r.member_id, r.lock_deadline_ms)
            for o, r in self.h.partition.records.items()
        }

    @invariant()
    def one_holder_per_record(self) -> None:
        for offset, rec in self.h.partition.records.items():
            if rec.state is RecordState.ACQUIRED:
                assert rec.member_id is not None
                assert self.holder.get(offset) == rec.member_id

    @invariant()
    def delivery_counts_never_decrease(self) -> None:
        for offset, rec in self.h.partition.records.items():
            assert rec.delivery_count >= self.counts.get(offset, 0)
            assert rec.delivery_count <= 3  # the limit archives
            self.counts[offset] = rec.delivery_count

    @invariant()
    def accepted_records_never_come_back(self) -> None:
        partition = self.h.partition
        for offset in self.accepted:
            rec = partition.records.get(offset)
            assert offset < partition.start_offset or (
                rec is not None and rec.state is RecordState.ACKNOWLEDGED)

    @invariant()
    def live_state_equals_replay(self) -> None:
        live = self.h.partition.durable_view()
        assert self.h.store.partitions[KEY].current == live
        assert self.h.replayed().durable_view() == live


SharePartitionMachine.TestCase.settings = settings(
    max_examples=150, stateful_step_count=40, deadline=None
)
TestSharePartitionMachine = SharePartitionMachine.TestCase
