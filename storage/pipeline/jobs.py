"""The pipeline's jobs, in the DataFrame API, over the ``kcoord-log`` DataFrame.

Every job keys by ``data_dir`` as well: a data directory is one kcoord instance, and log
positions (``log_index``) only order records within one directory. Groups of the same
name in two directories are two groups.

- :func:`offsets_latest`: the live committed offset per (data_dir, group, topic,
  partition): the latest record per key by log position *including* tombstones, then
  tombstones dropped; equal to replaying the log (last write wins, tombstones delete).
- :func:`offset_commits`: every commit with the time since the previous commit of its
  partition, the offset advance, and whether a transaction made it (``transactional``);
  :func:`commit_rates`: commits per group per minute.
- the group jobs (rebalances, the groups summary) are in ``group_jobs``.

Time windows (:func:`apply_window`): ``until`` cuts the log at the first record later
than it (the state as of ``until``: tombstones, which carry no time, take the time of the
record before them); ``since`` drops history (commits, rebalances) before it but not the
state it builds on.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .columns import (
    CORRUPT,
    OFFSET_COMMIT,
    TORN_TAIL,
    TXN_OFFSET_COMMIT,
)

__all__ = [
    "GROUP_KEY",
    "OFFSET_KEY",
    "apply_window",
    "as_timestamp",
    "commit_rates",
    "offset_commits",
    "offsets_latest",
    "problems",
]

OFFSET_KEY = ["data_dir", "group", "topic", "partition"]
GROUP_KEY = ["data_dir", "group"]


def as_timestamp(ms: Column) -> Column:
    """Epoch milliseconds (-1 / null = none) as a timestamp."""
    return F.when(ms >= 0, F.timestamp_millis(ms))


def problems(df: DataFrame) -> DataFrame:
    """Torn tails and corrupt inputs: which file, which byte offset, what."""
    return df.where(F.col("record_type").isin(TORN_TAIL, CORRUPT)).select(
        "data_dir", "segment", "position", "record_type", "problem"
    )


def apply_window(df: DataFrame, since_ms: int | None, until_ms: int | None) -> DataFrame:
    """Add ``event_ms`` (the record's time, tombstones: the time of the record before
    them) and, with ``until_ms``, cut each directory's log at its first record later than
    that. ``since_ms`` is only recorded (``history_since`` column) for the history jobs;
    the state they build on needs the whole prefix of the log."""
    records = df.where(F.col("log_index").isNotNull())
    if until_ms is None and since_ms is None:
        return records.withColumn("event_ms", F.col("timestamp"))
    w = (
        Window.partitionBy("data_dir")
        .orderBy("log_index")
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    out = records.withColumn("event_ms", F.last("timestamp", ignorenulls=True).over(w))
    if until_ms is not None:
        # The first record later than `until` and everything after it are cut.
        late = F.when(F.col("event_ms") > F.lit(until_ms), F.lit(1)).otherwise(F.lit(0))
        out = out.withColumn("_late", F.max(late).over(w)).where(F.col("_late") == 0)
        out = out.drop("_late")
    return out


def _since(df: DataFrame, since_ms: int | None, column: str) -> DataFrame:
    return df if since_ms is None else df.where(F.col(column) >= F.lit(since_ms))


# --------------------------------------------------------------------------------------
# Offsets


def offsets_latest(df: DataFrame) -> DataFrame:
    """Live committed offsets: (data_dir, group, topic, partition, offset, leader_epoch,
    metadata, commit_timestamp, expire_timestamp, commit_time, log_index).

    The latest record per key by ``log_index``, tombstones included, then tombstones
    dropped. In two aggregations, so that the one over every record is a hash aggregation
    (fixed-width buffers: ``max_by`` of numbers) and only the small second one carries
    the metadata string (an aggregation buffer holding a string makes Spark sort every
    row instead): first the latest record per key *and metadata value*, then the latest
    of those per key."""
    commits = df.where(F.col("record_type") == OFFSET_COMMIT)
    fields = ["tombstone", "offset", "leader_epoch", "commit_timestamp", "expire_timestamp"]
    per_metadata = commits.groupBy(*OFFSET_KEY, "metadata").agg(
        F.max("log_index").alias("log_index"),
        *[F.max_by(name, "log_index").alias(name) for name in fields],
    )
    latest = per_metadata.groupBy(*OFFSET_KEY).agg(
        F.max_by(F.struct(*fields, "metadata", "log_index"), "log_index").alias("l")
    )
    return latest.where(~F.col("l.tombstone")).select(
        *OFFSET_KEY,
        F.col("l.offset").alias("offset"),
        F.col("l.leader_epoch").alias("leader_epoch"),
        F.col("l.metadata").alias("metadata"),
        F.col("l.commit_timestamp").alias("commit_timestamp"),
        F.col("l.expire_timestamp").alias("expire_timestamp"),
        as_timestamp(F.col("l.commit_timestamp")).alias("commit_time"),
        F.col("l.log_index").alias("log_index"),
    )


def offset_commits(df: DataFrame, since_ms: int | None = None) -> DataFrame:
    """Every commit (tombstones excluded) with ``since_previous_ms`` (time since the
    previous commit of the partition), ``offset_advance`` (offset minus the previous one;
    null for a partition's first commit) and ``transactional``: the commit a transaction's
    COMMIT marker made (the staged offset's end, a TxnOffsetCommit record of the same key,
    is the very next entry of the log).

    One shuffle, one sort and one window operator for the whole dataset (it is most of
    the log): the rows are clustered by ``group`` (what the Parquet output is partitioned
    by, so the write needs neither another shuffle nor another sort), sorted by (group,
    data_dir, topic, partition, log_index), and both the staged end that follows a commit
    (``lead``) and the commit before it (the last commit row of the frame before the row)
    are computed in that one pass over the order; the staged ends are dropped after."""
    key = ["group", "data_dir", "topic", "partition"]  # OFFSET_KEY, group first
    w = Window.partitionBy(*key).orderBy("log_index")
    before = w.rowsBetween(Window.unboundedPreceding, -1)
    is_commit = F.col("record_type") == OFFSET_COMMIT
    rows = df.where((is_commit & ~F.col("tombstone"))
                    | (F.col("record_type") == TXN_OFFSET_COMMIT)).repartition("group")
    next_staged_end = (F.lead("record_type").over(w) == TXN_OFFSET_COMMIT) & (
        F.lead("log_index").over(w) == F.col("log_index") + 1)
    previous = F.last(
        F.when(is_commit, F.struct(F.col("commit_timestamp").alias("ts"),
                                   F.col("offset").alias("offset"))),
        ignorenulls=True,
    ).over(before)
    kept = [*OFFSET_KEY, "log_index", "offset", "leader_epoch", "metadata",
            "commit_timestamp", "expire_timestamp"]
    marked = rows.select(
        *kept,
        "record_type",
        F.coalesce(next_staged_end, F.lit(False)).alias("transactional"),
        previous.alias("_previous"),
    ).where(is_commit)
    out = marked.select(
        *kept,
        "transactional",
        as_timestamp(F.col("commit_timestamp")).alias("commit_time"),
        (F.col("commit_timestamp") - F.col("_previous.ts")).alias("since_previous_ms"),
        (F.col("offset") - F.col("_previous.offset")).alias("offset_advance"),
    )
    return _since(out, since_ms, "commit_timestamp")


def commit_rates(commits: DataFrame) -> DataFrame:
    """Per (data_dir, group, minute): commits, partitions committed, offsets advanced."""
    return (
        commits.where(F.col("commit_time").isNotNull())
        .groupBy(*GROUP_KEY, F.date_trunc("minute", "commit_time").alias("minute"))
        .agg(
            F.count(F.lit(1)).alias("commits"),
            F.count_distinct("topic", "partition").alias("partitions"),
            F.sum(F.greatest(F.coalesce("offset_advance", F.lit(0)), F.lit(0))).alias(
                "offset_advance"
            ),
        )
    )
