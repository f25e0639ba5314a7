"""The job is sized to its input on any master (issue 34 item 1): shuffle partitions, code
generation, AQE and broadcasts from the input's size and the cores, never from whether the
master is local; the user's ``--conf`` wins."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from pipeline_support import T0, commit, write

from storage.pipeline.sizing import (
    LARGE_INPUT_JAVA_OPTIONS,
    SMALL_INPUT_BYTES,
    SMALL_INPUT_JAVA_OPTIONS,
    driver_java_options,
    driver_memory,
    executor_java_options,
    master_cores,
    shuffle_partitions,
    sized_conf,
)

#: What a small input must get.
SMALL = {"spark.sql.shuffle.partitions": "1", "spark.sql.codegen.wholeStage": "false",
         "spark.sql.codegen.factoryMode": "NO_CODEGEN", "spark.sql.adaptive.enabled": "false",
         "spark.sql.adaptive.coalescePartitions.enabled": "false",
         "spark.sql.autoBroadcastJoinThreshold": "-1",
         "spark.sql.inMemoryColumnarStorage.compressed": "false"}


@contextmanager
def sized(spark: Any, master: str, input_bytes: int,
          user_conf: dict[str, str]) -> Iterator[dict[str, str | None]]:
    """``size_job`` on the shared session, its settings put back afterwards."""
    from storage.pipeline.session import size_job

    previous = size_job(spark, master, input_bytes, user_conf)
    try:
        yield previous
    finally:
        for key, value in previous.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def test_a_small_input_gets_the_small_settings_whatever_the_cores() -> None:
    for cores in (1, 2, 64):
        assert sized_conf(48_000, cores) == SMALL
        assert sized_conf(SMALL_INPUT_BYTES, cores) == SMALL


def test_a_large_input_keeps_codegen_with_partitions_from_size_and_cores() -> None:
    conf = sized_conf(63 * 1024 * 1024, 2)
    assert conf["spark.sql.shuffle.partitions"] == "2"
    assert conf["spark.sql.codegen.wholeStage"] == "true"
    # One shuffle partition per core: nothing for AQE to coalesce, and it would make
    # every shuffle stage a job of its own (10^6 records: 40 jobs with it, 25 without).
    assert conf["spark.sql.adaptive.enabled"] == "false"
    assert conf["spark.sql.adaptive.coalescePartitions.enabled"] == "false"
    assert conf["spark.sql.autoBroadcastJoinThreshold"] == str(10 * 1024 * 1024)
    # Caches uncompressed (less CPU to build and read them) on any input.
    assert conf["spark.sql.inMemoryColumnarStorage.compressed"] == "false"
    # Never more partitions than 16 MiB of segments each, at least one per core.
    assert shuffle_partitions(20 * 1024 * 1024, 64) == 2
    assert shuffle_partitions(100 * 1024**3, 8) == 800


def test_aqe_only_when_there_are_more_shuffle_partitions_than_cores() -> None:
    many = sized_conf(100 * 1024**3, 8)  # 800 partitions on 8 cores
    assert many["spark.sql.adaptive.enabled"] == "true"
    assert many["spark.sql.adaptive.coalescePartitions.enabled"] == "true"
    assert sized_conf(1024**3, 8)["spark.sql.adaptive.enabled"] == "false"  # 8 on 8
    assert sized_conf(1024**3, 2)["spark.sql.adaptive.enabled"] == "true"  # 8 on 2


def test_the_users_conf_wins() -> None:
    conf = sized_conf(48_000, 2, {"spark.sql.shuffle.partitions": "7"})
    assert "spark.sql.shuffle.partitions" not in conf
    assert conf["spark.sql.codegen.wholeStage"] == "false"


def test_the_driver_heap_grows_with_a_large_input_on_a_local_master_only() -> None:
    # 10^6 records (63 MB) spent most of their tasks' time collecting garbage in 1 GiB.
    assert driver_memory("local[2]", 63 * 1024 * 1024) == "3g"
    assert driver_memory("local[*]", 48_000) == "1g"
    assert driver_memory("local[2]", SMALL_INPUT_BYTES) == "1g"
    assert driver_memory("local[2]", 10 * 1024**3) == "4g"  # capped
    assert driver_memory("local[2]", None) == "1g"  # a URI input's size is not known yet
    # On a cluster the cached parse and the tasks live in the executors.
    assert driver_memory("spark://h:7077", 63 * 1024 * 1024) == "1g"


def test_master_cores() -> None:
    assert master_cores("local") == 1
    assert master_cores("local[3]") == 3
    assert (master_cores("local[*]") or 0) >= 1
    assert master_cores("spark://h:7077") is None
    assert master_cores("spark://h:7077", {"spark.cores.max": "2"}) == 2
    assert master_cores("yarn", {"spark.executor.instances": "3",
                                 "spark.executor.cores": "4"}) == 12


@pytest.mark.slow  # (a SparkSession: CI runs these in the pipeline step)
def test_a_small_input_on_a_cluster_master_is_planned_small(spark: Any) -> None:
    """What ``kcoord pipeline --master spark://...`` sets on its session for a 48 kB
    input: the small settings (before, they applied only to a local master, and a
    cluster planned 200-partition shuffles for a few hundred rows)."""
    with sized(spark, "spark://127.0.0.1:7077", 48_000,
               {"spark.sql.autoBroadcastJoinThreshold": "123"}) as previous:
        for key, value in SMALL.items():
            if key != "spark.sql.autoBroadcastJoinThreshold":
                assert spark.conf.get(key) == value, key
        assert "spark.sql.autoBroadcastJoinThreshold" not in previous
        # The plan follows: one shuffle partition, no whole-stage code generation.
        df = spark.range(1000).selectExpr("id % 7 AS k").groupBy("k").count()
        assert df.rdd.getNumPartitions() == 1
        plan = df._jdf.queryExecution().executedPlan().toString()
        assert "*(" not in plan, plan  # "*(N)" marks a whole-stage generated operator


@pytest.mark.slow  # (a SparkSession: CI runs these in the pipeline step)
@pytest.mark.parametrize("master", ["local[2]", "spark://127.0.0.1:7077"])
def test_a_large_input_is_planned_from_its_size_on_any_master(spark: Any, master: str) -> None:
    with sized(spark, master, 63 * 1024 * 1024, {"spark.cores.max": "2"}):
        assert spark.conf.get("spark.sql.shuffle.partitions") == "2"
        assert spark.conf.get("spark.sql.adaptive.enabled") == "false"  # one per core
        assert spark.conf.get("spark.sql.codegen.wholeStage") == "true"
    with sized(spark, master, 1024**3, {"spark.cores.max": "2"}):
        assert spark.conf.get("spark.sql.shuffle.partitions") == "8"
        assert spark.conf.get("spark.sql.adaptive.enabled") == "true"


@pytest.mark.slow  # (a SparkSession: CI runs these in the pipeline step)
def test_offset_commits_plans_one_shuffle_and_one_sort(spark: Any, tmp_path: Path) -> None:
    """The largest dataset (every commit) is one shuffle, by group, one sort and one window
    operator, which the write partitioned by group reuses (issue 34 item 2; before: a
    sort-merge join and the window each shuffled and sorted every commit, and the write
    repartitioned and sorted them again; then two window operators over the sort)."""
    from storage.pipeline import jobs
    from storage.pipeline.driver_read import driver_frame

    d = str(tmp_path / "data")
    write(d, [commit("g", "t", p % 3, p, T0 + p) for p in range(30)])
    commits = jobs.offset_commits(jobs.apply_window(driver_frame(spark, [d], False), None,
                                                    None))
    # Planned as for a large input whatever an earlier test left set (one shuffle
    # partition plans a SinglePartition exchange).
    with sized(spark, "local[2]", 63 * 1024 * 1024, {}):
        plan = commits._jdf.queryExecution().executedPlan().toString()
    assert plan.count("Exchange ") == 1 and "Exchange hashpartitioning(group#" in plan, plan
    assert plan.count("Sort [") == 1 and "Sort [group#" in plan, plan
    assert plan.count("Window [") == 1, plan
    assert len(commits.collect()) == 30


def test_the_driver_jvm_options_follow_the_input_and_the_master() -> None:
    assert driver_java_options("local[2]", 48_000) == SMALL_INPUT_JAVA_OPTIONS
    assert driver_java_options("spark://h:7077", 48_000) == SMALL_INPUT_JAVA_OPTIONS
    large = 63 * 1024 * 1024
    # Where the tasks run in the driver: the parallel collector, C2 for the hot code only.
    options = driver_java_options("local[2]", large)
    assert options == LARGE_INPUT_JAVA_OPTIONS
    assert "-XX:+UseParallelGC" in options.split()
    assert "-XX:Tier4InvocationThreshold=50000" in options.split()
    # A cluster's driver runs no tasks: C1 whatever the input's size; an input of unknown
    # size gets Spark's defaults.
    assert driver_java_options("spark://h:7077", large) == SMALL_INPUT_JAVA_OPTIONS
    assert driver_java_options("spark://h:7077", None) == ""
    assert driver_java_options("local[2]", None) == ""


def test_a_clusters_executors_get_the_jvm_options_of_the_inputs_size() -> None:
    """Each executor is a cold JVM running the tasks: the options a local master's driver
    gets for the same input; none on a local master or for an input of unknown size."""
    large = 63 * 1024 * 1024
    assert executor_java_options("spark://h:7077", 48_000) == SMALL_INPUT_JAVA_OPTIONS
    assert executor_java_options("spark://h:7077", large) == LARGE_INPUT_JAVA_OPTIONS
    assert executor_java_options("spark://h:7077", None) == ""
    assert executor_java_options("local[2]", 48_000) == ""
    assert executor_java_options("local[2]", large) == ""
