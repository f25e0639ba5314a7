"""Whole transactions through the pure coordinator and real partition states: what the
runtime will do once wired (markers written as control batches, records replayed)."""

from __future__ import annotations

from txn_support import Cluster, Driver, Version, log_records

from coordinator.txn.config import TxnConfig
from coordinator.txn.handlers import handle_add_partitions_to_txn
from coordinator.txn.partition import AbortedTxn
from coordinator.txn.producer_state import ProducerStateError
from coordinator.txn.state import TopicPartition
from coordinator.txn.timers import ABORT_TIMED_OUT_TRANSACTIONS
from coordinator.txn.transaction_state import TransactionState
from wire.constants import ErrorCode as E

S = TransactionState
T0 = TopicPartition("orders", 0)
GROUP = "g"  # __consumer_offsets partition 3
OFFSETS = TopicPartition("__consumer_offsets", 3)
TXN = "app-1"


def _begin(c: Cluster, timeout: int = 60_000) -> tuple[int, int]:
    init = c.driver.init(TXN, timeout)
    assert init.error_code == E.NONE
    pid, epoch = init.producer_id, init.producer_epoch
    assert c.driver.add((T0,), TXN, pid, epoch) == {T0: E.NONE}
    return pid, epoch


def test_read_process_write_commit() -> None:
    c = Cluster()
    pid, epoch = _begin(c)
    for seq in range(3):
        assert not isinstance(c.produce(T0, pid, epoch, seq), ProducerStateError)
    assert c.driver.add_offsets(GROUP, TXN, pid, epoch) == E.NONE
    assert c.partition(T0).last_stable_offset == 0  # read_committed sees nothing yet
    end = c.driver.end(True, TXN, pid, epoch)
    assert end.error_code == E.NONE
    (marker,) = c.driver.last.markers
    assert set(marker.partitions) == {T0, OFFSETS}
    # Until every marker is written the transaction is completing.
    assert c.driver.end(True, TXN, pid, epoch).error_code == E.CONCURRENT_TRANSACTIONS
    assert c.driver.add((T0,), TXN, pid, epoch) == {T0: E.CONCURRENT_TRANSACTIONS}
    c.deliver_markers()
    assert c.driver.coordinator.transaction_metadata(TXN).state == S.COMPLETE_COMMIT  # type: ignore[union-attr]
    assert (c.partition(T0).last_stable_offset, c.partition(T0).aborted.all()) == (4, [])
    # A retried EndTxn after completion succeeds again.
    assert c.driver.end(True, TXN, pid, epoch).error_code == E.NONE
    assert c.driver.end(False, TXN, pid, epoch).error_code == E.INVALID_TXN_STATE


def test_abort_is_indexed_for_read_committed_fetches() -> None:
    c = Cluster()
    pid, epoch = _begin(c)
    c.produce(T0, pid, epoch, 0)
    c.produce(T0, pid, epoch, 1)
    assert c.driver.end(False, TXN, pid, epoch).error_code == E.NONE
    c.deliver_markers()
    part = c.partition(T0)
    assert part.aborted.all() == [AbortedTxn(pid, 0, 2, 3)]
    assert part.aborted_transactions(0, part.log_end_offset) == [AbortedTxn(pid, 0, 2, 3)]
    assert part.last_stable_offset == 3


def test_a_second_producer_fences_the_first() -> None:
    c = Cluster()
    pid, epoch = _begin(c)
    c.produce(T0, pid, epoch, 0)
    # The new instance's InitProducerId aborts the open transaction first.
    assert c.driver.init(TXN, 60_000).error_code == E.CONCURRENT_TRANSACTIONS
    c.deliver_markers()
    second = c.driver.init(TXN, 60_000)
    assert (second.producer_id, second.producer_epoch) == (pid, epoch + 2)
    # The zombie cannot commit (PRODUCER_FENCED; INVALID_PRODUCER_EPOCH before EndTxn v2)...
    assert c.driver.end(True, TXN, pid, epoch).error_code == E.PRODUCER_FENCED
    assert c.driver.end(True, TXN, pid, epoch, version=1).error_code == E.INVALID_PRODUCER_EPOCH
    # ...nor write: the abort marker carried the fencing epoch.
    refused = c.produce(T0, pid, epoch, 1)
    assert isinstance(refused, ProducerStateError) and refused.code == E.INVALID_PRODUCER_EPOCH
    assert c.partition(T0).aborted.all() == [AbortedTxn(pid, 0, 1, 2)]


def test_a_hung_transaction_is_aborted_by_its_timeout() -> None:
    c = Cluster(
        TxnConfig(transaction_abort_timed_out_transaction_cleanup_interval_ms=1000,
                  transaction_version=1)
    )
    pid, epoch = _begin(c, timeout=5000)
    c.produce(T0, pid, epoch, 0)
    c.driver.now = 5000
    assert c.driver.tick(ABORT_TIMED_OUT_TRANSACTIONS).markers == ()
    c.driver.now = 6000
    result = c.driver.tick(ABORT_TIMED_OUT_TRANSACTIONS)
    (marker,) = result.markers
    assert marker.producer_epoch == epoch + 1
    assert c.partition(T0).last_stable_offset == 0
    c.deliver_markers()
    assert c.partition(T0).last_stable_offset == 2  # read_committed consumers move past it
    assert c.driver.end(True, TXN, pid, epoch).error_code == E.PRODUCER_FENCED


def test_an_open_transaction_survives_a_restart_and_commits() -> None:
    c = Cluster()
    pid, epoch = _begin(c)
    c.produce(T0, pid, epoch, 0)
    loaded = c.restart()
    assert loaded.markers == ()
    metadata = c.driver.coordinator.transaction_metadata(TXN)
    assert metadata is not None and metadata.state == S.ONGOING
    assert c.driver.end(True, TXN, pid, epoch).error_code == E.NONE
    c.deliver_markers()
    assert c.partition(T0).last_stable_offset == 2


def test_a_restart_during_commit_resends_the_markers() -> None:
    c = Cluster()
    pid, epoch = _begin(c)
    c.produce(T0, pid, epoch, 0)
    c.driver.end(True, TXN, pid, epoch)  # PrepareCommit written, markers not yet
    loaded = c.restart()
    (marker,) = loaded.markers
    assert (marker.transactional_id, marker.partitions) == (TXN, (T0,))
    assert c.driver.init(TXN, 60_000).error_code == E.CONCURRENT_TRANSACTIONS
    c.deliver_markers()
    records = log_records(c.driver.last)
    assert [r.value.state for r in records if r.value] == [S.COMPLETE_COMMIT]
    assert c.partition(T0).last_stable_offset == 2
    assert c.driver.init(TXN, 60_000).producer_epoch == epoch + 1


def test_fencing_holds_across_a_restart() -> None:
    c = Cluster()
    pid, epoch = _begin(c)
    assert c.driver.end(False, TXN, pid, epoch).error_code == E.NONE
    c.deliver_markers()
    assert c.driver.init(TXN, 60_000).producer_epoch == epoch + 1
    c.restart()
    assert c.driver.add((T0,), TXN, pid, epoch) == {T0: E.PRODUCER_FENCED}
    assert c.driver.add((T0,), TXN, pid, epoch + 1) == {T0: E.NONE}


def test_producer_ids_stay_unique_across_restarts() -> None:
    c = Cluster()
    first = c.driver.init("first", 1000).producer_id
    c.restart()
    second = c.driver.init("second", 1000).producer_id
    assert second > first


def test_a_batch_of_additions_is_answered_once_every_one_is_decided() -> None:
    """AddPartitionsToTxn v4+ (from brokers): one transaction verified at once, another added
    once its record is appended; an empty batch is answered at once."""
    d = Driver(TxnConfig(transaction_version=2))
    first = d.init("first", 1000)
    second = d.init("second", 1000)
    body = {"transactions": [
        {"transactional_id": "first", "producer_id": first.producer_id,
         "producer_epoch": first.producer_epoch, "verify_only": True,
         "topics": [{"name": "t", "partitions": [0]}]},
        {"transactional_id": "second", "producer_id": second.producer_id,
         "producer_epoch": second.producer_epoch, "verify_only": False,
         "topics": [{"name": "t", "partitions": [1]}]},
    ]}
    result = handle_add_partitions_to_txn(d.coordinator, Version(4), body, "t", d.now)
    assert result.replies == ()  # the second addition is not durable yet
    (reply,) = d.settle(result).replies
    codes = [
        (txn["transactional_id"], [
            p["partition_error_code"]
            for t in txn["topic_results"] for p in t["results_by_partition"]
        ])
        for txn in reply.response["results_by_transaction"]
    ]
    assert codes == [("first", [E.TRANSACTION_ABORTABLE]), ("second", [E.NONE])]
    empty = handle_add_partitions_to_txn(d.coordinator, Version(4), {"transactions": []}, "e", 0)
    assert [r.response for r in empty.replies] == [
        {"throttle_time_ms": 0, "error_code": E.NONE, "results_by_transaction": []}]
