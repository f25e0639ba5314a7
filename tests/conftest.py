"""Suite-wide options."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--bootstrap",
        default=None,
        metavar="HOST:PORT",
        help="run the end-to-end suite against an external broker (a real Kafka, or a kcoord "
        "container) instead of starting kcoord; tests needing kcoord's own controls skip",
    )
