"""Suite-wide options."""

from __future__ import annotations

import os

import pytest

# No JVM class-data-sharing archive for any Spark the tests start, in process or in a
# `kcoord pipeline` subprocess: on a fresh machine the first one would spend about a
# minute writing it at exit (tests/pipeline/test_pipeline_jvm_cds.py tests the archive).
os.environ.setdefault("KCOORD_SPARK_CDS", "0")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--bootstrap",
        default=None,
        metavar="HOST:PORT",
        help="run the end-to-end suite against an external broker (a real Kafka, or a kcoord "
        "container) instead of starting kcoord; tests needing kcoord's own controls skip",
    )
