"""The transaction runtime: the one owner of the sans-I/O ``TransactionCoordinator`` in a
server, and the marker writer between it, the topic store and the group coordinator.

Each call runs the coordinator synchronously on the Trio thread, then carries out its
Result: timers are (re-)armed; markers are written at once, a COMMIT or ABORT control batch
on each data partition (``TopicStore.write_marker``, persisted before it is applied) and,
for the group's ``__consumer_offsets`` partition, the staged transactional offsets
committed or dropped through the group coordinator runtime (their records persisted before
they are applied); ``markers_written`` then completes the transaction; the replies go to
their callers.

The coordinator's records (Kafka's transaction log records, as storage's
``TransactionStateKey`` records) go into the group coordinator's log through its runtime,
in order with the group records, before any reply or marker of the call: the coordinator's
state is what a replay rebuilds. At start the records the group runtime met during replay
are replayed here; transactions left in PrepareCommit/PrepareAbort get their markers again,
open ones keep running (a client may still commit them) until their timeout aborts them.
So that a partition's last stable offset never stays stuck behind a transaction no
coordinator knows (topic data from before transaction state was kept, say),
:meth:`TransactionRuntime.abort_orphans` writes an ABORT marker for those.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import trio

from coordinator.broker.topics import TopicStore
from coordinator.core import LocalContext
from coordinator.core.result import (
    ReplyToken,
    Result,
    ScheduleTimer,
    ShardResponse,
    ShardTimerKey,
)
from coordinator.core.txn_offsets import TxnMarkerRequest, handle_txn_marker
from coordinator.server.runtime import AppendFailed
from coordinator.txn import (
    KAFKA_CONFIG_NAMES,
    OFFSETS_TOPIC,
    TopicPartition,
    TransactionResult,
    TransactionState,
    TxnConfig,
    TxnMarker,
    partition_for,
)
from coordinator.txn.coordinator import TransactionCoordinator
from coordinator.txn.handlers import handle_add_partitions_to_txn
from coordinator.txn.messages import AddPartitionsToTxnRequest
from storage.errors import append_error_of
from storage.records import TransactionStateValue
from wire.constants import ErrorCode

__all__ = ["TransactionRuntime", "txn_config"]

log = logging.getLogger(__name__)

RequestT = TypeVar("RequestT")
#: The AddPartitionsToTxn version a Kafka broker adds partitions with for a TV2 client.
_IMPLICIT_ADD_VERSION = 5
#: The request context of the markers the broker itself sends to the group coordinator.
_MARKER_CONTEXT = LocalContext(api_version=0, client_id="kcoord-txn-marker",
                               client_host="/127.0.0.1")

#: The TxnConfig fields a server's properties set (the broker surface validates them).
_CONFIGURABLE = (
    "transaction_max_timeout_ms",
    "transactional_id_expiration_ms",
    "abort_timed_out_transaction_cleanup_interval_ms",
    "remove_expired_transactional_id_cleanup_interval_ms",
    "transaction_version",
)


def txn_config(properties: dict[str, str], node_id: int = 0) -> TxnConfig:
    """The transaction coordinator's settings from the server's Kafka-named properties."""
    values: dict[str, int] = {"broker_id": node_id}
    for field_name in _CONFIGURABLE:
        key = KAFKA_CONFIG_NAMES[field_name]
        if key in properties:
            values[field_name] = int(properties[key])
    return TxnConfig(**values)


class TransactionRuntime:
    """Feeds transaction requests and timer expiries to the coordinator; writes markers."""

    def __init__(
        self,
        topics: TopicStore,
        groups: Any,
        config: TxnConfig,
        now_ms: Callable[[], int],
    ) -> None:
        self.topics = topics
        self.groups = groups  # coordinator.server.runtime.CoordinatorRuntime
        self._now_ms = now_ms
        # Producer ids come from the topic store, like idempotent producers' (it never hands
        # out one that restored topic data holds).
        self.coordinator = TransactionCoordinator(
            config, self._partition_exists, new_producer_id=topics.next_producer_id
        )
        self._tokens = itertools.count(1)
        self._replies: dict[ReplyToken, ShardResponse] = {}
        self._timers: dict[ShardTimerKey, int] = {}
        self._timers_changed = trio.Event()

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
        request = AddPartitionsToTxnRequest(
            transactional_id, producer_id, producer_epoch, tuple(partitions),
            _IMPLICIT_ADD_VERSION, False,
        )
        response = await self.call(handle_add_partitions_to_txn, request)
        return {
            tp: ErrorCode.INVALID_PRODUCER_EPOCH if code == ErrorCode.PRODUCER_FENCED
            else ErrorCode(code)
            for tp, code in response.errors.items()
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
        """Load (re-send pending markers, arm the periodic jobs, abort orphaned transactions),
        then fire timers."""
        await self.groups.wait_loaded()
        for record in self.groups.transaction_records:
            if isinstance(record.value, TransactionStateValue):
                self.topics.reserve_producer_id(record.value.producer_id)
            self.coordinator.replay(record)
        self.groups.transaction_records = []
        await self._process(self.coordinator.on_loaded(self._now_ms()))
        await self.abort_orphans()
        task_status.started()
        while True:
            now = self._now_ms()
            for key, deadline in sorted(self._timers.items(), key=lambda kv: kv[1]):
                if deadline <= now:
                    del self._timers[key]
                    try:
                        await self._process(self.coordinator.fire_timer(key, now))
                    except Exception:
                        log.exception("the transaction coordinator failed handling %r", key)
            wait_s = (min(self._timers.values(), default=now + 60_000) - self._now_ms()) / 1000
            with trio.move_on_after(max(wait_s, 0.0) + 0.0005):
                await self._timers_changed.wait()
            self._timers_changed = trio.Event()

    def _known_open(self) -> set[tuple[int, TopicPartition]]:
        """(producer id, partition) of every transaction the coordinator has not ended."""
        known: set[tuple[int, TopicPartition]] = set()
        for txn_id in self.coordinator.transactional_ids():
            metadata = self.coordinator.transaction_metadata(txn_id)
            if metadata is not None:
                known.update((metadata.producer_id, tp) for tp in metadata.topic_partitions)
        return known

    async def abort_orphans(self) -> None:
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

    async def call(
        self,
        handler: Callable[[TransactionCoordinator, RequestT, ReplyToken, int], Result],
        request: RequestT,
    ) -> Any:
        """Run one coordinator handler; its reply once the markers it started are written."""
        token = next(self._tokens)
        await self._process(handler(self.coordinator, request, token, self._now_ms()))
        return self._replies.pop(token)

    async def _process(self, result: Result) -> None:
        """Persist, then apply: the records are appended, then the coordinator completes
        their transitions (or reverts them, answering the mapped error, if the append
        failed); then timers, replies and markers, then what followed."""
        follow = None
        if result.records:
            try:
                await self.groups.append_records(result.records)
            except AppendFailed as failed:
                follow = self.coordinator.append_failed(result, failed.error, self._now_ms())
                result = Result(timers=result.timers, markers=result.markers)
        if follow is None and result.callbacks:
            follow = self.coordinator.append_done(result, self._now_ms())
        for change in result.timers:
            if isinstance(change, ScheduleTimer):
                self._timers[change.key] = change.deadline_ms
            else:
                self._timers.pop(change.key, None)
        if result.timers:
            self._timers_changed.set()
        for reply in result.replies:
            self._replies[reply.token] = reply.response
        for marker in result.markers:
            await self._write_markers(marker)
        if follow is not None:
            await self._process(follow)

    async def _write_markers(self, marker: TxnMarker) -> None:
        commit = marker.result == TransactionResult.COMMIT
        now = self._now_ms()
        for tp in sorted(marker.partitions):
            try:
                if tp.topic == OFFSETS_TOPIC:
                    await self._offsets_marker(marker.producer_id, tp.partition, commit)
                else:
                    self.topics.write_marker(
                        tp.topic, tp.partition, marker.producer_id, marker.producer_epoch,
                        marker.coordinator_epoch, commit, now,
                    )
            except Exception as exc:
                log.exception("writing the %s marker of %s to %s-%d failed",
                              marker.result.name, marker.transactional_id, tp.topic, tp.partition)
                error = exc.error if isinstance(exc, AppendFailed) else append_error_of(exc)
                await self._process(
                    self.coordinator.markers_failed(marker.transactional_id, error, now)
                )
                return
        await self._process(self.coordinator.markers_written(
            marker.transactional_id, marker.partitions, self._now_ms()))

    async def _offsets_marker(self, producer_id: int, partition: int, commit: bool) -> None:
        """Commit or drop the producer's staged offsets of the groups on ``partition``."""
        staged = self.groups.coordinator.store.pending_txn.get(producer_id, {})
        partitions = self.coordinator.config.offsets_topic_num_partitions
        group_ids = [g for g in staged if partition_for(g, partitions) == partition]
        if group_ids:
            request: TxnMarkerRequest = {
                "producer_id": producer_id, "group_ids": group_ids, "committed": commit
            }
            answer = await self.groups.call(handle_txn_marker, _MARKER_CONTEXT, request)
            if answer.get("error_code", 0):
                raise AppendFailed(ErrorCode(answer["error_code"]))
