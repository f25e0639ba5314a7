"""``kcoord pipeline`` on a real Spark standalone cluster (issue 16): a master and two
workers started from pyspark's bundled ``spark-class``, each worker in its own working
directory, executors running a Python that has the third-party requirements but not
kcoord's code (the base interpreter with only the venv's site-packages on its path, where
the editable install's hook does not apply). The pipeline ships its code, checks the
executors, and writes datasets equal row for row to local mode's; the cluster run reads its
input and writes its output by ``file://`` URI (Spark's binaryFile source and Hadoop's
filesystem on the executors), the local run by plain path.

Slow (a JVM per process, about a minute): ``pytest -m slow tests/pipeline``.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from standalone_cluster import executor_settings, standalone_cluster
from synthetic import write_log

from storage.pipeline.sizing import SMALL_INPUT_JAVA_OPTIONS

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DATASETS = ("offsets_latest", "offset_commits", "rebalances", "groups_summary", "commit_rates",
            "problems")


@pytest.fixture
def standalone(tmp_path: Path) -> Iterator[str]:
    """``spark://127.0.0.1:PORT`` with two one-core workers, stopped afterwards."""
    pytest.importorskip("pyspark")
    with standalone_cluster(tmp_path) as url:
        yield url


def pipeline(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "coordinator", "pipeline", *args],
                          capture_output=True, text=True, timeout=600, cwd=cwd)


def rows(output: Path, name: str, data_dir: str) -> list[tuple[Any, ...]]:
    """The dataset's rows (every column but ``data_dir``, which must be ``data_dir``)."""
    import pyarrow.parquet as pq

    table = pq.read_table(output / name)
    assert set(table.column("data_dir").to_pylist()) <= {data_dir}, name
    columns = sorted(c for c in table.column_names if c != "data_dir")
    data = table.select(columns).to_pylist()
    return sorted(tuple(repr(r[c]) for c in columns) for r in data)


def test_pipeline_on_a_standalone_cluster_equals_local_mode(
    standalone: str, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    write_log(str(data), groups=3, steps=40)
    executor_python = sys._base_executable  # type: ignore[attr-defined]
    site_packages = site.getsitepackages()[0]
    probe = subprocess.run([executor_python, "-c", "import storage"], capture_output=True,
                           env={**os.environ, "PYTHONPATH": site_packages}, cwd=tmp_path)
    assert probe.returncode != 0, "the executors' Python must not see kcoord's code"

    elsewhere = tmp_path / "driver"
    elsewhere.mkdir()
    # By file:// URI: the executors list nothing and read the segments through Spark's
    # binaryFile source (Hadoop's filesystem), the report is written through it too.
    cluster = pipeline(
        "--input", data.as_uri(), "--output", (tmp_path / "cluster").as_uri(),
        "--master", standalone, *executor_settings(),
        cwd=elsewhere)
    assert cluster.returncode == 0, cluster.stderr[-4000:]
    assert "checking the executors" in cluster.stderr
    local = pipeline("--input", str(data), "--output", str(tmp_path / "local"), "-q",
                     cwd=elsewhere)
    assert local.returncode == 0, local.stderr[-4000:]
    for name in DATASETS:
        local_rows = rows(tmp_path / "local", name, str(data))
        assert rows(tmp_path / "cluster", name, data.as_uri()) == local_rows, name
        assert local_rows or name == "problems", name
    assert (tmp_path / "cluster" / "report.html").stat().st_size > 1000
    # No executor ran in the driver's directory or in the other worker's: each worker's
    # own working directory holds its application's files.
    for i in range(2):
        assert any((tmp_path / f"worker-{i}").iterdir())


def test_an_executor_missing_a_requirement_is_named_before_the_job(
    standalone: str, tmp_path: Path
) -> None:
    """A job that runs Python on the executors (an input given by URI: decoded there)
    checks them first and names what one misses. A small input of local paths is parsed
    on the driver and runs no Python on the executors: it is not checked, and it runs."""
    data = tmp_path / "data"
    write_log(str(data), groups=1, steps=5)
    # The executors' path has pyspark and pyarrow but not crc32c: every site-packages of
    # this venv (a venv made with --system-site-packages has the base interpreter's too)
    # but crc32c, run by the base interpreter with -S (without its own site-packages,
    # which may hold crc32c).
    partial = tmp_path / "partial-site"
    partial.mkdir()
    for site_packages in map(Path, site.getsitepackages()):
        for entry in site_packages.iterdir():
            target = partial / entry.name
            if not entry.name.startswith(("crc32c", "_crc32c")) and not target.exists():
                target.symlink_to(entry)
    executor_python = tmp_path / "python-without-site"
    executor_python.write_text(
        f'#!/bin/sh\nexec {sys._base_executable} -S "$@"\n')  # type: ignore[attr-defined]
    executor_python.chmod(0o755)
    settings = ("--master", standalone,
                "--conf", "spark.driver.host=127.0.0.1",
                "--conf", f"spark.pyspark.python={executor_python}",
                "--conf", f"spark.executorEnv.PYTHONPATH={partial}",
                "--conf", "spark.executor.memory=512m")
    result = pipeline("--input", data.as_uri(), "--output", str(tmp_path / "out"),
                      *settings, cwd=tmp_path)
    assert result.returncode == 1
    assert "checking the executors" in result.stderr
    assert "cannot import crc32c" in result.stderr
    assert "pip install 'crc32c'" in result.stderr
    assert not (tmp_path / "out" / "offsets_latest").exists()
    by_path = pipeline("--input", str(data), "--output", str(tmp_path / "by-path"),
                       *settings, cwd=tmp_path)
    assert by_path.returncode == 0, by_path.stderr[-4000:]
    assert "checking the executors" not in by_path.stderr
    assert (tmp_path / "by-path" / "offsets_latest").is_dir()
    # Its executors were started with the small input's JVM options: each worker logs the
    # command it launched an executor with, in the application's directory (app-TIME-N).
    last_app = max(path.name for path in tmp_path.glob("worker-*/app-*"))
    commands = [line for path in tmp_path.glob(f"worker-*/{last_app}/*/stderr")
                for line in path.read_text(errors="replace").splitlines()
                if line.startswith("Spark Executor Command:")]
    assert commands
    for option in SMALL_INPUT_JAVA_OPTIONS.split():
        assert all(f'"{option}"' in line for line in commands), (option, commands)
    shutil.rmtree(tmp_path / "out", ignore_errors=True)
