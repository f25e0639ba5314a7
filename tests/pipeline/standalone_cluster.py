"""A Spark standalone cluster for the pipeline's cluster test and benchmark: a master and
two one-core, 1 GB workers started from pyspark's bundled ``spark-class`` (as a user would
with Spark's own scripts), each worker in its own working directory, all on 127.0.0.1.

The workers' ``PATH`` leaves out this venv, so no executor finds the venv's ``python3``
by accident: the caller says which Python the executors run (``executor_settings``).
"""

from __future__ import annotations

import contextlib
import os
import site
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["executor_settings", "free_port", "standalone_cluster", "wait_port"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "a Spark daemon exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"nothing listens on {port} after {timeout}s")


@contextlib.contextmanager
def standalone_cluster(workdir: Path, workers: int = 2) -> Iterator[str]:
    """``spark://127.0.0.1:PORT`` with ``workers`` one-core workers (logs and working
    directories under ``workdir``: ``master.log``, ``worker-N/``), stopped afterwards."""
    import pyspark

    spark_home = os.path.dirname(pyspark.__file__)
    spark_class = os.path.join(spark_home, "bin", "spark-class")
    venv_bin = os.path.dirname(sys.executable)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if p != venv_bin)
    env = {**os.environ, "SPARK_HOME": spark_home, "SPARK_LOCAL_IP": "127.0.0.1",
           "SPARK_NO_DAEMONIZE": "1", "PATH": path}
    env.pop("VIRTUAL_ENV", None)
    port = free_port()
    procs: list[subprocess.Popen[bytes]] = []
    with contextlib.ExitStack() as logs:
        try:
            log = logs.enter_context(open(workdir / "master.log", "wb"))
            master = subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                 "--port", str(port), "--webui-port", str(free_port())],
                env=env, stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
            procs.append(master)
            wait_port(port, master)
            url = f"spark://127.0.0.1:{port}"
            for i in range(workers):
                work = workdir / f"worker-{i}"
                work.mkdir(exist_ok=True)
                log = logs.enter_context(open(workdir / f"worker-{i}.log", "wb"))
                procs.append(subprocess.Popen(
                    [spark_class, "org.apache.spark.deploy.worker.Worker", "--host",
                     "127.0.0.1", "--cores", "1", "--memory", "1G", "--work-dir", str(work),
                     "--webui-port", str(free_port()), url],
                    env=env, stdout=log, stderr=subprocess.STDOUT, cwd=work))
            deadline = time.monotonic() + 60
            while (workdir / "master.log").read_bytes().count(b"Registering worker") < workers:
                assert time.monotonic() < deadline, (workdir / "master.log").read_text()[-3000:]
                time.sleep(0.3)
            yield url
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)


def executor_settings() -> list[str]:
    """``--conf`` arguments for executors that run the base interpreter with this venv's
    site-packages (the pipeline's requirements) but not kcoord's code, which the pipeline
    ships; the driver on loopback, at most two cores of 512 MB executors."""
    executor_python = sys._base_executable  # type: ignore[attr-defined]
    site_packages = site.getsitepackages()[0]
    return ["--conf", "spark.driver.host=127.0.0.1",
            "--conf", f"spark.pyspark.python={executor_python}",
            "--conf", f"spark.executorEnv.PYTHONPATH={site_packages}",
            "--conf", "spark.executor.memory=512m", "--conf", "spark.cores.max=2"]
