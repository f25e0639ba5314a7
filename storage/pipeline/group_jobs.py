"""The pipeline's group jobs, over the ``kcoord-log`` DataFrame (windowed by
``jobs.apply_window``).

- :func:`rebalances`: per group incarnation and generation: start, end, duration, reason
  and trigger, members before and after, leader, protocol, partitions that moved owner.
- :func:`groups_summary`: per group: lifetime, generations, rebalances per hour, p50/p95
  rebalance duration, members seen, current state.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .columns import GROUP_METADATA, OFFSET_COMMIT, REBALANCE_EVENT
from .jobs import GROUP_KEY, as_timestamp

__all__ = ["TRIGGERS", "groups_summary", "rebalances", "trigger_of"]

#: rebalance reason (Kafka's wording, as kcoord writes it) -> trigger
TRIGGERS: dict[str, str] = {
    "member join": "join",
    "leader rejoin": "join",
    "member leave": "leave",
    "session timeout": "session_expiry",
    "new member join timeout": "session_expiry",
    "rebalance timeout": "session_expiry",
    "pending sync timeout": "session_expiry",
    "static member replaced": "static_replacement",
    "static member replaced with protocol change": "static_replacement",
    "member metadata changed": "metadata_change",
    # consumer groups (KIP-848): a subscribed topic was created, deleted or grew
    "topic metadata changed": "metadata_change",
}


def trigger_of(reason: Column) -> Column:
    """The trigger class of a rebalance reason: join, leave, session_expiry,
    static_replacement, metadata_change, other (null without a reason)."""
    expr = F.when(reason.isNull(), F.lit(None).cast("string"))
    for text, trigger in TRIGGERS.items():
        expr = expr.when(reason == text, trigger)
    return expr.otherwise("other")


# --------------------------------------------------------------------------------------
# Rebalances


def _group_history(df: DataFrame) -> DataFrame:
    """Group metadata and event records with ``incarnation``: how many times the group was
    deleted (GroupMetadata tombstone) before the record."""
    hist = df.where(F.col("record_type").isin(GROUP_METADATA, REBALANCE_EVENT))
    w = (
        Window.partitionBy(*GROUP_KEY)
        .orderBy("log_index")
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    deleted = (F.col("record_type") == GROUP_METADATA) & F.col("tombstone")
    return hist.withColumn("incarnation", F.sum(F.when(deleted, 1).otherwise(0)).over(w))


def _ownership(members: Column) -> Column:
    """map "topic:partition" -> owner (static instance id, else member id); null when an
    assignment is not a consumer-protocol one."""
    pairs = F.flatten(
        F.transform(
            members,
            lambda m: F.transform(
                m["assigned"],
                lambda a: F.struct(
                    F.concat_ws(":", a["topic"], a["partition"].cast("string")).alias("k"),
                    F.coalesce(m["group_instance_id"], m["member_id"]).alias("v"),
                ),
            ),
        )
    )
    unknown = F.exists(members, lambda m: m["assigned"].isNull())
    return F.when(unknown, F.lit(None)).otherwise(F.map_from_entries(pairs))


def rebalances(df: DataFrame, since_ms: int | None = None) -> DataFrame:
    """One row per (data_dir, group, incarnation, generation) the group reached.

    From kcoord's RebalanceEvent records: ``start_time`` (rebalance_start), ``end_time``
    (rebalance_end, when the generation began), ``duration_ms``, ``reason`` and
    ``trigger``, ``members_before`` / ``members_after`` (ids and counts, ``joined``,
    ``left``). From the generation's last GroupMetadata record: ``leader``, ``protocol``
    and the assignment, compared with the previous generation's: ``partitions_moved``
    (partitions whose owner changed, counting newly assigned and revoked ones) and
    ``any_partition_moved``. A generation known only from GroupMetadata (no events)
    has null event columns (``has_events`` false)."""
    hist = _group_history(df)
    gkey = [*GROUP_KEY, "incarnation"]
    ev = hist.where(F.col("record_type") == REBALANCE_EVENT)
    w_ev = (
        Window.partitionBy(*gkey)
        .orderBy("log_index")
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    is_start = F.col("event") == "rebalance_start"
    ev = ev.withColumn(
        "_start",
        F.last(
            F.when(
                is_start,
                F.struct(
                    F.col("log_index").alias("index"),
                    F.col("event_timestamp").alias("ts"),
                    F.col("reason").alias("reason"),
                ),
            ),
            ignorenulls=True,
        ).over(w_ev),
    )
    ends = ev.where(F.col("event") == "rebalance_end").select(
        *gkey,
        "generation",
        F.col("log_index").alias("end_index"),
        F.col("event_timestamp").alias("end_ms"),
        F.col("event_members").alias("after_ids"),
        "_start",
    )
    w_gen = Window.partitionBy(*gkey).orderBy("generation")
    ends = ends.select(
        "*",
        F.lag("end_index").over(w_gen).alias("_prev_end"),
        F.lag("after_ids").over(w_gen).alias("before_ids"),
    )
    own_start = F.col("_start").isNotNull() & (
        F.col("_prev_end").isNull() | (F.col("_start.index") > F.col("_prev_end"))
    )
    ends = ends.select(
        *gkey,
        "generation",
        "end_index",
        "end_ms",
        "after_ids",
        "before_ids",
        F.when(own_start, F.col("_start.ts")).alias("start_ms"),
        F.when(own_start, F.col("_start.reason")).alias("reason"),
    )

    gm = hist.where(
        (F.col("record_type") == GROUP_METADATA) & ~F.col("tombstone") & (F.col("generation") > 0)
    )
    per_gen = gm.groupBy(*gkey, "generation").agg(
        F.max_by(
            F.struct("protocol_type", "protocol", "leader", "members", "log_index"),
            "log_index",
        ).alias("g")
    )
    per_gen = per_gen.select(
        *gkey,
        "generation",
        F.col("g.protocol_type").alias("protocol_type"),
        F.col("g.protocol").alias("protocol"),
        F.col("g.leader").alias("leader"),
        F.transform("g.members", lambda m: m["member_id"]).alias("gm_ids"),
        _ownership(F.col("g.members")).alias("owners"),
    )
    gens = ends.join(per_gen, [*gkey, "generation"], "full_outer")
    w_all = Window.partitionBy(*gkey).orderBy("generation")
    prev_owners = F.lag("owners").over(w_all)
    prev_ids = F.lag(F.coalesce("after_ids", "gm_ids")).over(w_all)
    gens = gens.select("*", prev_owners.alias("_prev_owners"), prev_ids.alias("_prev_ids"))
    before = F.coalesce(F.col("before_ids"), F.col("_prev_ids"), F.array().cast("array<string>"))
    after = F.coalesce(F.col("after_ids"), F.col("gm_ids"))
    moved_keys = F.array_union(
        F.map_keys(F.coalesce("_prev_owners", F.create_map().cast("map<string,string>"))),
        F.map_keys("owners"),
    )
    prev_map = F.coalesce("_prev_owners", F.create_map().cast("map<string,string>"))
    moved = F.size(
        F.filter(
            moved_keys,
            lambda k: (
                ~F.try_element_at(prev_map, k).eqNullSafe(F.try_element_at(F.col("owners"), k))
            ),
        )
    )
    out = gens.select(
        *gkey,
        "generation",
        as_timestamp(F.col("start_ms")).alias("start_time"),
        as_timestamp(F.col("end_ms")).alias("end_time"),
        (F.col("end_ms") - F.col("start_ms")).alias("duration_ms"),
        "reason",
        trigger_of(F.col("reason")).alias("trigger"),
        F.size(before).alias("members_before"),
        F.size(after).alias("members_after"),
        before.alias("member_ids_before"),
        after.alias("member_ids_after"),
        F.array_except(after, before).alias("joined"),
        F.array_except(before, after).alias("left"),
        "leader",
        "protocol_type",
        "protocol",
        F.when(F.col("owners").isNotNull(), moved).alias("partitions_moved"),
        F.when(F.col("owners").isNotNull(), moved > 0).alias("any_partition_moved"),
        F.col("end_index").isNotNull().alias("has_events"),
        "start_ms",
        "end_ms",
    )
    if since_ms is not None:
        out = out.where(F.coalesce("end_ms", "start_ms", F.lit(since_ms)) >= F.lit(since_ms))
    return out


# --------------------------------------------------------------------------------------
# Groups


def groups_summary(df: DataFrame, rebalance_df: DataFrame, latest: DataFrame) -> DataFrame:
    """Per (data_dir, group): first/last record time and lifetime, incarnations,
    generations, rebalances and rebalances per hour, p50/p95 rebalance duration, members
    seen, commits, live offsets, and the current state at the end of the log (Stable,
    Empty, PreparingRebalance, CompletingRebalance or Dead)."""
    recs = df.where(F.col("record_type").isin(OFFSET_COMMIT, GROUP_METADATA, REBALANCE_EVENT))
    member_ids = F.array_union(
        F.coalesce(
            F.transform("members", lambda m: m["member_id"]), F.array().cast("array<string>")
        ),
        F.array_union(
            F.coalesce("event_members", F.array().cast("array<string>")),
            F.when(
                F.col("event_member_id").isNotNull() & (F.col("event_member_id") != ""),
                F.array("event_member_id"),
            ).otherwise(F.array().cast("array<string>")),
        ),
    )
    is_gm = F.col("record_type") == GROUP_METADATA
    is_ev = F.col("record_type") == REBALANCE_EVENT
    # Over every record (commits are most of them): fixed-width buffers only, so Spark
    # hash-aggregates.
    activity = recs.groupBy(*GROUP_KEY).agg(
        F.min("timestamp").alias("first_ms"),
        F.max("timestamp").alias("last_ms"),
        F.count(F.when((F.col("record_type") == OFFSET_COMMIT) & ~F.col("tombstone"), 1)).alias(
            "commits"
        ),
    )
    # Over group metadata and events only (few).
    history = (
        recs.where(is_gm | is_ev)
        .groupBy(*GROUP_KEY)
        .agg(
            F.size(F.array_distinct(F.flatten(F.collect_list(member_ids)))).alias("members_seen"),
            F.max_by(
                F.when(
                    is_gm,
                    F.struct(
                        F.col("tombstone").alias("tombstone"),
                        F.col("generation").alias("generation"),
                        F.size("members").alias("members"),
                    ),
                ),
                F.when(is_gm, F.col("log_index")),
            ).alias("last_gm"),
            F.max(F.when(is_gm & F.col("tombstone"), F.col("log_index"))).alias("deleted_index"),
            F.max(F.when(is_ev & (F.col("event") == "rebalance_start"), F.col("log_index"))).alias(
                "start_index"
            ),
            F.max_by(
                F.when(
                    is_ev & (F.col("event") == "rebalance_end"),
                    F.struct(F.col("log_index").alias("index"), F.col("generation").alias("gen")),
                ),
                F.when(is_ev & (F.col("event") == "rebalance_end"), F.col("log_index")),
            ).alias("last_end"),
            F.max(F.when(is_gm & ~F.col("tombstone"), F.col("log_index"))).alias("gm_index"),
        )
    )
    base = activity.join(history, GROUP_KEY, "left")
    reb = rebalance_df.groupBy(*GROUP_KEY).agg(
        F.count_distinct("incarnation", "generation").alias("generations"),
        F.count(F.when(F.col("has_events"), 1)).alias("rebalances"),
        F.percentile(F.col("duration_ms"), F.lit(0.5)).alias("p50_rebalance_ms"),
        F.percentile(F.col("duration_ms"), F.lit(0.95)).alias("p95_rebalance_ms"),
        (F.max("incarnation") + 1).alias("incarnations"),
        F.max_by("generation", F.struct("incarnation", "generation")).alias("current_generation"),
    )
    live = latest.groupBy(*GROUP_KEY).agg(F.count(F.lit(1)).alias("live_offsets"))
    out = base.join(reb, GROUP_KEY, "left").join(live, GROUP_KEY, "left")
    start_index = F.coalesce(F.col("start_index"), F.lit(-1))
    end_index = F.coalesce(F.col("last_end.index"), F.lit(-1))
    gm_index = F.coalesce(F.col("gm_index"), F.lit(-1))
    deleted = F.coalesce(F.col("deleted_index"), F.lit(-1))
    state = (
        F.when((deleted > gm_index) & (deleted > start_index) & (deleted > end_index), "Dead")
        .when(start_index > end_index, "PreparingRebalance")
        .when(
            F.col("last_end.gen").isNotNull()
            & (
                F.col("last_gm.generation").isNull()
                | (F.col("last_end.gen") > F.col("last_gm.generation"))
            ),
            "CompletingRebalance",
        )
        .when(F.col("last_gm").isNull(), "Empty")
        .when(F.col("last_gm.members") > 0, "Stable")
        .otherwise("Empty")
    )
    hours = (F.col("last_ms") - F.col("first_ms")) / F.lit(3_600_000.0)
    return out.select(
        *GROUP_KEY,
        as_timestamp(F.col("first_ms")).alias("first_seen"),
        as_timestamp(F.col("last_ms")).alias("last_seen"),
        (F.col("last_ms") - F.col("first_ms")).alias("lifetime_ms"),
        F.coalesce("incarnations", F.lit(1)).alias("incarnations"),
        F.coalesce("generations", F.lit(0)).alias("generations"),
        F.coalesce("rebalances", F.lit(0)).alias("rebalances"),
        # A rate per hour only from at least an hour of the group's life: a few seconds
        # would extrapolate one rebalance into hundreds per hour.
        F.when(hours >= 1, F.coalesce("rebalances", F.lit(0)) / hours).alias(
            "rebalances_per_hour"),
        "p50_rebalance_ms",
        "p95_rebalance_ms",
        F.coalesce("members_seen", F.lit(0)).alias("members_seen"),
        "commits",
        F.coalesce("live_offsets", F.lit(0)).alias("live_offsets"),
        state.alias("state"),
        F.when(state != "Dead", F.col("current_generation")).alias("current_generation"),
        F.when(state != "Dead", F.col("last_gm.members")).alias("current_members"),
    )
