"""A SparkSession pinned to loopback, as ``shared/reference/pyspark.md`` prescribes.

The driver binds to 127.0.0.1 (left alone, Spark picks the eth0 address), the UI is off,
shuffles use 2 partitions, time is UTC, the driver gets 1 GiB. Python workers run this
interpreter (``PYSPARK_PYTHON=sys.executable``: the venv's, which has pyarrow) and can
import ``storage.pipeline`` (the repository root is put on their ``PYTHONPATH``).
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any

__all__ = ["build_session", "log4j2_config", "prepare_environment", "repo_root"]


def repo_root() -> str:
    """The directory holding the ``storage`` package (what workers need on sys.path)."""
    here = os.path.dirname(os.path.abspath(__file__))  # .../storage/pipeline
    return os.path.dirname(os.path.dirname(here))


_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.console.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
# A failed task (a corrupt input with strict) reaches the driver as an exception, which
# the pipeline reports; the executor's copy of the Python traceback is noise.
logger.executor.name = org.apache.spark.executor.Executor
logger.executor.level = fatal
logger.tasks.name = org.apache.spark.scheduler.TaskSetManager
logger.tasks.level = fatal
"""


def log4j2_config() -> str:
    """Path of a log4j2 configuration that keeps the JVM to errors (Spark's start-up WARN
    lines are noise next to the pipeline's own progress)."""
    path = os.path.join(tempfile.gettempdir(), f"kcoord-pipeline-log4j2-{os.getuid()}.properties")
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == _LOG4J2:
                return path
    except OSError:
        pass
    temp = f"{path}.{os.getpid()}"
    with open(temp, "w", encoding="utf-8") as f:
        f.write(_LOG4J2)
    os.replace(temp, path)
    return path


def prepare_environment(loopback: bool = True) -> None:
    """Set what the JVM and its Python workers inherit; call before the session starts."""
    if loopback:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # spark-submit's bind address
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    root = repo_root()
    current = os.environ.get("PYTHONPATH", "")
    parts = [p for p in current.split(os.pathsep) if p]
    if root not in parts:
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *parts])


def build_session(
    master: str = "local[2]",
    app_name: str = "kcoord-pipeline",
    extra_conf: dict[str, str] | None = None,
) -> Any:
    """A SparkSession for ``master`` with the ``kcoord-log`` Data Source registered and
    the log level at ERROR.

    A ``local[...]`` master is pinned to loopback (driver bound to 127.0.0.1, 2 shuffle
    partitions). For a cluster master (``spark://...``) the driver must be reachable by
    the executors, so the address is left to Spark (``SPARK_LOCAL_IP`` /
    ``spark.driver.host`` in ``extra_conf``) and so are the partition counts."""
    prepare_environment(loopback=master.startswith("local"))
    from pyspark.sql import SparkSession

    from .source import register

    builder = SparkSession.builder.master(master).appName(app_name)
    if master.startswith("local"):
        builder = (
            builder.config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.default.parallelism", "2")
        )
    builder = (
        builder.config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        .config(
            "spark.driver.extraJavaOptions",
            f"-Dlog4j2.configurationFile=file:{log4j2_config()}",
        )
        .config("spark.executorEnv.PYTHONPATH", os.environ["PYTHONPATH"])
        .config("spark.executorEnv.PYSPARK_PYTHON", os.environ["PYSPARK_PYTHON"])
    )
    for key, value in (extra_conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark
