"""The pipeline's SparkSession: pinned to loopback locally, shipping its code to a cluster.

A ``local[...]`` master (``shared/reference/pyspark.md``): the driver binds to 127.0.0.1
(left alone, Spark picks the eth0 address), Python workers run
this interpreter (``PYSPARK_PYTHON=sys.executable``: the venv's, which has pyarrow) and
import ``storage.pipeline`` from the repository root (put on their ``PYTHONPATH``).

A cluster master (``spark://``, ``yarn``, ``k8s://``): executors run the Python the cluster
gives them (``spark.pyspark.python`` / ``PYSPARK_PYTHON`` if the user sets one), and
kcoord's own code (the ``storage`` and ``wire`` packages, pure Python) is shipped to them as
a zip (``SparkContext.addPyFile``). What cannot be shipped is checked before the job: every
executor must import ``pyarrow`` (``pyspark[sql]``), ``crc32c`` and ``construct``; a
missing one stops the run with the executor's host and the ``pip install`` line.

Everywhere: the UI is off, time is UTC, the driver's heap is sized to the input
(:func:`.sizing.driver_memory`: 1 GiB, more on a local master for a large input); the
job's size settings (shuffle partitions, code generation, AQE, broadcasts) come from the
input's size and the cores, on any master (:mod:`.sizing`, :func:`size_job`);
``extra_conf`` (the CLI's ``--conf``) goes last and wins. A JVM started here maps Spark's
classes from a class-data-sharing archive only if the user asked for one
(:mod:`.jvm_cds`), and not if ``--conf`` sets ``spark.driver.extraJavaOptions`` itself.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from typing import Any

__all__ = [
    "EXECUTOR_REQUIREMENTS",
    "PipelineSetupError",
    "build_session",
    "check_executors",
    "code_zip",
    "log4j2_config",
    "prepare_environment",
    "repo_root",
    "size_job",
]

#: What executors must have installed (import name -> pip requirement).
EXECUTOR_REQUIREMENTS = {"pyarrow": "pyspark[sql]", "crc32c": "crc32c",
                         "construct": "construct"}
#: kcoord's packages the executors run (shipped to a cluster as a zip).
_SHIPPED_PACKAGES = ("storage", "wire")


class PipelineSetupError(Exception):
    """The cluster cannot run the pipeline (an executor misses a requirement)."""


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
    """Set what the JVM and its Python workers inherit; call before the session starts.
    Off loopback (a cluster) only the driver's own Python is pinned."""
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if not loopback:
        return
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # spark-submit's bind address
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    root = repo_root()
    current = os.environ.get("PYTHONPATH", "")
    parts = [p for p in current.split(os.pathsep) if p]
    if root not in parts:
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *parts])


def build_session(
    master: str = "local[2]",
    app_name: str = "kcoord-pipeline",
    extra_conf: dict[str, str] | None = None,
    quiet: bool = False,
    input_bytes: int | None = None,
    register_source: bool = True,
    class_cache: str | None = None,
    say: Callable[[str], None] | None = None,
) -> Any:
    """A SparkSession for ``master`` with the ``kcoord-log`` Data Source registered and
    the log level at ERROR.

    A ``local[...]`` master is pinned to loopback (driver bound to 127.0.0.1). For a
    cluster master (``spark://...``) the driver must be reachable by the executors, so
    the address is left to Spark (``SPARK_LOCAL_IP`` / ``spark.driver.host`` in
    ``extra_conf``). ``quiet``: the JVM's start-up lines are dropped (:mod:`.quiet_jvm`).
    ``input_bytes``: the segment bytes the job reads, when known: the job is sized to
    them (:func:`size_job`), the driver JVM gets :func:`.sizing.driver_java_options`
    (unless ``extra_conf`` sets ``spark.driver.extraJavaOptions``) and a cluster's
    executors :func:`.sizing.executor_java_options` (unless it sets
    ``spark.executor.extraJavaOptions``); None: one shuffle
    partition per core and Spark's defaults otherwise. ``register_source=False``:
    ``kcoord-log`` is not registered (for a run that reads on the driver): registering a
    Python Data Source makes Spark start a Python worker, once, to look for other
    installed ones (``pyspark.sql.worker.lookup_data_sources``). ``class_cache``: a
    directory for the JVM's class-data-sharing archive (:mod:`.jvm_cds`; also
    ``KCOORD_SPARK_CDS``), none by default; ``say`` gets a line naming the archive a run
    maps."""
    prepare_environment(loopback=master.startswith("local"))
    executor_python = (extra_conf or {}).get("spark.pyspark.python")
    if executor_python:
        # PySpark takes the executors' Python from PYSPARK_PYTHON when the context starts;
        # the conf alone reaches only a spark-submit launch.
        os.environ["PYSPARK_PYTHON"] = executor_python
    from pyspark.sql import SparkSession

    from .sizing import (
        driver_java_options,
        driver_memory,
        executor_java_options,
        is_small,
        master_cores,
    )
    from .source import register

    local = master.startswith("local")
    settings = {"spark.master": master, "spark.app.name": app_name}
    if local:
        settings.update({
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.driver.host": "127.0.0.1",
        })
        if input_bytes is None:
            settings["spark.sql.shuffle.partitions"] = str(master_cores(master) or 2)
    settings.update({
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.memory": driver_memory(master, input_bytes),
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{log4j2_config()}",
    })
    if local:
        settings["spark.executorEnv.PYTHONPATH"] = os.environ["PYTHONPATH"]
        settings["spark.executorEnv.PYSPARK_PYTHON"] = os.environ["PYSPARK_PYTHON"]
    java_options = driver_java_options(master, input_bytes)
    if java_options:
        settings["spark.driver.extraJavaOptions"] += " " + java_options
    executor_options = executor_java_options(master, input_bytes)
    if executor_options:
        settings["spark.executor.extraJavaOptions"] = executor_options
    if input_bytes is not None and is_small(input_bytes):
        # The driver's Arrow table is sliced into this many partitions: one task a stage.
        settings["spark.default.parallelism"] = "1"
    settings.update(extra_conf or {})
    from pyspark import SparkContext

    launching = SparkContext._gateway is None
    if launching and "spark.driver.extraJavaOptions" not in (extra_conf or {}):
        from .jvm_cds import archive_options

        cds = archive_options(class_cache, say)
        if cds:
            settings["spark.driver.extraJavaOptions"] += " " + cds
    if quiet:
        from .quiet_jvm import start_quiet_gateway

        start_quiet_gateway(settings)
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if launching:
        from .jvm_cds import register_finish

        register_finish(SparkContext._gateway)
    if not local:
        spark.sparkContext.addPyFile(code_zip())
    if input_bytes is not None:
        size_job(spark, master, input_bytes, extra_conf)
    if register_source:
        register(spark)
    return spark


def size_job(
    spark: Any, master: str, input_bytes: int, user_conf: dict[str, str] | None = None
) -> dict[str, str | None]:
    """Set the running session's SQL settings for a job over ``input_bytes`` of segment
    files (:func:`.sizing.sized_conf`; the cores: the master's, else the context's default
    parallelism), leaving the user's own settings alone. Returns the settings' previous
    values (None: unset), to restore a session that is not the job's own."""
    from .sizing import master_cores, sized_conf

    cores = master_cores(master, user_conf) or int(spark.sparkContext.defaultParallelism)
    previous: dict[str, str | None] = {}
    for key, value in sized_conf(input_bytes, cores, user_conf).items():
        previous[key] = spark.conf.get(key, None)
        spark.conf.set(key, value)
    return previous


def code_zip() -> str:
    """A zip of kcoord's ``storage`` and ``wire`` packages (Python sources only), named by
    its content so a cluster's executors never run stale code."""
    import hashlib
    import zipfile

    root = repo_root()
    files: list[tuple[str, str]] = []
    for package in _SHIPPED_PACKAGES:
        for directory, dirs, names in os.walk(os.path.join(root, package)):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(names):
                if name.endswith(".py") or name == "py.typed":
                    path = os.path.join(directory, name)
                    files.append((path, os.path.relpath(path, root)))
    digest = hashlib.sha256()
    for path, arcname in files:
        digest.update(arcname.encode())
        with open(path, "rb") as f:
            digest.update(f.read())
    target = os.path.join(tempfile.gettempdir(),
                          f"kcoord-pipeline-code-{digest.hexdigest()[:16]}.zip")
    if not os.path.exists(target):
        temp = f"{target}.{os.getpid()}"
        with zipfile.ZipFile(temp, "w", zipfile.ZIP_DEFLATED) as archive:
            for path, arcname in files:
                archive.write(path, arcname)
        os.replace(temp, target)
    return target


def check_executors(spark: Any) -> None:
    """Import every requirement on the executors (one task per default slot) before the
    job; PipelineSetupError naming the host, the module and the pip line otherwise."""
    modules = (*EXECUTOR_REQUIREMENTS, "storage.pipeline.parse")

    def probe(_: object) -> list[tuple[str, str, str]]:
        # Nested, so Spark ships it by value: it must run where kcoord's code does not.
        import importlib
        import socket

        missing = []
        for module in modules:
            try:
                importlib.import_module(module)
            except Exception as exc:
                missing.append((socket.gethostname(), module, f"{type(exc).__name__}: {exc}"))
        return missing

    context = spark.sparkContext
    slots = max(2, int(context.defaultParallelism))
    found = context.parallelize(range(slots), slots).flatMap(probe).distinct().collect()
    if not found:
        return
    host, module, error = sorted(found)[0]
    requirement = EXECUTOR_REQUIREMENTS.get(module)
    fix = (f"install it there: pip install '{requirement}'" if requirement else
           "kcoord's code was shipped but does not import there (see the error)")
    raise PipelineSetupError(
        f"executor on {host} cannot import {module} ({error}); {fix}. Executors need "
        + ", ".join(f"'{r}'" for r in EXECUTOR_REQUIREMENTS.values())
        + " in the Python they run (spark.pyspark.python)"
    )
