"""Hypothesis properties of the transaction coordinator and a partition's transactional state:

- a transactional id's producer epoch only grows (a new producer id starts at epoch 0 and
  was never handed out before);
- a fenced producer never completes: AddPartitionsToTxn / EndTxn succeed only for the
  producer instance the latest InitProducerId answered;
- replaying the records the log holds reproduces the persisted metadata, at every step,
  also when appends fail at random points (``fail``: the next append is refused), and no
  transition is left half-prepared beyond a completion whose markers are being written;
- a partition's LSO never passes the high watermark nor an open transaction's first offset,
  and everything below it is decided.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from txn_support import Cluster, Driver

from coordinator.txn.config import TxnConfig
from coordinator.txn.log import from_storage
from coordinator.txn.partition import PartitionTransactions
from coordinator.txn.producer_entry import NO_SEQUENCE, BatchInfo, ControlType
from coordinator.txn.producer_state import AppendOrigin, ProducerStateError
from coordinator.txn.state import TopicPartition, TransactionMetadata
from coordinator.txn.timers import ABORT_TIMED_OUT_TRANSACTIONS, REMOVE_EXPIRED_TRANSACTIONAL_IDS
from storage.records import TransactionStateKey
from wire.constants import ErrorCode as E

SETTINGS = settings(max_examples=400, deadline=None, derandomize=True, database=None)
IDS = ("a", "b")
PARTITIONS = (TopicPartition("t", 0), TopicPartition("t", 1))
CONFIG = TxnConfig(
    transaction_abort_timed_out_transaction_cleanup_interval_ms=1000,
    transactional_id_expiration_ms=20_000,
    transaction_state_log_num_partitions=3,
)

PICK = st.sampled_from((0, 0, 0, 0, 1, 2))  # mostly the latest instance, sometimes a zombie
INIT = st.tuples(st.just("init"), st.sampled_from(IDS), st.booleans())
ADD = st.tuples(st.just("add"), st.sampled_from(IDS), PICK, st.sampled_from(PARTITIONS))
END = st.tuples(st.just("end"), st.sampled_from(IDS), PICK, st.booleans())
MARKERS = st.tuples(st.just("markers"))
# The client's own requests are drawn most often; time, expiry and restarts less.
OPS = st.lists(
    st.one_of(
        INIT,
        ADD,
        END,
        MARKERS,
        INIT,
        ADD,
        END,
        MARKERS,
        st.tuples(st.just("offsets"), st.sampled_from(IDS), PICK),
        st.tuples(st.just("tick"), st.integers(0, 4000)),
        st.tuples(st.just("expire"), st.integers(0, 30_000)),
        st.tuples(st.just("restart")),
        st.tuples(st.just("fail")),
    ),
    min_size=10,
    max_size=80,
)


def persisted(m: TransactionMetadata) -> tuple[Any, ...]:
    """What the transaction log carries of a transactional id (the last epoch is not)."""
    return (
        m.producer_id,
        m.prev_producer_id,
        m.next_producer_id,
        m.producer_epoch,
        m.txn_timeout_ms,
        m.state,
        frozenset(m.topic_partitions),
        m.txn_start_timestamp,
        m.txn_last_update_timestamp,
        m.client_transaction_version,
    )


@dataclass
class Model:
    """Producer instances per id (answers of successful InitProducerId, oldest first)."""

    instances: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    last_seen: dict[str, tuple[int, int]] = field(default_factory=dict)
    written_pids: set[int] = field(default_factory=set)

    def instance(self, txn_id: str, pick: int) -> tuple[int, int, bool]:
        """(pid, epoch, is_latest) of the pick-th newest instance (a zombie when older)."""
        known = self.instances[txn_id]
        index = max(0, len(known) - 1 - pick)
        return (*known[index], index == len(known) - 1)


def check_epochs_only_grow(model: Model, records: list[Any]) -> None:
    """Per id, the same producer id never goes back an epoch; a different one is fresh
    (never written before for any id) and starts at epoch 0."""
    for stored in records:
        if not isinstance(stored.key, TransactionStateKey):
            continue
        record = from_storage(stored)
        txn_id = record.key.transactional_id
        if record.value is None:  # expired: the id may come back with a new producer id
            model.last_seen.pop(txn_id, None)
            continue
        now = (record.value.producer_id, record.value.producer_epoch)
        before = model.last_seen.get(txn_id)
        if before is not None and before[0] == now[0]:
            assert now[1] >= before[1], (txn_id, before, now)
        else:
            assert now[0] not in model.written_pids and now[1] == 0, (txn_id, before, now)
        model.written_pids.add(now[0])
        model.last_seen[txn_id] = now


@SETTINGS
@given(OPS)
def test_coordinator_properties(ops: list[tuple[Any, ...]]) -> None:
    c = Cluster(CONFIG)
    model = Model()
    seen = 0
    for op in ops:
        d = c.driver
        kind = op[0]
        if kind == "init":
            _, txn_id, with_expected = op
            # KIP-360: the latest producer re-initialising with its own id and epoch.
            args = (-1, -1)
            if with_expected and txn_id in model.instances:
                args = model.instance(txn_id, 0)[:2]
            answer = d.init(txn_id, 3000, *args)
            if answer.error_code == E.NONE:
                model.instances.setdefault(txn_id, []).append(
                    (answer.producer_id, answer.producer_epoch)
                )
        elif kind in ("add", "offsets", "end"):
            txn_id, pick = op[1], op[2]
            if txn_id not in model.instances:
                continue  # no producer yet: nothing to learn
            pid, epoch, latest = model.instance(txn_id, pick)
            if kind == "add":
                ok = d.add((op[3],), txn_id, pid, epoch) == {op[3]: E.NONE}
            elif kind == "offsets":
                ok = d.add_offsets("group", txn_id, pid, epoch) == E.NONE
            else:
                ok = d.end(op[3], txn_id, pid, epoch).error_code == E.NONE
            # Only the latest producer instance ever succeeds.
            assert latest or not ok, (op, model.instances)
        elif kind == "markers":
            c.deliver_markers()
        elif kind == "tick":
            d.now += op[1]
            d.tick(ABORT_TIMED_OUT_TRANSACTIONS)
        elif kind == "expire":
            d.now += op[1]
            d.tick(REMOVE_EXPIRED_TRANSACTIONAL_IDS)
        elif kind == "fail":
            d.failures = 1
        else:
            c.restart()
        records = c.driver.records()
        check_epochs_only_grow(model, records[seen:])
        seen = len(records)
        # Replaying what was written gives the metadata the live coordinator holds.
        replayed = Driver(CONFIG, tuple(records), c.driver.now).coordinator
        live = c.driver.coordinator
        assert replayed.transactional_ids() == live.transactional_ids()
        for txn_id in live.transactional_ids():
            live_m = live.transaction_metadata(txn_id)
            replayed_m = replayed.transaction_metadata(txn_id)
            assert live_m is not None and replayed_m is not None
            assert persisted(replayed_m) == persisted(live_m), txn_id
            completing = txn_id in live.pending_markers()
            assert live_m.pending_state is None or completing, live_m


BATCH_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("data"), st.integers(0, 2), st.booleans(), st.integers(1, 3)),
        st.tuples(st.just("marker"), st.integers(0, 2), st.booleans()),
        st.tuples(st.just("hw"), st.integers(0, 100)),
    ),
    max_size=50,
)


@SETTINGS
@given(BATCH_OPS)
def test_lso_never_passes_the_high_watermark_or_an_open_transaction(
    ops: list[tuple[Any, ...]],
) -> None:
    p = PartitionTransactions()
    sequences = {pid: 0 for pid in range(3)}
    for op in ops:
        try:
            if op[0] == "data":
                _, pid, txn, count = op
                p.apply_append(
                    p.check_append(
                        BatchInfo(pid, 0, sequences[pid], count - 1, 0, is_transactional=txn),
                        AppendOrigin.CLIENT,
                    )
                )
                sequences[pid] += count
            elif op[0] == "marker":
                control = ControlType.COMMIT if op[2] else ControlType.ABORT
                marker = BatchInfo(op[1], 0, NO_SEQUENCE, 0, 0, True, control)
                p.apply_append(p.check_append(marker, AppendOrigin.COORDINATOR))
            else:
                p.update_high_watermark(p.high_watermark + op[1])
        except ProducerStateError:
            pass  # e.g. plain data while the producer's transaction is open
        lso = p.last_stable_offset
        assert p.log_start_offset <= lso <= p.high_watermark <= p.log_end_offset
        for txn in p.producers.ongoing_transactions():
            assert lso <= txn.first_offset
        for aborted in p.aborted.all():
            assert aborted.first_offset <= aborted.last_offset
            assert aborted.last_stable_offset <= aborted.last_offset + 1
