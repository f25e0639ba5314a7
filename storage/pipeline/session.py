"""The pipeline's SparkSession: pinned to loopback locally, shipping its code to a cluster.

A ``local[...]`` master (``shared/reference/pyspark.md``): the driver binds to 127.0.0.1
(left alone, Spark picks the eth0 address), shuffles use 2 partitions (1 for a small
input, :data:`SMALL_INPUT_CONF`), Python workers run
this interpreter (``PYSPARK_PYTHON=sys.executable``: the venv's, which has pyarrow) and
import ``storage.pipeline`` from the repository root (put on their ``PYTHONPATH``).

A cluster master (``spark://``, ``yarn``, ``k8s://``): executors run the Python the cluster
gives them (``spark.pyspark.python`` / ``PYSPARK_PYTHON`` if the user sets one), and
kcoord's own code (the ``storage`` and ``wire`` packages, pure Python) is shipped to them as
a zip (``SparkContext.addPyFile``). What cannot be shipped is checked before the job: every
executor must import ``pyarrow`` (``pyspark[sql]``), ``crc32c`` and ``construct``; a
missing one stops the run with the executor's host and the ``pip install`` line.

Everywhere: the UI is off, time is UTC, the driver gets 1 GiB; ``extra_conf`` (the CLI's
``--conf``) goes last and wins. A JVM started here maps Spark's classes from a
class-data-sharing archive (:mod:`.jvm_cds`; made by the first run) unless ``--conf``
sets ``spark.driver.extraJavaOptions`` itself.
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any

__all__ = [
    "EXECUTOR_REQUIREMENTS",
    "SMALL_INPUT_CONF",
    "SMALL_INPUT_JAVA_OPTIONS",
    "PipelineSetupError",
    "build_session",
    "check_executors",
    "code_zip",
    "log4j2_config",
    "prepare_environment",
    "repo_root",
]

#: What executors must have installed (import name -> pip requirement).
EXECUTOR_REQUIREMENTS = {"pyarrow": "pyspark[sql]", "crc32c": "crc32c",
                         "construct": "construct"}
#: kcoord's packages the executors run (shipped to a cluster as a zip).
_SHIPPED_PACKAGES = ("storage", "wire")


#: A small input's session: every plan runs once over a few thousand rows, so compiling
#: generated code (whole-stage codegen, and the per-expression classes Spark otherwise
#: compiles with Janino: ``codegen.factoryMode=NO_CODEGEN`` takes the interpreted
#: projections, predicates and orderings instead) and re-planning at each shuffle
#: (adaptive query execution) cost more than they save; one partition per shuffle and per
#: local table (the driver's Arrow read) is one task per stage.
SMALL_INPUT_CONF = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.shuffle.partitions": "1",
    "spark.default.parallelism": "1",
}
#: ... and the JVM's JIT stops at its quick first tier (C1), with the serial collector:
#: less compiling and fewer threads on a short run.
SMALL_INPUT_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


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
    small_input: bool = False,
    register_source: bool = True,
) -> Any:
    """A SparkSession for ``master`` with the ``kcoord-log`` Data Source registered and
    the log level at ERROR.

    A ``local[...]`` master is pinned to loopback (driver bound to 127.0.0.1, 2 shuffle
    partitions). For a cluster master (``spark://...``) the driver must be reachable by
    the executors, so the address is left to Spark (``SPARK_LOCAL_IP`` /
    ``spark.driver.host`` in ``extra_conf``) and so are the partition counts. ``quiet``:
    the JVM's start-up lines are dropped (:mod:`.quiet_jvm`). ``small_input``: tuned for
    a short run over little data (:data:`SMALL_INPUT_CONF`, :data:`SMALL_INPUT_JAVA_OPTIONS`).
    ``register_source=False``: ``kcoord-log`` is not registered (for a run that reads on
    the driver): registering a Python Data Source makes Spark start a Python worker, once,
    to look for other installed ones (``pyspark.sql.worker.lookup_data_sources``)."""
    prepare_environment(loopback=master.startswith("local"))
    executor_python = (extra_conf or {}).get("spark.pyspark.python")
    if executor_python:
        # PySpark takes the executors' Python from PYSPARK_PYTHON when the context starts;
        # the conf alone reaches only a spark-submit launch.
        os.environ["PYSPARK_PYTHON"] = executor_python
    from pyspark.sql import SparkSession

    from .source import register

    local = master.startswith("local")
    settings = {"spark.master": master, "spark.app.name": app_name}
    if local:
        settings.update({
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.driver.host": "127.0.0.1",
            "spark.sql.shuffle.partitions": "2",
            "spark.default.parallelism": "2",
        })
    settings.update({
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.memory": "1g",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{log4j2_config()}",
    })
    if local:
        settings["spark.executorEnv.PYTHONPATH"] = os.environ["PYTHONPATH"]
        settings["spark.executorEnv.PYSPARK_PYTHON"] = os.environ["PYSPARK_PYTHON"]
    if small_input:
        settings.update(SMALL_INPUT_CONF)
        settings["spark.driver.extraJavaOptions"] += " " + SMALL_INPUT_JAVA_OPTIONS
    settings.update(extra_conf or {})
    from pyspark import SparkContext

    launching = SparkContext._gateway is None
    if launching and "spark.driver.extraJavaOptions" not in (extra_conf or {}):
        from .jvm_cds import archive_options

        cds = archive_options()
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
    if register_source:
        register(spark)
    return spark


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
