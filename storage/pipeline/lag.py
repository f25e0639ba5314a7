"""Consumer lag: the ``offsets_lag`` dataset and the lag-over-time series of the report.

Log ends come from the data directories' durable topics (:mod:`.topic_ends`, read on the
driver: only batch headers). For each live committed offset (``offsets_latest``, so as of
the end of the input or ``--until``) and each partition of a topic the group consumes but
never committed (a topic it committed for or its members are assigned), one row:

    data_dir, group, topic, partition, committed_offset, commit_time,
    log_end_offset, lag, status

``log_end_offset`` counts the batches whose max timestamp is at most ``--until`` (all of
them without it). ``lag`` = log end - committed offset, but never below 0: a commit beyond
the log end (possible: Kafka does not check a committed offset against the log) gets lag
0 and status ``beyond log end``; Kafka's ``kafka-consumer-groups.sh --describe`` prints
the plain difference there, a negative LAG (``ConsumerGroupCommand.getLag``: end -
offset). ``lag`` is null, with the reason in ``status``, when it is unknown:

- ``no topic logs``: the data directory holds no ``topics/`` (``--topic-storage memory``,
  or no topic was ever created), or it was given as a URI other than ``file://`` (log
  ends are read on the driver, from local files);
- ``topic not found``: the topic is not in the data directory (deleted, or never created
  there);
- ``no such partition``: the topic has fewer partitions;
- ``no committed offset``: a partition of a consumed topic the group never committed
  (Kafka's tool shows ``-`` for its CURRENT-OFFSET and LAG).

Otherwise ``status`` is ``ok`` (a partition without data has log end 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .columns import GROUP_METADATA
from .topic_ends import TopicLogs, read_topic_logs

__all__ = [
    "LAG_STATUSES",
    "history_totals",
    "lag_history",
    "offsets_lag",
    "read_inputs",
]

LAG_STATUSES = ("ok", "beyond log end", "no committed offset", "no such partition",
                "topic not found", "no topic logs")

_KEY = ["data_dir", "topic", "partition"]


def read_inputs(
    inputs: Sequence[str], uris: Sequence[str] = ()
) -> dict[str, TopicLogs | None]:
    """Every input directory's topic logs (None: it has none), by absolute path, and those
    of the ``file://`` URIs among ``uris``, by URI (the ``data_dir`` of their records).
    Other URIs' log ends are not read: they are read here, on the driver, from local
    files."""
    import os
    from urllib.parse import unquote, urlsplit

    logs = {os.path.abspath(d): read_topic_logs(d) for d in inputs}
    for uri in uris:
        parts = urlsplit(uri)
        if parts.scheme == "file" and parts.netloc in ("", "localhost"):
            logs[uri] = read_topic_logs(unquote(parts.path))
    return logs


def _assigned_topics(recs: Any) -> Any:
    """(data_dir, group, topic) of the topics assigned to the members of each group's
    last GroupMetadata record (none once the group is deleted)."""
    from pyspark.sql import functions as F

    last = (
        recs.where(F.col("record_type") == GROUP_METADATA)
        .groupBy("data_dir", "group")
        .agg(F.max_by(F.struct("tombstone", "members"), "log_index").alias("g"))
        .where(~F.col("g.tombstone"))
    )
    topics = F.flatten(
        F.transform(
            F.col("g.members"),
            lambda m: F.coalesce(
                F.transform(m["assigned"], lambda a: a["topic"]),
                F.array().cast("array<string>"),
            ),
        )
    )
    return last.select("data_dir", "group", F.explode(F.array_distinct(topics)).alias("topic"))


def offsets_lag(
    recs: Any, latest: Any, topic_logs: dict[str, TopicLogs | None], until_ms: int | None
) -> Any:
    """The ``offsets_lag`` DataFrame (see the module's description)."""
    from pyspark.sql import functions as F

    from .driver_read import driver_table

    spark = latest.sparkSession
    partitions = [
        (d, topic, index, ends.end_as_of(until_ms))
        for d, logs in topic_logs.items()
        if logs is not None
        for (topic, index), ends in logs.ends.items()
    ]
    # Small, and known here: a broadcast table of the partitions, lists for the rest.
    ends = F.broadcast(driver_table(
        spark, partitions,
        (("data_dir", "string"), ("topic", "string"), ("partition", "int"),
         ("log_end_offset", "bigint")),
    ))
    with_logs = [d for d, logs in topic_logs.items() if logs is not None]
    found = [f"{d}\0{t}" for d, logs in topic_logs.items() if logs is not None
             for t in logs.partition_counts]
    committed = latest.select(
        "data_dir", "group", "topic", "partition",
        F.col("offset").alias("committed_offset"), "commit_time",
    )
    consumed = (
        committed.select("data_dir", "group", "topic")
        .unionByName(_assigned_topics(recs))
        .distinct()
    )
    never = (
        consumed.join(ends.select(*_KEY), ["data_dir", "topic"])
        .join(committed, ["data_dir", "group", "topic", "partition"], "left_anti")
        .select(
            "data_dir", "group", "topic", "partition",
            F.lit(None).cast("bigint").alias("committed_offset"),
            F.lit(None).cast("timestamp").alias("commit_time"),
        )
    )
    rows = committed.unionByName(never).join(ends, _KEY, "left").select(
        "*",
        F.col("data_dir").isin(with_logs).alias("has_topic_logs"),
        F.concat_ws("\0", "data_dir", "topic").isin(found).alias("topic_found"),
    )
    end, offset = F.col("log_end_offset"), F.col("committed_offset")
    status = (
        F.when(~F.col("has_topic_logs"), "no topic logs")
        .when(~F.col("topic_found"), "topic not found")
        .when(end.isNull(), "no such partition")
        .when(offset.isNull() | (offset < 0), "no committed offset")
        .when(offset > end, "beyond log end")
        .otherwise("ok")
    )
    return rows.select(
        "data_dir", "group", "topic", "partition", "committed_offset", "commit_time",
        "log_end_offset",
        F.when(end.isNotNull() & (offset >= 0), F.greatest(end - offset, F.lit(0)))
        .cast("bigint").alias("lag"),
        status.alias("status"),
    )


def lag_history(
    commits: Any,
    groups: Sequence[tuple[str, str]],
    topic_logs: dict[str, TopicLogs | None],
    bucket_ms: int,
) -> list[dict[str, Any]]:
    """Per group of ``groups`` and time bucket: the group's total lag, the sum over its
    partitions of the lag of the partition's latest commit so far, each commit's lag
    taken against the log end as of the commit's time. Partitions whose log end is
    unknown are left out. Rows: data_dir, group, bucket_ms, lag, partitions."""
    from pyspark.sql import functions as F

    from .driver_read import GROUP_SCHEMA, driver_table

    known = [(d, g) for d, g in groups if topic_logs.get(d) is not None]
    if not known:
        return []
    spark = commits.sparkSession
    chosen = driver_table(spark, known, GROUP_SCHEMA)
    last = (
        commits.join(chosen, ["data_dir", "group"])
        .where(F.col("commit_timestamp") >= 0)
        .groupBy(
            "data_dir", "group", "topic", "partition",
            (F.floor(F.col("commit_timestamp") / bucket_ms) * bucket_ms).alias("bucket_ms"),
        )
        .agg(F.max_by(F.struct("offset", "commit_timestamp"), "log_index").alias("c"))
        .select("data_dir", "group", "topic", "partition", "bucket_ms",
                F.col("c.offset").alias("offset"), F.col("c.commit_timestamp").alias("ts"))
        .orderBy("data_dir", "group", "bucket_ms")
        .limit(200_000)
        .collect()
    )
    return history_totals(last, topic_logs)


def history_totals(
    last: Sequence[Any], topic_logs: dict[str, TopicLogs | None]
) -> list[dict[str, Any]]:
    """The lag totals of :func:`lag_history` from each partition's latest commit per time
    bucket (``last``: rows with data_dir, group, topic, partition, bucket_ms, offset and
    ts, ordered by data_dir, group and bucket_ms)."""
    current: dict[tuple[str, str], dict[tuple[str, int], int]] = {}
    totals: dict[tuple[str, str, int], tuple[int, int]] = {}
    for r in last:
        logs = topic_logs[r["data_dir"]]
        assert logs is not None
        ends = logs.ends.get((r["topic"], r["partition"]))
        if ends is None or int(r["offset"]) < 0:
            continue
        lag = max(ends.end_as_of(int(r["ts"])) - int(r["offset"]), 0)
        key = (r["data_dir"], r["group"])
        lags = current.setdefault(key, {})
        lags[(r["topic"], r["partition"])] = lag
        totals[(*key, int(r["bucket_ms"]))] = (sum(lags.values()), len(lags))
    return [
        {"data_dir": d, "group": g, "bucket_ms": b, "lag": total, "partitions": n}
        for (d, g, b), (total, n) in sorted(totals.items())
    ]
