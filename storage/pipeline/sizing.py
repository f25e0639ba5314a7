"""How big a job to plan: Spark settings chosen from the input's size and the cores that
run it, on any master (no Spark needed here).

Spark's defaults are made for large inputs: 200 shuffle partitions, whole-stage code
generation and adaptive query execution (AQE) re-planning at every shuffle. On a few MiB
of log every plan runs once over a few thousand rows, so compiling generated code
(whole-stage codegen and the per-expression classes Janino compiles otherwise:
``codegen.factoryMode=NO_CODEGEN`` takes the interpreted projections instead),
re-planning and broadcasting (a broadcast is a job of its own) cost more than they save,
and one partition per shuffle is one task per stage. On a cluster these costs are paid
on every executor, so the choice does not depend on the master: a small input gets the
small settings on ``spark://`` as on ``local[2]``.

A larger input keeps code generation, with a shuffle partition per
:data:`SHUFFLE_PARTITION_BYTES` of segments, at least one per core and at most one per
:data:`MIN_PARTITION_BYTES`. It keeps AQE (which coalesces small post-shuffle partitions
and turns joins against a small side into broadcasts at run time) only when there are
more shuffle partitions than cores: with one a core there is nothing to coalesce, and AQE
runs every shuffle stage as a job of its own and re-plans after it (10^6 records,
``local[2]``, two shuffle partitions: 40 Spark jobs with AQE, 25 without, outputs equal;
JVM CPU 81-83 s with, 73-87 s without on a loaded machine: within the noise). Static
broadcasts stay (the cached frames' sizes are known).

On any input the cached frames (the parsed log, the datasets as they are written) are
kept uncompressed (``spark.sql.inMemoryColumnarStorage.compressed=false``): encoding every
cached column costs more CPU than it saves on a run that reads each cache a few times
(10^6 records, ``local[2]``: the read-and-cache stage's task CPU 8.1 -> 5.3 s, the JVM's
101.6 -> 91.4 s, one loaded run each); the caches are MEMORY_AND_DISK, so a heap too small
for them spills instead of failing.

The user's ``--conf`` always wins: :func:`sized_conf` leaves out the keys it sets.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

__all__ = [
    "LARGE_INPUT_JAVA_OPTIONS",
    "MIN_PARTITION_BYTES",
    "SHUFFLE_PARTITION_BYTES",
    "SMALL_INPUT_BYTES",
    "SMALL_INPUT_JAVA_OPTIONS",
    "driver_java_options",
    "driver_memory",
    "executor_java_options",
    "is_small",
    "master_cores",
    "shuffle_partitions",
    "sized_conf",
    "task_jvm_options",
]

#: Inputs up to this many bytes of segment files are small: read on the driver (no
#: Python workers to start) and planned with :func:`sized_conf`'s small settings.
SMALL_INPUT_BYTES = 16 * 1024 * 1024
#: Segment bytes per shuffle partition of a large input (beyond one per core).
SHUFFLE_PARTITION_BYTES = 128 * 1024 * 1024
#: ... and never a partition for less than this many bytes of segments.
MIN_PARTITION_BYTES = 16 * 1024 * 1024

#: A small input's JVMs, and a cluster's driver: the JIT stops at its quick first tier
#: (C1), with the serial collector: less compiling and fewer threads on a short run.
SMALL_INPUT_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
#: A large input's JVMs that run the tasks (a ``local`` master's driver, a cluster's
#: executors): the parallel collector (no concurrent collector threads beside the tasks)
#: and C2, the costly JIT tier, compiling a method after 50,000 invocations (default
#: 5,000), or after 20,000 (default 600) once invocations and loop iterations reach
#: 60,000 (default 15,000): on a cold run the JIT compiled each plan's code for about 30 s
#: of CPU, much of it code that runs a few times. 10^6 records, ``local[2]``, quiet, cold
#: runs: JVM CPU 82-96 s (median 92.5, 8 runs) against 98-109 s (median 103.7, 4 runs),
#: wall 56-65 s against 62-72 s.
LARGE_INPUT_JAVA_OPTIONS = (
    "-XX:+UseParallelGC -XX:Tier4InvocationThreshold=50000"
    " -XX:Tier4MinInvocationThreshold=20000 -XX:Tier4CompileThreshold=60000"
)

#: The driver JVM's heap: Spark's own 1 GiB, and on a ``local`` master (the tasks, and the
#: cached parse of the log, live in that heap) :data:`HEAP_PER_INPUT_BYTE` times the
#: segment bytes, in whole GiB up to :data:`MAX_DRIVER_HEAP_GIB`. With 1 GiB, 10^6 records
#: (63 MB) spent 76 s of its tasks' time in garbage collection (10 s with 3 GiB).
HEAP_PER_INPUT_BYTE = 40
MAX_DRIVER_HEAP_GIB = 4

_LOCAL_N = re.compile(r"^local(?:-cluster)?\[(\d+|\*)")


def master_cores(master: str, conf: Mapping[str, str] | None = None) -> int | None:
    """The cores a master gives the job, when known before it starts: ``local[N]`` N,
    ``local[*]`` this machine's, ``local`` 1; a cluster's ``spark.cores.max`` (or
    executor instances times executor cores) if set, else None (ask the running
    context: ``SparkContext.defaultParallelism``)."""
    conf = conf or {}
    if master == "local":
        return 1
    m = _LOCAL_N.match(master)
    if m:
        return os.cpu_count() or 1 if m.group(1) == "*" else max(1, int(m.group(1)))
    if conf.get("spark.cores.max", "").isdigit():
        return max(1, int(conf["spark.cores.max"]))
    instances = conf.get("spark.executor.instances", "")
    cores = conf.get("spark.executor.cores", "1")
    if instances.isdigit() and cores.isdigit():
        return max(1, int(instances) * int(cores))
    return None


def driver_memory(master: str, input_bytes: int | None) -> str:
    """``spark.driver.memory`` for a job over ``input_bytes`` of segment files (None:
    unknown, Spark's 1 GiB) on ``master``; a cluster's driver holds no task data."""
    if input_bytes is None or not master.startswith("local"):
        return "1g"
    gib = -(-input_bytes * HEAP_PER_INPUT_BYTE // (1024**3))
    return f"{max(1, min(MAX_DRIVER_HEAP_GIB, gib))}g"


def task_jvm_options(input_bytes: int) -> str:
    """JVM options for a JVM that runs the tasks of a job over ``input_bytes`` of segment
    files (a ``local`` master's driver, a cluster's executors): the small or the large
    input's."""
    return SMALL_INPUT_JAVA_OPTIONS if is_small(input_bytes) else LARGE_INPUT_JAVA_OPTIONS


def driver_java_options(master: str, input_bytes: int | None) -> str:
    """JVM options for the driver of a job over ``input_bytes`` of segment files (None:
    unknown, Spark's defaults) on ``master``: on a ``local`` master, where the driver runs
    the tasks, :func:`task_jvm_options`; a cluster's driver, whatever the input's size,
    :data:`SMALL_INPUT_JAVA_OPTIONS`: it runs planning and scheduling code a few times
    each, which C2 compiles for more than it saves (10^6 records on a standalone cluster,
    the executors given their options: 80.0 / 84.2 s against 85.8 / 95.0 s with Spark's
    defaults for the driver; BENCHMARKS.md)."""
    if input_bytes is None:
        return ""
    return task_jvm_options(input_bytes) if master.startswith("local") else SMALL_INPUT_JAVA_OPTIONS


def executor_java_options(master: str, input_bytes: int | None) -> str:
    """JVM options for a cluster's executors on a job over ``input_bytes`` of segment
    files: :func:`task_jvm_options`; none on a ``local`` master (its executor is the
    driver) or for an input of unknown size. Each executor is a cold JVM of its own, and
    on a small input its C2 compiler threads cost more than the code they compile saves
    (the 494-record log on a standalone cluster of two one-core workers, the executor
    check skipped in both: 39.0 s median with Spark's defaults, 26.6 s with the small
    options; BENCHMARKS.md)."""
    if master.startswith("local") or input_bytes is None:
        return ""
    return task_jvm_options(input_bytes)


def is_small(input_bytes: int) -> bool:
    """Whether ``input_bytes`` of segment files get the small settings."""
    return input_bytes <= SMALL_INPUT_BYTES


def shuffle_partitions(input_bytes: int, cores: int) -> int:
    """Shuffle partitions for ``input_bytes`` of segments on ``cores`` cores: 1 for a small
    input; else one per :data:`SHUFFLE_PARTITION_BYTES`, at least one per core, but at
    most one per :data:`MIN_PARTITION_BYTES`."""
    if is_small(input_bytes):
        return 1
    wanted = max(max(1, cores), -(-input_bytes // SHUFFLE_PARTITION_BYTES))
    return max(1, min(wanted, -(-input_bytes // MIN_PARTITION_BYTES)))


def sized_conf(
    input_bytes: int, cores: int, user_conf: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The SQL settings (all runtime ones: settable on a running session) for a job over
    ``input_bytes`` of segment files on ``cores`` cores, without the keys the user set."""
    partitions = shuffle_partitions(input_bytes, cores)
    if is_small(input_bytes):
        conf = {
            "spark.sql.shuffle.partitions": "1",
            "spark.sql.codegen.wholeStage": "false",
            "spark.sql.codegen.factoryMode": "NO_CODEGEN",
            "spark.sql.adaptive.enabled": "false",
            "spark.sql.adaptive.coalescePartitions.enabled": "false",
            # Sort-merge joins of one partition each are local; a broadcast is a job more.
            "spark.sql.autoBroadcastJoinThreshold": "-1",
        }
    else:
        # AQE re-plans at every shuffle, each stage a job of its own; it pays only when
        # there are partitions to coalesce (more than one per core).
        adaptive = "true" if partitions > max(1, cores) else "false"
        conf = {
            "spark.sql.shuffle.partitions": str(partitions),
            "spark.sql.codegen.wholeStage": "true",
            "spark.sql.codegen.factoryMode": "FALLBACK",
            "spark.sql.adaptive.enabled": adaptive,
            "spark.sql.adaptive.coalescePartitions.enabled": adaptive,
            "spark.sql.autoBroadcastJoinThreshold": str(10 * 1024 * 1024),
        }
    conf["spark.sql.inMemoryColumnarStorage.compressed"] = "false"
    user = user_conf or {}
    return {key: value for key, value in conf.items() if key not in user}
