"""Shared helpers for the transaction tests: metadata builders and a coordinator driver."""

from __future__ import annotations

import itertools
from typing import Any, NamedTuple

from coordinator.core.result import Result
from coordinator.txn.config import TxnConfig
from coordinator.txn.coordinator import TransactionCoordinator
from coordinator.txn.handlers import (
    handle_add_offsets_to_txn,
    handle_add_partitions_to_txn,
    handle_end_txn,
    handle_init_producer_id,
)
from coordinator.txn.log import TransactionLogRecord, from_storage
from coordinator.txn.partition import PartitionTransactions
from coordinator.txn.producer_entry import NO_SEQUENCE, BatchInfo, ControlType
from coordinator.txn.producer_state import AppendOrigin, ProducerStateError
from coordinator.txn.state import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    TopicPartition,
    TransactionMetadata,
)
from coordinator.txn.timers import TxnTimerKey
from coordinator.txn.transaction_state import TransactionResult, TransactionState
from storage.records import Record, TransactionStateKey
from wire.constants import ErrorCode

TXN_ID = "known"
PRODUCER_ID = 10
PRODUCER_EPOCH = 1
TP1 = TopicPartition("topic1", 0)
TP2 = TopicPartition("topic2", 0)
#: Kafka's coordinator tests mock ``transactionVersionLevel`` (the server's level) to TV_0 or
#: TV_1; kcoord's default (2, as a new Kafka 4 cluster) is chosen by the TV2 tests.
TV1_CONFIG = TxnConfig(transaction_version=1)


class Version(NamedTuple):
    """A request context: the API version is all the transaction handlers read."""

    api_version: int


class InitProducerIdResponse(NamedTuple):
    """The fields of an InitProducerId answer (-1 ids with an error)."""

    error_code: int
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH


class EndTxnResponse(NamedTuple):
    """The fields of an EndTxn answer (the id and epoch are on the wire from v5)."""

    error_code: int
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH


def log_records(result: Result) -> list[TransactionLogRecord]:
    """The transaction log records of a Result, as Kafka's TransactionLogRecord."""
    return [from_storage(r) for r in result.records if isinstance(r.key, TransactionStateKey)]


def meta(
    state: TransactionState = TransactionState.EMPTY,
    *,
    transactional_id: str = TXN_ID,
    producer_id: int = PRODUCER_ID,
    producer_epoch: int = PRODUCER_EPOCH,
    last_producer_epoch: int = NO_PRODUCER_EPOCH,
    prev_producer_id: int = NO_PRODUCER_ID,
    next_producer_id: int = NO_PRODUCER_ID,
    txn_timeout_ms: int = 30_000,
    partitions: set[TopicPartition] | None = None,
    start: int = -1,
    last_update: int = 0,
    version: int = 0,
) -> TransactionMetadata:
    """A TransactionMetadata with the fields Kafka's tests pass, named."""
    return TransactionMetadata(
        transactional_id,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        txn_timeout_ms=txn_timeout_ms,
        state=state,
        txn_last_update_timestamp=last_update,
        prev_producer_id=prev_producer_id,
        next_producer_id=next_producer_id,
        last_producer_epoch=last_producer_epoch,
        topic_partitions=partitions,
        txn_start_timestamp=start,
        client_transaction_version=version,
    )


class Driver:
    """A loaded coordinator, a clock and one-line request helpers returning the response."""

    def __init__(
        self,
        config: TxnConfig | None = None,
        replay: tuple[Record, ...] = (),
        now: int = 0,
        **kwargs: Any,
    ) -> None:
        """A coordinator that replays ``replay`` (a restart), then loads at ``now``."""
        self.coordinator = TransactionCoordinator(config or TV1_CONFIG, **kwargs)
        for record in replay:
            self.coordinator.replay(record)
        self.now = now
        self.tokens = itertools.count()
        #: How many of the next appends fail, and with which log-append error.
        self.failures = 0
        self.append_error = ErrorCode.KAFKA_STORAGE_ERROR
        self.results: list[Result] = [Result(records=replay)]
        self.settle(self.coordinator.on_loaded(self.now))

    @property
    def last(self) -> Result:
        return self.results[-1]

    def settle(self, result: Result) -> Result:
        """``result`` with its records appended: the coordinator completes their transitions
        (``append_done``) and what follows is settled too. One Result of everything that
        happened is recorded (``last``) and returned."""
        records: list[Record] = []
        replies: list[Any] = []
        timers = list(result.timers)
        markers = list(result.markers)
        while True:
            if result.records and self.failures:
                # The log refuses the append: the coordinator's replies replace the Result's.
                self.failures -= 1
                result = self.coordinator.append_failed(result, self.append_error, self.now)
                replies += result.replies
                timers += result.timers
                markers += result.markers
                break
            records += result.records
            replies += result.replies
            if not result.callbacks:
                break
            result = self.coordinator.append_done(result, self.now)
            timers += result.timers
            markers += result.markers
        settled = Result(tuple(records), tuple(replies), tuple(timers), (), tuple(markers))
        self.results.append(settled)
        return settled

    def tick(self, key: TxnTimerKey) -> Result:
        """Fire the timer ``key`` now; the settled Result."""
        return self.settle(self.coordinator.fire_timer(key, self.now))

    def _call(self, handler: Any, version: int, body: dict[str, Any]) -> Any:
        """Run one API handler at ``version`` on a wire body; its settled answer."""
        result = handler(self.coordinator, Version(version), body, next(self.tokens), self.now)
        result = self.settle(result)
        assert len(result.replies) == 1, result
        return result.replies[0].response

    def place(self, metadata: TransactionMetadata) -> TransactionMetadata:
        """Put metadata in the cache as Kafka's tests do with their mocked state manager."""
        placed = self.coordinator.manager.put_transaction_state_if_not_exists(metadata)
        assert isinstance(placed, tuple) and placed[1] is metadata
        return metadata

    def init(
        self,
        txn_id: str | None = TXN_ID,
        timeout: int = 1000,
        producer_id: int = NO_PRODUCER_ID,
        producer_epoch: int = NO_PRODUCER_EPOCH,
        version: int = 4,
    ) -> InitProducerIdResponse:
        body = {"transactional_id": txn_id, "transaction_timeout_ms": timeout,
                "producer_id": producer_id, "producer_epoch": producer_epoch}
        r = self._call(handle_init_producer_id, version, body)
        return InitProducerIdResponse(r["error_code"], r["producer_id"], r["producer_epoch"])

    def add(
        self,
        partitions: tuple[TopicPartition, ...] = (TP1,),
        txn_id: str = TXN_ID,
        producer_id: int = PRODUCER_ID,
        producer_epoch: int = PRODUCER_EPOCH,
        version: int = 3,
        verify_only: bool = False,
    ) -> dict[TopicPartition, int]:
        if verify_only:
            version = max(version, 4)  # VerifyOnly is a v4+ (broker) request's
        topics: dict[str, list[int]] = {}
        for tp in partitions:
            topics.setdefault(tp.topic, []).append(tp.partition)
        wire_topics = [{"name": name, "partitions": ps} for name, ps in topics.items()]
        if version < 4:
            body: dict[str, Any] = {
                "v3_and_below_transactional_id": txn_id, "v3_and_below_producer_id": producer_id,
                "v3_and_below_producer_epoch": producer_epoch,
                "v3_and_below_topics": wire_topics}
        else:
            body = {"transactions": [{
                "transactional_id": txn_id, "producer_id": producer_id,
                "producer_epoch": producer_epoch, "verify_only": verify_only,
                "topics": wire_topics}]}
        response = self._call(handle_add_partitions_to_txn, version, body)
        if version < 4:
            results = response["results_by_topic_v3_and_below"]
        else:
            (txn,) = response["results_by_transaction"]
            results = txn["topic_results"]
        return {
            TopicPartition(t["name"], p["partition_index"]): p["partition_error_code"]
            for t in results for p in t["results_by_partition"]
        }

    def add_offsets(
        self,
        group_id: str,
        txn_id: str = TXN_ID,
        producer_id: int = PRODUCER_ID,
        producer_epoch: int = PRODUCER_EPOCH,
        version: int = 3,
    ) -> int:
        body = {"transactional_id": txn_id, "producer_id": producer_id,
                "producer_epoch": producer_epoch, "group_id": group_id}
        code: int = self._call(handle_add_offsets_to_txn, version, body)["error_code"]
        return code

    def end(
        self,
        commit: bool = True,
        txn_id: str = TXN_ID,
        producer_id: int = PRODUCER_ID,
        producer_epoch: int = PRODUCER_EPOCH,
        version: int = 3,
    ) -> EndTxnResponse:
        body = {"transactional_id": txn_id, "producer_id": producer_id,
                "producer_epoch": producer_epoch, "committed": commit}
        r = self._call(handle_end_txn, version, body)
        return EndTxnResponse(r["error_code"], r["producer_id"], r["producer_epoch"])

    def write_markers(self) -> Result:
        """Report every pending marker written; the completions' Result."""
        records = []
        for txn_id, marker in self.coordinator.pending_markers().items():
            result = self.settle(
                self.coordinator.markers_written(txn_id, marker.partitions, self.now)
            )
            records.extend(result.records)
        return Result(records=tuple(records))

    def records(self) -> list[Any]:
        """Every record in the log so far (appended, or replayed at start), in order."""
        return [r for result in self.results for r in result.records]


class Cluster:
    """A coordinator driver plus real partition states: markers become control batches."""

    def __init__(self, config: TxnConfig | None = None) -> None:
        self.config = config
        self.driver = Driver(config)
        self.partitions: dict[TopicPartition, PartitionTransactions] = {}

    def partition(self, tp: TopicPartition) -> PartitionTransactions:
        return self.partitions.setdefault(tp, PartitionTransactions(f"{tp.topic}-{tp.partition}"))

    def produce(self, tp: TopicPartition, pid: int, epoch: int, seq: int, txn: bool = True) -> Any:
        """One single-record batch; the AppendCheck, or the ProducerStateError raised."""
        batch = BatchInfo(pid, epoch, seq, 0, self.driver.now, is_transactional=txn)
        try:
            return self.partition(tp).append(batch)
        except ProducerStateError as refused:
            return refused

    def deliver_markers(self) -> None:
        """Write every pending marker as a control batch, then report it written."""
        coordinator = self.driver.coordinator
        for txn_id, marker in coordinator.pending_markers().items():
            control = (
                ControlType.COMMIT
                if marker.result == TransactionResult.COMMIT
                else (ControlType.ABORT)
            )
            for tp in marker.partitions:
                batch = BatchInfo(
                    marker.producer_id,
                    marker.producer_epoch,
                    NO_SEQUENCE,
                    0,
                    self.driver.now,
                    True,
                    control,
                    marker.coordinator_epoch,
                )
                self.partition(tp).append(batch, AppendOrigin.COORDINATOR)
            self.driver.settle(
                coordinator.markers_written(txn_id, marker.partitions, self.driver.now)
            )

    def restart(self) -> Result:
        """A new coordinator replaying every record written so far; its on_loaded Result."""
        self.driver = Driver(self.config, tuple(self.driver.records()), self.driver.now)
        return self.driver.last
