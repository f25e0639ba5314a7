"""Start Spark's JVM with its stderr filtered: ``kcoord pipeline --quiet`` prints nothing
of Spark's own start-up.

The JVM prints two lines at start-up whatever log4j2 is told ("Setting default log level
to "WARN"." and "To adjust logging level use sc.setLogLevel(newLevel)...": Spark's
``Logging`` writes them with ``System.err`` when the session is a PySpark one), and the
JDK prints "WARNING: Using incubator modules: ...". PySpark launches the JVM through
``pyspark.java_gateway.launch_gateway``, which takes ``Popen`` arguments: the JVM is
launched here with its stderr on a pipe, and a thread copies every other line to this
process's stderr (errors still show).

Settings that shape the JVM itself (``spark.driver.memory``,
``spark.driver.extraJavaOptions``) must be in the configuration given here: the session
built afterwards reuses this JVM.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import IO, Any

__all__ = ["BANNER_PREFIXES", "start_quiet_gateway"]

#: Start-up lines dropped (prefixes).
BANNER_PREFIXES = (
    b"Setting default log level to",
    b"To adjust logging level use sc.setLogLevel",
    b"WARNING: Using incubator modules",
)


def _copy_filtered(source: IO[bytes], target: Any) -> None:
    for line in iter(source.readline, b""):
        if line.startswith(BANNER_PREFIXES):
            continue
        try:
            if hasattr(target, "buffer"):
                target.buffer.write(line)
            else:
                target.write(line.decode(errors="replace"))
            target.flush()
        except (OSError, ValueError):  # our stderr went away: keep draining the pipe
            continue


def start_quiet_gateway(settings: dict[str, str]) -> bool:
    """Launch the JVM (unless this process already has one) with ``settings`` (Spark
    keys, including ``spark.master``); True if it was launched here."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return False
    conf = SparkConf(loadDefaults=False)
    for key, value in settings.items():
        conf.set(key, value)
    gateway = launch_gateway(  # type: ignore[no-untyped-call]
        conf, popen_kwargs={"stderr": subprocess.PIPE}
    )
    proc = getattr(gateway, "proc", None)
    if proc is not None and proc.stderr is not None:
        threading.Thread(
            target=_copy_filtered, args=(proc.stderr, sys.stderr), name="spark-jvm-stderr",
            daemon=True,
        ).start()
    SparkContext._ensure_initialized(gateway=gateway, conf=conf)
    return True
