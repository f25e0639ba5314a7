"""Fixtures for the pipeline tests: one loopback SparkSession for the whole run.

Spark's start-up (a JVM, ~6 s) and the first use of its Python workers (~10 s) are paid
once per pytest process: every Spark test shares the session-scoped ``spark`` fixture.
The parser tests need no Spark at all.

Warnings: the suite turns warnings into errors, and no filter is needed here: with
pandas < 3 (pinned by the pipeline extra) PySpark 4.3 raises no Python warning, and the
JVM's start-up lines go to its stderr. (kafka-python's DeprecationWarning is filtered
in test_real_server_logs.py, as the e2e suite does.)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from pipeline_support import NEEDS_EXTRA

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:  # the repo root, so `import storage` works without an install
    sys.path.insert(0, ROOT)


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A ``local[2]`` SparkSession pinned to loopback, with ``kcoord-log`` registered."""
    pytest.importorskip("pyspark", reason=NEEDS_EXTRA)
    from storage.pipeline.jvm_cds import CDS_ENV
    from storage.pipeline.session import build_session

    # No class-data-sharing archive in tests (this JVM's, and the CLI subprocesses'): a
    # fresh machine would spend a minute writing one at exit (test_pipeline_jvm_cds
    # tests the archive itself).
    os.environ.setdefault(CDS_ENV, "0")
    session = build_session("local[2]", app_name="kcoord-pipeline-tests")
    yield session
    session.stop()
