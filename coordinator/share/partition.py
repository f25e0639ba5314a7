"""One share partition (Kafka's ``SharePartition``): in-flight records between the start
offset and the next offset never fetched, acquisition by members with lock deadlines,
acknowledgement, and durable changes persisted before they are applied.

Acquisition and lock renewal change soft state only (as in Kafka, they are not written).
Everything else that changes a record -- acknowledgement, release, lock expiry, archiving
records the caller says to skip -- is planned as a :class:`ShareStateChange` carrying the
record to append; the records it touches stay as they were, and are neither acquired nor
acknowledged, until :meth:`SharePartition.append_done` applies it (or
:meth:`SharePartition.append_failed` drops it). A later change's record holds the state
after every earlier pending one, so its append applies them too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from storage.records import Record
from wire.constants import ErrorCode

from .durable import (
    DurableState,
    Entry,
    RecordLog,
    SharePartitionKey,
    normalised,
    state_record,
)
from .states import (
    AcknowledgementBatch,
    AcknowledgeType,
    AcquiredRecords,
    RecordState,
    ShareError,
    SharePartitionConfig,
)

__all__ = ["Acquisition", "InFlightRecord", "SharePartition", "ShareStateChange"]

_ACQUIRED = RecordState.ACQUIRED
_AVAILABLE = RecordState.AVAILABLE


@dataclass(slots=True)
class InFlightRecord:
    """One in-flight record: its state, delivery count and, while acquired, its owner and
    acquisition lock deadline."""

    state: RecordState
    delivery_count: int
    member_id: str | None = None
    lock_deadline_ms: int = -1


@dataclass(slots=True, eq=False)
class ShareStateChange:
    """A durable change waiting for its record to be appended."""

    record: Record
    after: DurableState
    log_after: RecordLog
    transitions: Mapping[int, Entry]
    failed: bool = False

    @property
    def offsets(self) -> frozenset[int]:
        """The records the change moves."""
        return frozenset(self.transitions)


@dataclass(slots=True)
class Acquisition:
    """What :meth:`SharePartition.acquire` handed out, and the change archiving the skipped
    records it met (None when there were none)."""

    records: list[AcquiredRecords] = field(default_factory=list)
    change: ShareStateChange | None = None


class SharePartition:
    """The live state of one share partition; built from its records by :meth:`from_log`."""

    def __init__(self, key: SharePartitionKey, log: RecordLog, config: SharePartitionConfig):
        self.key = key
        self.config = config
        self._log = log
        state = log.current
        self.start_offset = state.start_offset
        self.state_epoch = state.state_epoch
        end = max(state.entries, default=state.start_offset - 1) + 1
        self.records: dict[int, InFlightRecord] = {
            offset: InFlightRecord(*state.entry(offset)) for offset in range(self.start_offset, end)
        }
        self.next_offset = end
        #: The log's start offset as last reported (soft: the runtime reports it after a
        #: load); records below it are archived instead of delivered or made available.
        self.log_start_offset = 0
        self._pending: list[ShareStateChange] = []
        self._blocked: frozenset[int] = frozenset()
        self._force_snapshot = False

    @classmethod
    def from_log(
        cls, key: SharePartitionKey, log: RecordLog, config: SharePartitionConfig
    ) -> SharePartition:
        """The partition as its replayed records leave it: acquired records are available."""
        return cls(key, log, config)

    @staticmethod
    def initial_record(
        key: SharePartitionKey, start_offset: int, now_ms: int, config: SharePartitionConfig
    ) -> Record:
        """The first snapshot of a share partition starting at ``start_offset``."""
        record, _ = state_record(key, None, DurableState(start_offset), now_ms, config)
        return record

    # ------------------------------------------------------------------ views

    def durable_view(self) -> DurableState:
        """The durable state the applied live state stands for (acquired records counted
        as the available records they were before their acquisition)."""
        entries: dict[int, Entry] = {}
        for offset, rec in self.records.items():
            if rec.state is _ACQUIRED:
                entries[offset] = (_AVAILABLE, rec.delivery_count - 1)
            else:
                entries[offset] = (rec.state, rec.delivery_count)
        return normalised(self.start_offset, self.state_epoch, entries)

    @property
    def record_log(self) -> RecordLog:
        """Where the applied records stand."""
        return self._log

    @property
    def pending(self) -> tuple[ShareStateChange, ...]:
        """Changes whose append has not completed."""
        return tuple(self._pending)

    def in_flight_count(self) -> int:
        """Records between the start offset and the next offset never fetched."""
        return self.next_offset - self.start_offset

    def next_fetch_offset(self) -> int:
        """Where an acquisition starts taking records (Kafka's nextFetchOffset): the first
        available record in flight, else the next offset never fetched."""
        for offset in range(max(self.start_offset, self.log_start_offset), self.next_offset):
            if self.records[offset].state is _AVAILABLE and offset not in self._blocked:
                return offset
        return self.next_offset

    def acquired_by(self, member_id: str) -> list[int]:
        """Offsets ``member_id`` holds."""
        return [
            o for o, r in self.records.items() if r.state is _ACQUIRED and r.member_id == member_id
        ]

    def next_lock_deadline(self) -> int | None:
        """The earliest acquisition lock deadline (for the runtime's timer), if any."""
        deadlines = [
            r.lock_deadline_ms
            for o, r in self.records.items()
            if r.state is _ACQUIRED and o not in self._blocked
        ]
        return min(deadlines, default=None)

    # ------------------------------------------------------------------ acquisition

    def acquire(
        self,
        member_id: str,
        max_records: int,
        end_offset: int,
        now_ms: int,
        *,
        skipped: Sequence[tuple[int, int]] = (),
        lock_duration_ms: int | None = None,
    ) -> Acquisition:
        """Acquire up to ``max_records`` available records below ``end_offset`` (the high
        watermark, or the last stable offset under read_committed) for ``member_id``.

        ``skipped`` lists inclusive offset ranges never to deliver (aborted transactions'
        records and control records, under read_committed): never-delivered records in them
        are archived instead, by the returned change."""
        if lock_duration_ms is None:
            lock_duration_ms = self.config.record_lock_duration_ms
        deadline = now_ms + lock_duration_ms
        taken: list[int] = []
        archive: dict[int, Entry] = {}

        def skip(offset: int) -> bool:
            return any(first <= offset <= last for first, last in skipped)

        for offset in range(self.start_offset, min(self.next_offset, self.log_start_offset)):
            rec = self.records[offset]  # released below the log start: gone from the log
            if rec.state is _AVAILABLE and offset not in self._blocked:
                archive[offset] = (RecordState.ARCHIVED, rec.delivery_count)

        first = max(self.start_offset, self.log_start_offset)
        for offset in range(first, min(self.next_offset, end_offset)):
            if len(taken) >= max_records:
                break
            rec = self.records[offset]
            if rec.state is not _AVAILABLE or offset in self._blocked:
                continue
            if rec.delivery_count == 0 and skipped and skip(offset):
                archive[offset] = (RecordState.ARCHIVED, 0)
                continue
            self._take(rec, member_id, deadline)
            taken.append(offset)
        while (
            len(taken) < max_records
            and self.next_offset < end_offset
            and self.in_flight_count() < self.config.max_record_locks
        ):
            offset = self.next_offset
            rec = self.records[offset] = InFlightRecord(_AVAILABLE, 0)
            self.next_offset += 1
            if offset < self.log_start_offset or (skipped and skip(offset)):
                archive[offset] = (RecordState.ARCHIVED, 0)
                continue
            self._take(rec, member_id, deadline)
            taken.append(offset)
        change = self._plan(archive, now_ms) if archive else None
        return Acquisition(self._runs(taken), change)

    @staticmethod
    def _take(rec: InFlightRecord, member_id: str, deadline: int) -> None:
        rec.state = _ACQUIRED
        rec.delivery_count += 1
        rec.member_id = member_id
        rec.lock_deadline_ms = deadline

    def _runs(self, offsets: Iterable[int]) -> list[AcquiredRecords]:
        runs: list[AcquiredRecords] = []
        for offset in offsets:
            count = self.records[offset].delivery_count
            last = runs[-1] if runs else None
            if last is not None and last.last_offset + 1 == offset and last.delivery_count == count:
                runs[-1] = AcquiredRecords(last.first_offset, offset, count)
            else:
                runs.append(AcquiredRecords(offset, offset, count))
        return runs

    # ------------------------------------------------------------------ acknowledgement

    def acknowledge(
        self, member_id: str, batches: Sequence[AcknowledgementBatch], now_ms: int,
        lock_duration_ms: int | None = None,
    ) -> ShareStateChange | None:
        """Acknowledge records ``member_id`` holds: all the batches or none (ShareError).
        RENEW extends the locks at once (by ``lock_duration_ms``, the group's, else the
        partition's); the other types return the change to persist."""
        transitions: dict[int, Entry] = {}
        renew: list[InFlightRecord] = []
        for batch in batches:
            for offset, ack in self._validated(member_id, batch):
                if offset in transitions or any(r is self.records[offset] for r in renew):
                    raise ShareError(ErrorCode.INVALID_REQUEST, "Acknowledgement batches overlap.")
                rec = self.records[offset]
                if ack == AcknowledgeType.RENEW:
                    renew.append(rec)
                elif ack == AcknowledgeType.ACCEPT:
                    transitions[offset] = (RecordState.ACKNOWLEDGED, rec.delivery_count)
                elif ack == AcknowledgeType.RELEASE:
                    transitions[offset] = self._released(offset, rec)
                else:  # REJECT, GAP
                    transitions[offset] = (RecordState.ARCHIVED, rec.delivery_count)
        duration = (self.config.record_lock_duration_ms if lock_duration_ms is None
                    else lock_duration_ms)
        for rec in renew:
            rec.lock_deadline_ms = now_ms + duration
        return self._plan(transitions, now_ms) if transitions else None

    def _validated(
        self, member_id: str, batch: AcknowledgementBatch
    ) -> list[tuple[int, AcknowledgeType]]:
        first, last, types = batch.first_offset, batch.last_offset, batch.acknowledge_types
        if first > last or not types or (len(types) != 1 and len(types) != last - first + 1):
            raise ShareError(ErrorCode.INVALID_REQUEST, "Invalid acknowledgement batch.")
        try:
            acks = [AcknowledgeType(t) for t in types]
        except ValueError:
            raise ShareError(
                ErrorCode.INVALID_REQUEST, f"Invalid acknowledge type: {list(types)}"
            ) from None
        if self.next_offset == self.start_offset or last < self.start_offset:
            raise ShareError(
                ErrorCode.INVALID_RECORD_STATE,
                "Batch record not found. The request batch offsets are not found in the cache.",
            )
        if first >= self.next_offset:
            raise ShareError(
                ErrorCode.INVALID_REQUEST,
                "Batch record not found. The first offset in request is past acquired records.",
            )
        if last >= self.next_offset:
            raise ShareError(
                ErrorCode.INVALID_REQUEST,
                "Batch record not found. The last offset in request is past acquired records.",
            )
        found = []
        for offset in range(max(first, self.start_offset), last + 1):
            rec = self.records[offset]
            ack = acks[0] if len(acks) == 1 else acks[offset - first]
            if rec.state is not _ACQUIRED or offset in self._blocked:
                raise ShareError(
                    ErrorCode.INVALID_RECORD_STATE,
                    "The batch cannot be acknowledged. The batch is not in the acquired state.",
                )
            if rec.member_id != member_id:
                raise ShareError(
                    ErrorCode.INVALID_RECORD_STATE, "Member is not the owner of batch record"
                )
            found.append((offset, ack))
        return found

    def _released(self, offset: int, rec: InFlightRecord) -> Entry:
        # A record released at the delivery count limit is never delivered again, nor one
        # the log no longer holds.
        if (
            rec.delivery_count >= self.config.delivery_count_limit
            or offset < self.log_start_offset
        ):
            return (RecordState.ARCHIVED, rec.delivery_count)
        return (_AVAILABLE, rec.delivery_count)

    def advance_log_start_offset(
        self, log_start_offset: int, now_ms: int
    ) -> ShareStateChange | None:
        """The log's start offset moved (retention, DeleteRecords): available records below
        it are archived and the start offset follows, up to the first record still acquired
        (archived when it is released or its lock expires)."""
        self.log_start_offset = max(self.log_start_offset, log_start_offset)
        if self.log_start_offset <= self.start_offset:
            return None
        transitions: dict[int, Entry] = {}
        floor = self.log_start_offset
        for offset in range(self.start_offset, min(self.next_offset, self.log_start_offset)):
            rec = self.records[offset]
            if rec.state is _ACQUIRED or offset in self._blocked:
                floor = min(floor, offset)
            elif rec.state is _AVAILABLE:
                transitions[offset] = (RecordState.ARCHIVED, rec.delivery_count)
        return self._plan(transitions, now_ms, start_floor=floor)

    def release_member(self, member_id: str, now_ms: int) -> ShareStateChange | None:
        """Release every record ``member_id`` holds (it left the group)."""
        transitions = {
            o: self._released(o, r)
            for o, r in self.records.items()
            if r.state is _ACQUIRED and r.member_id == member_id and o not in self._blocked
        }
        return self._plan(transitions, now_ms) if transitions else None

    def expire_locks(self, now_ms: int) -> ShareStateChange | None:
        """Release the records whose acquisition lock deadline has passed."""
        transitions = {
            o: self._released(o, r)
            for o, r in self.records.items()
            if r.state is _ACQUIRED and r.lock_deadline_ms <= now_ms and o not in self._blocked
        }
        return self._plan(transitions, now_ms) if transitions else None

    # ------------------------------------------------------------------ persist, then apply

    def _plan(
        self, transitions: dict[int, Entry], now_ms: int, *, start_floor: int = 0
    ) -> ShareStateChange:
        if self._pending:
            base, log = self._pending[-1].after, self._pending[-1].log_after
        else:
            base, log = self.durable_view(), self._log
        entries = dict(base.entries)
        entries.update(transitions)
        after = normalised(max(base.start_offset, start_floor), base.state_epoch, entries)
        # An update is only written against a snapshot already in the log: were it written
        # against a pending one whose append then failed, replay could not place it.
        snapshot_pending = log.snapshot_epoch != self._log.snapshot_epoch
        record, log_after = state_record(
            self.key, log, after, now_ms, self.config,
            force_snapshot=self._force_snapshot or snapshot_pending,
        )
        self._force_snapshot = False
        change = ShareStateChange(record, after, log_after, transitions)
        self._pending.append(change)
        self._blocked = self._blocked | change.offsets
        return change

    def append_done(self, change: ShareStateChange) -> None:
        """``change``'s record is in the log: apply it (and every earlier pending change,
        whose state its record holds)."""
        index = self._pending.index(change)
        after = change.after
        for done in self._pending[: index + 1]:
            for offset in done.offsets:
                rec = self.records.get(offset)
                if rec is not None and offset >= after.start_offset:
                    rec.state, rec.delivery_count = after.entry(offset)
                    rec.member_id, rec.lock_deadline_ms = None, -1
        for offset in range(self.start_offset, after.start_offset):
            self.records.pop(offset, None)
        self.start_offset = max(self.start_offset, after.start_offset)
        self.next_offset = max(self.next_offset, self.start_offset)
        self._log = change.log_after
        del self._pending[: index + 1]
        self._reblock()

    def append_failed(self, change: ShareStateChange) -> None:
        """``change``'s append failed: nothing of it applies, unless a later pending change
        (whose record holds it) is appended. The next record is a snapshot."""
        change.failed = True
        while self._pending and self._pending[-1].failed:
            self._pending.pop()
        self._force_snapshot = True
        self._reblock()

    def _reblock(self) -> None:
        self._blocked = frozenset().union(*(c.offsets for c in self._pending))
