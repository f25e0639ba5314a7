"""The broker side of the log cleaner (``storage.log_cleaner``): which compacted partition
to clean next, running the round off the event loop, and applying it to the partition in
memory (Kafka's ``LogCleaner`` thread and ``LogCleanerManager``).

Every ``log.cleaner.backoff.ms`` (15000) when nothing was cleaned, the filthiest partition
of the ``cleanup.policy=compact`` topics whose dirty ratio passes
``min.cleanable.dirty.ratio`` (or whose dirty data is older than ``max.compaction.lag.ms``)
is cleaned: the plan is made on the event loop from the partition's state (log start, last
stable offset, producers, aborted transactions), the round's file work runs in a child
process (``storage.log_cleaner_process``: it reads, filters and rewrites every record,
Python work that in a thread of the server would hold the GIL its event loop needs), which
a worker thread waits for before it installs the swaps, and the result is applied on the
event loop: the batches of the rewritten groups are replaced in memory, the time index
rebuilt, the aborted-transaction index pruned. The checkpoint (where the next round's
dirty range starts) is written to ``topics/cleaner-offset-checkpoint`` after each round (in
a thread), as Kafka's; a missing or bad one means a round from the log start. After each
round the retention of ``compact,delete`` topics runs here (the retention task skips
them), so a round and a retention never overlap.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import trio

from coordinator.broker.config import setting
from coordinator.broker.topics import Topic, TopicStore
from storage.directory import segment_name
from storage.log import Log
from storage.log_cleaner import (
    DEFAULT_DEDUPE_BUFFER_SIZE,
    CleanResult,
    CleanRound,
    LastRecord,
    WriteCleaned,
    clean_log,
    write_cleaned,
)
from storage.log_cleaner_plan import CleanerLogConfig, LogToClean, log_to_clean
from storage.log_cleaner_process import write_cleaned_in_child

__all__ = ["LogCleanerManager", "run_log_cleaner"]

log = logging.getLogger(__name__)

LOG_CLEANER_ENABLE = "log.cleaner.enable"
LOG_CLEANER_BACKOFF_MS = "log.cleaner.backoff.ms"
LOG_CLEANER_DEDUPE_BUFFER_SIZE = "log.cleaner.dedupe.buffer.size"


@dataclass(slots=True)
class CleanJob:
    """One partition's round, planned on the event loop."""

    topic: Topic
    index: int
    partition_log: Log
    plan: LogToClean
    round: CleanRound


class LogCleanerManager:
    """Checkpoints and the choice of the filthiest partition."""

    def __init__(self, store: TopicStore,
                 dedupe_buffer_size: int = DEFAULT_DEDUPE_BUFFER_SIZE,
                 write: WriteCleaned = write_cleaned) -> None:
        self.store = store
        self.dedupe_buffer_size = dedupe_buffer_size
        #: Where a round's file work runs (the server: ``write_cleaned_in_child``).
        self.write = write
        #: (topic id, partition) -> first dirty offset (persisted after each round)
        self.checkpoints: dict[tuple[uuid.UUID, int], int] = (
            store.files.read_cleaner_checkpoints() if store.files is not None else {})
        self.rounds = 0

    def grab_filthiest(self, now_ms: int, broker: Mapping[str, str]) -> CleanJob | None:
        """The compacted partition to clean now, or None (Kafka's grabFilthiestCompactedLog):
        the highest dirty ratio among those ``LogToClean.should_clean`` accepts."""
        best: CleanJob | None = None
        for name in self.store.names():
            topic = self.store.get(name)
            if topic is None or not topic.compacted:
                continue
            for partition in topic.partitions:
                job = self.plan(topic, partition.index, now_ms, broker)
                if job is None or not job.plan.should_clean(job.round.config):
                    continue
                if best is None or job.plan.cleanable_ratio > best.plan.cleanable_ratio:
                    best = job
        return best

    def plan(self, topic: Topic, index: int, now_ms: int,
             broker: Mapping[str, str]) -> CleanJob | None:
        """A round for one partition, whatever its dirty ratio; None when it has no closed
        segment or its topic's configs do not parse."""
        files = self.store.files
        if files is None:
            return None
        try:
            config = CleanerLogConfig.from_configs(topic.configs, broker,
                                                   files.segment_bytes_of(topic.topic_id))
        except ValueError:
            return None
        partition = topic.partitions[index]
        partition_log = files.partition_log(topic.topic_id, index)
        infos = files.segment_infos(topic.topic_id, index)
        if partition_log is None or len(infos) < 2:
            return None
        key = (topic.topic_id, index)
        plan = log_to_clean(infos, partition.log_start_offset, partition.log_end_offset,
                            partition.last_stable_offset, self.checkpoints.get(key), now_ms,
                            config)
        if plan.force_update_checkpoint:
            self.checkpoints[key] = plan.first_dirty_offset
        producers = partition.txn.producers.producers
        return CleanJob(topic, index, partition_log, plan, CleanRound(
            infos[:plan.cleanable_segments], plan.first_dirty_offset,
            plan.first_uncleanable_offset, config, now_ms, partition.log_start_offset,
            [(t.first_offset, t.producer_id, t.last_offset)
             for t in partition.txn.aborted.all()],
            {pid: LastRecord(e.last_data_offset if e.last_data_offset >= 0 else None,
                             e.producer_epoch) for pid, e in producers.items()},
            self.dedupe_buffer_size))

    def clean(self, job: CleanJob) -> CleanResult:
        """The round's file work (``self.write``) and its swaps (in a worker thread)."""
        return clean_log(job.partition_log, job.round, self.write)

    def apply(self, job: CleanJob, result: CleanResult) -> None:
        """Make the round visible (on the event loop)."""
        files = self.store.files
        topic = self.store.by_id(job.topic.topic_id)
        if files is None or topic is not job.topic:
            return  # deleted meanwhile
        files.cleaned(topic.topic_id, job.index, result)
        partition = topic.partitions[job.index]
        first = last = None
        for group in result.groups:
            if group.first_offset is None or group.last_offset is None:
                continue
            partition.apply_cleaning(group.first_offset, group.last_offset, group.kept,
                                     os.path.join(job.partition_log.directory,
                                                  segment_name(group.lo)))
            first = group.first_offset if first is None else first
            last = group.last_offset
        if first is not None and last is not None:
            partition.cleaning_done(first, last, result.retained_aborted)
        self.checkpoints[(topic.topic_id, job.index)] = result.end_offset
        self.rounds += 1
        log.info("cleaned %s-%d up to offset %d: %d -> %d bytes, %d of %d records kept, "
                 "offset map %.0f%% full, in %.3fs", topic.name, job.index, result.end_offset,
                 result.bytes_read, result.bytes_written, result.records_kept,
                 result.records_read, 100 * result.map_utilization, result.seconds)

    def logs_to_roll(self, now_ms: int, broker: Mapping[str, str]) -> list[Log]:
        """Active segments of compacted partitions older than ``max.compaction.lag.ms``
        (Kafka rolls them so the cleaner can reach their records)."""
        files = self.store.files
        if files is None:
            return []
        out = []
        for name in self.store.names():
            topic = self.store.get(name)
            if topic is None or not topic.compacted:
                continue
            try:
                config = CleanerLogConfig.from_configs(topic.configs, broker,
                                                       files.segment_bytes_of(topic.topic_id))
            except ValueError:
                continue
            for partition in topic.partitions:
                infos = files.segment_infos(topic.topic_id, partition.index)
                partition_log = files.partition_log(topic.topic_id, partition.index)
                if not infos or partition_log is None or infos[-1].first_offset is None:
                    continue
                if 0 < infos[-1].first_timestamp < now_ms - config.max_compaction_lag_ms:
                    out.append(partition_log)
        return out


def _enabled(config: Mapping[str, str]) -> bool:
    return setting(config, LOG_CLEANER_ENABLE).strip().lower() == "true"


async def run_log_cleaner(store: TopicStore, config: Mapping[str, str],
                          now_ms: Callable[[], int]) -> None:
    """The cleaner's loop (runs for the server's life)."""
    backoff_s = int(setting(config, LOG_CLEANER_BACKOFF_MS)) / 1000
    manager = LogCleanerManager(store, int(setting(config, LOG_CLEANER_DEDUPE_BUFFER_SIZE)),
                                write_cleaned_in_child)
    while True:
        cleaned = False
        try:
            if _enabled(config):
                for partition_log in manager.logs_to_roll(now_ms(), config):
                    await trio.to_thread.run_sync(partition_log.roll)
                job = manager.grab_filthiest(now_ms(), config)
                if job is not None:
                    key = (job.topic.topic_id, job.index)
                    store.cleaning.add(key)
                    try:
                        result = await trio.to_thread.run_sync(manager.clean, job)
                    finally:
                        store.cleaning.discard(key)
                    manager.apply(job, result)
                    cleaned = True
                    if store.files is not None:
                        live = {(t.topic_id, p.index) for n in store.names()
                                if (t := store.get(n)) is not None for p in t.partitions}
                        checkpoints = {k: v for k, v in manager.checkpoints.items()
                                       if k in live}
                        await trio.to_thread.run_sync(store.files.write_cleaner_checkpoints,
                                                      checkpoints)
                for line in store.enforce_retention(now_ms(), config, compacted=True):
                    log.info("retention: %s", line)
        except Exception:
            log.exception("log cleaning failed (it runs again after log.cleaner.backoff.ms)")
        await trio.sleep(0 if cleaned else backoff_s)
