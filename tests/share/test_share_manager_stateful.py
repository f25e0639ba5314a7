"""A Hypothesis state machine over the share shard as ShareFetch and ShareAcknowledge drive
it: members with share sessions (right and wrong epochs, closes, re-opens), acquisitions over
two partitions, acknowledgements (in ShareAcknowledge or piggybacked on ShareFetch),
records produced, lock expiry on the timer, failed appends and crashes. Checked from what
the members are *answered*: a record is never handed to two members at once, delivery counts
never decrease, accepted or rejected records never come back, a session error changes
nothing, and the live state always equals the replay of the log."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from manager_harness import GROUP, ManagerHarness, key

from coordinator.share import RecordState, SharePartitionConfig
from coordinator.share.manager import SessionAnswer, ShareAppendFailed
from coordinator.share.sessions import ShareSessionKey

MEMBERS = ("m1", "m2", "m3")
KEYS = (key(0), key(1))
LOCK_MS = 1000
LIMIT = 3
ACCEPT, RELEASE, REJECT = 1, 2, 3
Offset = tuple[int, int]  # (partition, offset)


class ShareManagerMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.h = ManagerHarness(SharePartitionConfig(
            delivery_count_limit=LIMIT, record_lock_duration_ms=LOCK_MS, max_record_locks=30,
            updates_per_snapshot=3))
        self.epochs: dict[str, int] = {}  # the epoch each member sends next (no entry: 0)
        #: What each member was handed and may still hold: (partition, offset) -> deadline.
        self.held: dict[str, dict[Offset, int]] = {m: {} for m in MEMBERS}
        self.done: set[Offset] = set()  # accepted or rejected, answered
        self.counts: dict[Offset, int] = {}  # highest delivery count handed out
        self.restarted_since: set[Offset] = set()  # delivered, then a crash

    # ------------------------------------------------------------------ model helpers

    def _drop_expired(self) -> None:
        for held in self.held.values():
            for offset in [o for o, deadline in held.items() if deadline <= self.h.now]:
                del held[offset]

    def _handed(self, member: str, found: dict[object, list[tuple[int, int, int]]]) -> None:
        for k, runs in found.items():
            partition = k.partition  # type: ignore[attr-defined]
            for first, last, count in runs:
                for offset in range(first, last + 1):
                    o = (partition, offset)
                    assert o not in self.done, f"{o} came back after it was acknowledged"
                    for other, held in self.held.items():
                        assert o not in held, f"{o} handed to {member} while {other} holds it"
                    previous = self.counts.get(o, 0)
                    if o in self.restarted_since:
                        assert count >= previous
                        self.restarted_since.discard(o)
                    else:
                        assert count > previous, (o, count, previous)
                    assert count <= LIMIT
                    self.counts[o] = count
                    self.held[member][o] = self.h.now + LOCK_MS

    def _acks(self, member: str, data: st.DataObject) -> dict[object, list[tuple[int, int, int]]]:
        held = sorted(self.held[member])
        if not held:
            return {}
        picked = data.draw(st.lists(st.sampled_from(held), max_size=4, unique=True))
        acks: dict[object, list[tuple[int, int, int]]] = {}
        for partition, offset in sorted(picked):
            kind = data.draw(st.sampled_from((ACCEPT, RELEASE, REJECT)))
            acks.setdefault(KEYS[partition], []).append((offset, offset, kind))
        return acks

    def _acknowledged(self, member: str, acks: dict[object, list[tuple[int, int, int]]],
                      answer: SessionAnswer) -> None:
        for k, batches in acks.items():
            code, _ = answer.acknowledge_errors[k]  # type: ignore[index]
            if code != 0:
                continue  # all of the partition's batches or none
            for offset, _, kind in batches:
                o = (k.partition, offset)  # type: ignore[attr-defined]
                del self.held[member][o]
                if kind in (ACCEPT, REJECT):
                    self.done.add(o)

    def _session(self, api: str, member: str, epoch: int,
                 acks: dict[object, list[tuple[int, int, int]]]) -> SessionAnswer | None:
        answer = self.h.session(api, member, epoch, KEYS if epoch == 0 else (),
                                acks=acks)  # type: ignore[arg-type]
        if isinstance(answer, ShareAppendFailed):  # nothing applied; the session moved on
            if epoch == -1:
                self.epochs.pop(member, None)
            else:
                self.epochs[member] = epoch + 1
            return None
        if answer.error is not None:
            return None
        self._acknowledged(member, acks, answer)
        if epoch == -1:
            self.held[member].clear()
            self.epochs.pop(member, None)
        else:
            self.epochs[member] = epoch + 1
        return answer

    # ------------------------------------------------------------------ rules

    @rule(n=st.integers(1, 6), partition=st.sampled_from((0, 1)))
    def produce(self, n: int, partition: int) -> None:
        k = KEYS[partition]
        self.h.end_offsets[k] = self.h.end_offsets.get(k, 0) + n

    @rule(member=st.sampled_from(MEMBERS), max_records=st.integers(1, 8), data=st.data())
    def share_fetch(self, member: str, max_records: int, data: st.DataObject) -> None:
        self._drop_expired()
        epoch = self.epochs.get(member, 0)
        acks = self._acks(member, data) if epoch else {}
        if self._session("fetch", member, epoch, acks) is None:
            return
        self._handed(member, self.h.acquire(member, list(KEYS), max_records))  # type: ignore[arg-type]

    @rule(member=st.sampled_from(MEMBERS), data=st.data())
    def share_acknowledge(self, member: str, data: st.DataObject) -> None:
        self._drop_expired()
        epoch = self.epochs.get(member)
        if epoch is None:
            return
        self._session("acknowledge", member, epoch, self._acks(member, data))

    @rule(member=st.sampled_from(MEMBERS), data=st.data())
    def close_session(self, member: str, data: st.DataObject) -> None:
        self._drop_expired()
        if member in self.epochs:
            self._session("fetch", member, -1, self._acks(member, data))

    @rule(member=st.sampled_from(MEMBERS), api=st.sampled_from(("fetch", "acknowledge")),
          wrong=st.integers(1, 50), data=st.data())
    def wrong_epoch_changes_nothing(
        self, member: str, api: str, wrong: int, data: st.DataObject
    ) -> None:
        expected = self.epochs.get(member)
        if expected == wrong:
            wrong = 0 if api == "acknowledge" else wrong + 1
        before = len(self.h.log), {k: p.durable_view() for k, p in self.h.shard.partitions.items()}
        answer = self.h.session(api, member, wrong, acks=self._acks(member, data))  # type: ignore[arg-type]
        assert isinstance(answer, SessionAnswer) and answer.error is not None
        assert (len(self.h.log),
                {k: p.durable_view() for k, p in self.h.shard.partitions.items()}) == before

    @rule(ms=st.integers(0, 1500))
    def tick(self, ms: int) -> None:
        self.h.sleep(ms)
        self._drop_expired()

    @rule()
    def next_append_fails(self) -> None:
        self.h.fail_next_append = True

    @rule()
    def crash_and_restart(self) -> None:
        self.h = self.h.restart()
        self.epochs.clear()
        for held in self.held.values():
            held.clear()
        self.restarted_since = set(self.counts)

    # ------------------------------------------------------------------ invariants

    @invariant()
    def one_holder_per_record(self) -> None:
        for k, partition in self.h.shard.partitions.items():
            for offset, rec in partition.records.items():
                if rec.state is RecordState.ACQUIRED:
                    assert (k.partition, offset) in self.held[rec.member_id or ""] or (
                        rec.lock_deadline_ms <= self.h.now)

    @invariant()
    def accepted_records_never_come_back(self) -> None:
        for k, partition in self.h.shard.partitions.items():
            for partition_index, offset in self.done:
                if partition_index != k.partition or offset < partition.start_offset:
                    continue
                assert partition.records[offset].state.is_terminal

    @invariant()
    def sessions_match_the_members(self) -> None:
        for member in MEMBERS:
            session = self.h.shard.sessions.get(ShareSessionKey(GROUP, member))
            assert (session.epoch if session else None) == self.epochs.get(member)

    @invariant()
    def live_state_equals_replay(self) -> None:
        replayed = ManagerHarness(self.h.config, log=list(self.h.log)).shard.partitions
        live = self.h.shard.partitions
        assert set(replayed) == set(live)
        for k, partition in live.items():
            assert replayed[k].durable_view() == partition.durable_view()


ShareManagerMachine.TestCase.settings = settings(
    max_examples=120, stateful_step_count=40, deadline=None
)
TestShareManagerMachine = ShareManagerMachine.TestCase
