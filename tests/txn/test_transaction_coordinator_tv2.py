"""Transaction version 2 (KIP-890 part 2) in the sans-I/O TransactionCoordinator.

The first four tests mirror Kafka's TV2-only cases of TransactionCoordinatorTest.scala
(``TV_0`` there is an EndTxn below v5 here, ``TV_2`` an EndTxn v5). The others follow
whole transactions of a TV2 client through the coordinator and real partition states:
the epoch bump at every EndTxn and its answer, the rollover to a new producer id at epoch
32766, idempotent retries, restarts in between, the coordinator's own aborts under a
finalized ``transaction.version`` 2, and the implicit partition add (AddPartitionsToTxn v5,
what the broker sends for Produce v12+ / TxnOffsetCommit v5+).
"""

from __future__ import annotations

from typing import Any

from txn_support import (
    PRODUCER_EPOCH,
    PRODUCER_ID,
    TP1,
    TP2,
    TXN_ID,
    Cluster,
    Driver,
    InitProducerIdResponse,
    log_records,
    meta,
)

from coordinator.txn.config import TxnConfig
from coordinator.txn.state import SHORT_MAX
from coordinator.txn.timers import ABORT_TIMED_OUT_TRANSACTIONS
from coordinator.txn.transaction_state import TransactionResult, TransactionState
from wire.constants import NO_PRODUCER_ID
from wire.constants import ErrorCode as E

S = TransactionState
TV0, TV2 = 4, 5  # EndTxn versions: below 5 the client uses transaction version 0/1
PRODUCER_ID2 = 11
TV2_CONFIG = TxnConfig(transaction_version=2)


def _values(result: Any) -> list[Any]:
    return [r.value for r in log_records(result)]


def _answer(response: Any) -> tuple[int, int, int]:
    return response.error_code, response.producer_id, response.producer_epoch


# ---------------------------------------------------------------------- Kafka's TV2 tests


def test_should_return_when_transaction_version_downgraded() -> None:
    d = Driver()
    # State written by a TV2 end: the epoch is already bumped.
    placed = d.place(meta(S.PREPARE_COMMIT, producer_epoch=PRODUCER_EPOCH + 1,
                          prev_producer_id=PRODUCER_ID, txn_timeout_ms=1, start=0, version=2))
    # Still completing: CONCURRENT_TRANSACTIONS, without ids.
    assert _answer(d.end(True, version=TV0)) == (E.CONCURRENT_TRANSACTIONS, -1, -1)
    placed.state = S.COMPLETE_COMMIT
    # Recognised as the retry: the bumped epoch, since the transaction started as TV2.
    assert _answer(d.end(True, version=TV0)) == (E.NONE, PRODUCER_ID, PRODUCER_EPOCH + 1)
    assert d.last.records == () and d.last.markers == ()


def test_should_return_correctly_when_transaction_version_upgraded() -> None:
    d = Driver()
    placed = d.place(meta(S.PREPARE_COMMIT, prev_producer_id=PRODUCER_ID, txn_timeout_ms=1,
                          start=0, version=0))
    assert d.end(True, version=TV2).error_code == E.CONCURRENT_TRANSACTIONS
    placed.state = S.COMPLETE_COMMIT
    # Completed: NONE, and the epoch is not bumped since the transaction started as TV0.
    assert _answer(d.end(True, version=TV2)) == (E.NONE, PRODUCER_ID, PRODUCER_EPOCH)


def test_should_return_invalid_txn_request_on_end_txn_v2_if_not_end_txn_v2_retry() -> None:
    d = Driver()
    placed = d.place(meta(S.PREPARE_COMMIT, prev_producer_id=PRODUCER_ID, txn_timeout_ms=1,
                          start=0, version=2))
    # The same epoch is not a retry of the bumped end but the next EndTxn: fenced.
    assert _answer(d.end(True, version=TV2)) == (E.PRODUCER_FENCED, -1, -1)
    placed.state = S.COMPLETE_COMMIT
    assert _answer(d.end(True, version=TV2)) == (E.PRODUCER_FENCED, -1, -1)


def test_should_return_ok_on_end_txn_v2_if_end_txn_v2_retry_epoch_overflow() -> None:
    d = Driver()
    d.place(meta(S.PREPARE_COMMIT, producer_epoch=SHORT_MAX, last_producer_epoch=SHORT_MAX - 1,
                 prev_producer_id=PRODUCER_ID, next_producer_id=PRODUCER_ID2, txn_timeout_ms=1,
                 start=0, version=2))
    retry = {"producer_epoch": SHORT_MAX - 1, "version": TV2}
    assert d.end(True, **retry).error_code == E.CONCURRENT_TRANSACTIONS
    d.coordinator.manager.remove(TXN_ID)
    # Completed: the producer id moved on to the next one at epoch 0.
    d.place(meta(S.COMPLETE_COMMIT, producer_id=PRODUCER_ID2, producer_epoch=0,
                 prev_producer_id=PRODUCER_ID, txn_timeout_ms=1, start=0, version=2))
    assert _answer(d.end(True, **retry)) == (E.NONE, PRODUCER_ID2, 0)


# ---------------------------------------------------------------------- whole transactions


def _begin(c: Cluster, epoch_bump_client: bool = True) -> tuple[int, int]:
    init = c.driver.init(TXN_ID, 60_000)
    assert init.error_code == E.NONE
    pid, epoch = init.producer_id, init.producer_epoch
    # A TV2 client does not send AddPartitionsToTxn: the broker adds the partition (v5).
    version = 5 if epoch_bump_client else 3
    assert c.driver.add((TP1,), producer_id=pid, producer_epoch=epoch, version=version) == {
        TP1: E.NONE}
    return pid, epoch


def test_every_end_txn_v5_bumps_the_epoch_and_answers_it() -> None:
    c = Cluster(TV2_CONFIG)
    pid, epoch = _begin(c)
    (ongoing,) = _values(c.driver.last)
    assert (ongoing.state, ongoing.client_transaction_version) == (S.ONGOING, 2)
    c.produce(TP1, pid, epoch, 0)
    assert _answer(c.driver.end(True, producer_id=pid, producer_epoch=epoch, version=TV2)) == (
        E.NONE, pid, epoch + 1)
    (prepared,) = _values(c.driver.last)
    assert (prepared.state, prepared.producer_epoch, prepared.client_transaction_version) == (
        S.PREPARE_COMMIT, epoch + 1, 2)
    (marker,) = c.driver.last.markers
    assert (marker.producer_id, marker.producer_epoch) == (pid, epoch + 1)
    c.deliver_markers()
    assert c.partition(TP1).last_stable_offset == 2  # the commit marker at offset 1
    # A retry of the end with the old epoch is answered again, idempotently.
    assert _answer(c.driver.end(True, producer_id=pid, producer_epoch=epoch, version=TV2)) == (
        E.NONE, pid, epoch + 1)
    assert c.driver.last.records == ()
    # The next transaction runs at the new epoch, from sequence 0, and aborts: bump again.
    epoch += 1
    assert c.driver.add((TP1,), producer_id=pid, producer_epoch=epoch, version=5) == {
        TP1: E.NONE}
    assert not isinstance(c.produce(TP1, pid, epoch, 0), Exception)
    assert _answer(c.driver.end(False, producer_id=pid, producer_epoch=epoch, version=TV2)) == (
        E.NONE, pid, epoch + 1)
    c.deliver_markers()
    assert [a.producer_id for a in c.partition(TP1).aborted.all()] == [pid]
    # The old epoch may no longer write.
    stale = c.produce(TP1, pid, epoch, 1)
    assert isinstance(stale, Exception) and stale.code == E.INVALID_PRODUCER_EPOCH  # type: ignore[attr-defined]


def test_end_txn_v5_at_epoch_32766_rolls_over_to_a_new_producer_id() -> None:
    d = Driver(TV2_CONFIG, new_producer_id=lambda: PRODUCER_ID2)
    d.place(meta(S.ONGOING, producer_epoch=SHORT_MAX - 1, partitions={TP1}, start=0))
    assert _answer(d.end(True, producer_epoch=SHORT_MAX - 1, version=TV2)) == (
        E.NONE, PRODUCER_ID2, 0)
    (prepared,) = _values(d.last)
    assert (prepared.producer_id, prepared.producer_epoch, prepared.next_producer_id) == (
        PRODUCER_ID, SHORT_MAX, PRODUCER_ID2)
    (marker,) = d.last.markers  # the markers still close the old id's transaction
    assert (marker.producer_id, marker.producer_epoch) == (PRODUCER_ID, SHORT_MAX)
    (completed,) = _values(d.write_markers())
    assert (completed.state, completed.producer_id, completed.producer_epoch,
            completed.previous_producer_id, completed.next_producer_id) == (
        S.COMPLETE_COMMIT, PRODUCER_ID2, 0, PRODUCER_ID, NO_PRODUCER_ID)
    # The retry with the previous id at 32766 is recognised; the new id starts a transaction.
    assert _answer(d.end(True, producer_epoch=SHORT_MAX - 1, version=TV2)) == (
        E.NONE, PRODUCER_ID2, 0)
    assert d.add((TP2,), producer_id=PRODUCER_ID2, producer_epoch=0, version=5) == {
        TP2: E.NONE}


def test_a_restart_between_prepare_and_complete_finishes_the_rollover() -> None:
    c = Cluster(TV2_CONFIG)
    pid, _ = _begin(c)
    c.driver.coordinator.transaction_metadata(TXN_ID).producer_epoch = SHORT_MAX - 1  # type: ignore[union-attr]
    response = c.driver.end(True, producer_id=pid, producer_epoch=SHORT_MAX - 1, version=TV2)
    new_pid = response.producer_id
    assert response.error_code == E.NONE and new_pid not in (pid, NO_PRODUCER_ID)
    loaded = c.restart()  # the markers were never written
    (marker,) = loaded.markers
    assert (marker.producer_id, marker.producer_epoch) == (pid, SHORT_MAX)
    c.deliver_markers()
    metadata = c.driver.coordinator.transaction_metadata(TXN_ID)
    assert metadata is not None
    assert (metadata.state, metadata.producer_id, metadata.producer_epoch,
            metadata.prev_producer_id) == (S.COMPLETE_COMMIT, new_pid, 0, pid)
    assert _answer(c.driver.end(True, producer_id=pid, producer_epoch=SHORT_MAX - 1,
                                version=TV2)) == (E.NONE, new_pid, 0)


def test_a_completed_tv2_end_is_answered_again_after_a_restart() -> None:
    c = Cluster(TV2_CONFIG)
    pid, epoch = _begin(c)
    assert c.driver.end(True, producer_id=pid, producer_epoch=epoch, version=TV2).error_code == 0
    c.deliver_markers()
    c.restart()
    assert _answer(c.driver.end(True, producer_id=pid, producer_epoch=epoch, version=TV2)) == (
        E.NONE, pid, epoch + 1)
    assert _answer(c.driver.end(True, producer_id=pid, producer_epoch=epoch + 1,
                                version=TV2)) == (E.PRODUCER_FENCED, -1, -1)


def test_a_fence_under_transaction_version_2_bumps_past_the_fencing_epoch() -> None:
    c = Cluster(TV2_CONFIG)
    pid, epoch = _begin(c)
    assert c.driver.init(TXN_ID, 60_000) == InitProducerIdResponse(E.CONCURRENT_TRANSACTIONS)
    (aborting,) = _values(c.driver.last)
    # The fence's epoch, then the version-2 abort's own bump (Kafka's endTransaction).
    assert (aborting.state, aborting.producer_epoch, aborting.client_transaction_version) == (
        S.PREPARE_ABORT, epoch + 2, 2)
    c.deliver_markers()
    # The zombie's end is not mistaken for a retry of the bumped end.
    assert c.driver.end(True, producer_id=pid, producer_epoch=epoch, version=TV2).error_code \
        == E.PRODUCER_FENCED
    assert c.driver.end(True, producer_id=pid, producer_epoch=epoch, version=TV0).error_code \
        == E.PRODUCER_FENCED
    retried = c.driver.init(TXN_ID, 60_000)
    assert (retried.error_code, retried.producer_id, retried.producer_epoch) == (
        E.NONE, pid, epoch + 3)


def test_a_timeout_abort_under_transaction_version_2_fences_the_producer() -> None:
    c = Cluster(TxnConfig(transaction_abort_timed_out_transaction_cleanup_interval_ms=1000))
    pid, epoch = _begin(c)
    c.produce(TP1, pid, epoch, 0)
    c.driver.now = 120_000
    result = c.driver.tick(ABORT_TIMED_OUT_TRANSACTIONS)
    (marker,) = result.markers
    assert (marker.result, marker.producer_epoch) == (TransactionResult.ABORT, epoch + 2)
    c.deliver_markers()
    assert c.partition(TP1).last_stable_offset == 2
    assert c.driver.end(True, producer_id=pid, producer_epoch=epoch, version=TV2).error_code \
        == E.PRODUCER_FENCED


def test_a_fence_at_epoch_32766_under_transaction_version_2_does_not_overflow() -> None:
    d = Driver(TV2_CONFIG)
    d.place(meta(S.ONGOING, producer_epoch=SHORT_MAX - 1, partitions={TP1}, start=0))
    assert d.init(TXN_ID, 1000) == InitProducerIdResponse(E.CONCURRENT_TRANSACTIONS)
    (aborting,) = _values(d.last)
    assert (aborting.state, aborting.producer_epoch) == (S.PREPARE_ABORT, SHORT_MAX)
    d.write_markers()
    # The epochs are exhausted: the retried InitProducerId moves to a new producer id.
    retried = d.init(TXN_ID, 1000)
    assert retried.error_code == E.NONE and retried.producer_id != PRODUCER_ID
    assert retried.producer_epoch == 0


def test_end_txn_v5_bumps_whatever_transaction_version_is_finalized() -> None:
    # As KafkaApis: the request version tells the client's transaction version.
    c = Cluster(TxnConfig(transaction_version=0))
    pid, epoch = _begin(c, epoch_bump_client=False)
    assert _answer(c.driver.end(True, producer_id=pid, producer_epoch=epoch, version=TV2)) == (
        E.NONE, pid, epoch + 1)
    # ...and a TV0 client's end does not bump.
    c.deliver_markers()
    assert c.driver.add((TP1,), producer_id=pid, producer_epoch=epoch + 1) == {TP1: E.NONE}
    assert _answer(c.driver.end(True, producer_id=pid, producer_epoch=epoch + 1,
                                version=TV0)) == (E.NONE, pid, epoch + 1)
