"""The server side of the transaction shard: the ``TransactionCoordinator`` runs in the
coordinator runtime beside the group coordinator (``CoordinatorRuntime``: one append queue,
one timer loop, one Result vocabulary); this module gives it what lives outside the sans-I/O
core -- the topic store and the marker writer.

``TransactionRuntime.run`` attaches the shard to the runtime once the groups are loaded:
the transaction records the runtime met during replay are replayed into it, transactions
left in PrepareCommit/PrepareAbort get their markers again, open ones keep running (a client
may still commit them) until their timeout aborts them. So that a partition's last stable
offset never stays stuck behind a transaction no coordinator knows (topic data from before
transaction state was kept, say), :meth:`TransactionRuntime.abort_orphans` writes an ABORT
marker for those.

Markers (Kafka's WriteTxnMarkers): once a PrepareCommit/PrepareAbort is durable the runtime
hands its markers to :meth:`TransactionRuntime.write_markers`: a COMMIT or ABORT control
batch on each data partition (``TopicStore.write_marker``, persisted before it is applied)
and, for a group's ``__consumer_offsets`` partition, the staged transactional offsets
committed or dropped through the group shard (their records persisted before they are
applied); then the shard hears ``markers_written`` (or ``markers_failed``) and completes the
transaction. An EndTxn is answered once its markers are written, so a read right after it
sees the transaction's outcome.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import trio

from coordinator.broker.topics import TopicStore
from coordinator.configs.broker_keys import keys_read_by
from coordinator.configs.config_key import Reader
from coordinator.core import LocalContext
from coordinator.core.result import Effects
from coordinator.core.txn_offsets import TxnMarkerRequest, handle_txn_marker
from coordinator.server.runtime import CoordinatorRuntime, ShardHandler
from coordinator.server.waiters import PendingReply, ReadyReply, RuntimeClosed
from coordinator.txn.config import TxnConfig
from coordinator.txn.coordinator import TransactionCoordinator
from coordinator.txn.handlers import handle_add_partitions_to_txn
from coordinator.txn.messages import TxnMarker
from coordinator.txn.placement import OFFSETS_TOPIC, partition_for
from coordinator.txn.state import TopicPartition
from coordinator.txn.transaction_state import TransactionResult, TransactionState
from storage.errors import append_error_of
from storage.records import TransactionStateValue
from wire.constants import ErrorCode

__all__ = ["TransactionRuntime", "start_transaction_runtime", "txn_config"]

log = logging.getLogger(__name__)

RequestT = TypeVar("RequestT")
#: The AddPartitionsToTxn (v5) a Kafka broker sends to add partitions for a TV2 client.
_IMPLICIT_ADD = LocalContext(api_version=5, client_id="kcoord-broker", client_host="/127.0.0.1")
#: The request context of what the broker itself asks (markers, implicit additions).
_BROKER_CONTEXT = LocalContext(api_version=0, client_id="kcoord-txn-marker",
                               client_host="/127.0.0.1")

async def start_transaction_runtime(
    nursery: trio.Nursery, topics: TopicStore, groups: CoordinatorRuntime,
    properties: dict[str, str], node_id: int,
) -> TransactionRuntime:
    """The transaction coordinator, started once the group coordinator has loaded (open
    transactions the restored topic data holds are aborted first)."""
    transactions = TransactionRuntime(
        topics, groups, txn_config(properties, node_id), groups.now_ms)
    await nursery.start(transactions.run)
    return transactions


def txn_config(properties: dict[str, str], node_id: int = 0) -> TxnConfig:
    """The transaction coordinator's settings from the server's Kafka-named properties."""
    values: dict[str, int] = {"broker_id": node_id}
    for key in keys_read_by(Reader.TRANSACTIONS):  # (the broker surface validated them)
        if key in properties:
            values[key.replace(".", "_")] = int(properties[key])
    return TxnConfig(**values)


class TransactionRuntime:
    """The transaction shard's server side: its coordinator, the marker writer, and what
    the broker asks of it (implicit AddPartitionsToTxn, Produce's verification)."""

    def __init__(
        self,
        topics: TopicStore,
        groups: CoordinatorRuntime,
        config: TxnConfig,
        now_ms: Callable[[], int] | None = None,
    ) -> None:
        """``now_ms``: the clock of the markers' timestamps (default: the runtime's)."""
        self.topics = topics
        self.groups = groups
        self._now_ms = now_ms or groups.now_ms
        # Producer ids come from the topic store, like idempotent producers' (it never hands
        # out one that restored topic data holds).
        self.coordinator = TransactionCoordinator(
            config, self._partition_exists, new_producer_id=topics.next_producer_id
        )
        # Transactions whose markers are being written: set once they are.
        self._writing: dict[str, trio.Event] = {}

    def _partition_exists(self, tp: TopicPartition) -> bool:
        return tp.topic == OFFSETS_TOPIC or self.topics.has_partition(tp.topic, tp.partition)

    @property
    def transaction_version(self) -> int:
        """The finalized ``transaction.version`` feature level."""
        return self.coordinator.config.transaction_version

    async def add_partitions_implicitly(
        self, transactional_id: str, producer_id: int, producer_epoch: int,
        partitions: Sequence[TopicPartition],
    ) -> dict[TopicPartition, ErrorCode]:
        """KIP-890 part 2: add ``partitions`` to the producer's transaction on its behalf
        (the AddPartitionsToTxn v5 a Kafka broker sends for a Produce v12+ or TxnOffsetCommit
        v5+); the errors as Produce and TxnOffsetCommit answer them: PRODUCER_FENCED is
        INVALID_PRODUCER_EPOCH (``AddPartitionsToTxnManager``)."""
        topics: dict[str, list[int]] = {}
        for tp in partitions:
            topics.setdefault(tp.topic, []).append(tp.partition)
        request = {"transactions": [{
            "transactional_id": transactional_id, "producer_id": producer_id,
            "producer_epoch": producer_epoch, "verify_only": False,
            "topics": [{"name": name, "partitions": ps} for name, ps in topics.items()],
        }]}
        response = await self.call(handle_add_partitions_to_txn, _IMPLICIT_ADD, request)
        (added,) = response["results_by_transaction"]
        fenced = ErrorCode.PRODUCER_FENCED
        return {
            TopicPartition(t["name"], p["partition_index"]):
                ErrorCode.INVALID_PRODUCER_EPOCH if p["partition_error_code"] == fenced
                else ErrorCode(p["partition_error_code"])
            for t in added["topic_results"] for p in t["results_by_partition"]
        }

    def in_transaction(
        self, transactional_id: str, producer_id: int, producer_epoch: int, tp: TopicPartition
    ) -> bool:
        """Whether ``tp`` was added to the producer's ongoing transaction (Produce's
        transaction verification, KIP-890's ``transaction.partition.verification.enable``).
        Not while the transaction is being committed or aborted: with transaction version
        2 its metadata already holds the next epoch then (Kafka's verification answers
        CONCURRENT_TRANSACTIONS)."""
        metadata = self.coordinator.transaction_metadata(transactional_id)
        return (
            metadata is not None
            and metadata.state == TransactionState.ONGOING
            and metadata.pending_state is None
            and metadata.producer_id == producer_id
            and metadata.producer_epoch == producer_epoch
            and tp in metadata.topic_partitions
        )

    # ------------------------------------------------------------------ lifecycle

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Attach the shard to the runtime once the groups are loaded (replay, re-send
        pending markers, arm the periodic jobs), abort orphaned transactions, report
        started."""
        await self.groups.wait_loaded()
        for record in self.groups.transaction_records:
            if isinstance(record.value, TransactionStateValue):
                self.topics.reserve_producer_id(record.value.producer_id)
        self.groups.attach_transactions(self.coordinator, self)
        self.abort_orphans()
        task_status.started()

    def _known_open(self) -> set[tuple[int, TopicPartition]]:
        """(producer id, partition) of every transaction the coordinator has not ended."""
        known: set[tuple[int, TopicPartition]] = set()
        for txn_id in self.coordinator.transactional_ids():
            metadata = self.coordinator.transaction_metadata(txn_id)
            if metadata is not None:
                known.update((metadata.producer_id, tp) for tp in metadata.topic_partitions)
        return known

    def abort_orphans(self) -> None:
        """Abort the transactions restored topic data holds open that no transactional id
        of the coordinator's state holds (their state was never persisted)."""
        now = self._now_ms()
        known = self._known_open()
        for name in self.topics.names():
            topic = self.topics.get(name)
            assert topic is not None
            for partition in topic.partitions:
                for txn in partition.txn.producers.ongoing_transactions():
                    if (txn.producer_id, TopicPartition(name, partition.index)) in known:
                        continue
                    entry = partition.txn.producers.last_entry(txn.producer_id)
                    epoch = entry.producer_epoch if entry is not None else 0
                    log.warning(
                        "aborting producer %d's open transaction on %s-%d (started at offset "
                        "%d): no transactional id holds it",
                        txn.producer_id, name, partition.index, txn.first_offset,
                    )
                    self.topics.write_marker(
                        name, partition.index, txn.producer_id, epoch, 0, False, now
                    )

    # ------------------------------------------------------------------ requests

    async def call(self, handler: ShardHandler[RequestT], ctx: Any, request: RequestT) -> Any:
        """Run one of the shard's handlers in the runtime; its reply."""
        return await self.groups.call(handler, ctx, request, self.coordinator)

    async def markers_settled(self, transactional_id: str) -> None:
        """Return once the markers being written for ``transactional_id`` (if any) are."""
        writing = self._writing.get(transactional_id)
        if writing is not None:
            await writing.wait()

    # ------------------------------------------------------------------ markers

    def write_markers(self, markers: Sequence[TxnMarker]) -> None:
        """Write transactions' markers (the runtime calls this as soon as their
        PrepareCommit/PrepareAbort is durable): data partitions at once, offsets partitions
        through the group shard; the shard hears the outcome."""
        for marker in markers:
            try:
                self._write(marker)
            except Exception:
                log.exception("writing the markers of %s failed", marker.transactional_id)

    def _write(self, marker: TxnMarker) -> None:
        txn_id = marker.transactional_id
        self._writing.setdefault(txn_id, trio.Event())
        commit = marker.result == TransactionResult.COMMIT
        now = self._now_ms()
        offsets: list[PendingReply | ReadyReply] = []
        for tp in sorted(marker.partitions):
            try:
                if tp.topic == OFFSETS_TOPIC:
                    pending = self._offsets_marker(marker.producer_id, tp.partition, commit)
                    if pending is not None:
                        offsets.append(pending)
                else:
                    self.topics.write_marker(
                        tp.topic, tp.partition, marker.producer_id, marker.producer_epoch,
                        marker.coordinator_epoch, commit, now,
                    )
            except Exception as exc:
                log.exception("writing the %s marker of %s to %s-%d failed",
                              marker.result.name, txn_id, tp.topic, tp.partition)
                self._written(marker, append_error_of(exc))
                return
        if offsets:
            self.groups.spawn(self._offsets_written, marker, offsets)
        else:
            self._written(marker, None)

    def _offsets_marker(
        self, producer_id: int, partition: int, commit: bool
    ) -> PendingReply | ReadyReply | None:
        """Commit or drop the producer's staged offsets of the groups on ``partition``."""
        staged = self.groups.coordinator.staged_offset_groups(producer_id)
        partitions = self.coordinator.config.offsets_topic_num_partitions
        group_ids = [g for g in staged if partition_for(g, partitions) == partition]
        if not group_ids:
            return None
        request: TxnMarkerRequest = {
            "producer_id": producer_id, "group_ids": group_ids, "committed": commit
        }
        pending: PendingReply | ReadyReply | None = self.groups.submit(
            handle_txn_marker, _BROKER_CONTEXT, request
        )
        return pending

    async def _offsets_written(
        self, marker: TxnMarker, offsets: list[PendingReply | ReadyReply]
    ) -> None:
        error = None
        try:
            for pending in offsets:
                answer = await pending.wait()
                if answer.get("error_code"):
                    error = ErrorCode(answer["error_code"])
        except RuntimeClosed:
            return
        self._written(marker, error)

    def _written(self, marker: TxnMarker, error: ErrorCode | None) -> None:
        """Report the markers written (or not: ``error``) to the shard; whoever waits for
        them (``markers_settled``) goes on once the completion they lead to is durable."""
        txn_id = marker.transactional_id
        now = self._now_ms()
        if error is None:
            result = self.coordinator.markers_written(txn_id, marker.partitions, now)
        else:
            result = self.coordinator.markers_failed(txn_id, error, now)
        settled = _Settled(self._writing, txn_id)
        if result.records:
            result = result._replace(callbacks=(*result.callbacks, settled))
        else:
            settled.appended(now, None)
        self.groups.process_transactions(result)


class _Settled:
    """Wakes whoever waits for a transaction's markers once the append of the completion
    they lead to finished (an AppendCallback the server adds to the shard's Result)."""

    __slots__ = ("txn_id", "writing")

    def __init__(self, writing: dict[str, trio.Event], txn_id: str) -> None:
        self.writing = writing
        self.txn_id = txn_id

    def appended(self, now_ms: int, fx: Effects | None) -> None:
        event = self.writing.pop(self.txn_id, None)
        if event is not None:
            event.set()

    def append_failed(self, error: ErrorCode, now_ms: int, fx: Effects | None) -> None:
        self.appended(now_ms, fx)
