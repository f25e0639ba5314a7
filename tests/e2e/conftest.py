"""Real ``kcoord serve`` subprocesses for the end-to-end tests (always killed afterwards)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_support import KcoordProcess

# kafka-python 3.0.12 loads its JSON schemas with importlib.resources.read_text, deprecated
# in Python 3.11: import it once with that warning silenced (the suite turns warnings into
# errors), and keep it silenced while the clients run.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import kafka
    import kafka.admin  # noqa: F401

CLIENT_WARNINGS = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "e2e" in item.nodeid.split("/"):
            item.add_marker(CLIENT_WARNINGS)


StartKcoord = Callable[..., KcoordProcess]


@pytest.fixture
def start_kcoord(tmp_path: Path) -> Iterator[StartKcoord]:
    """``start_kcoord(topics=[...], config={...})``: a started server, killed at teardown."""
    started: list[KcoordProcess] = []

    def start(data_dir: Path | None = None, port: int = 0, **kwargs: Any) -> KcoordProcess:
        process = KcoordProcess(data_dir or tmp_path / f"data{len(started)}", **kwargs)
        started.append(process)
        return process.start(port)

    yield start
    for process in started:
        process.kill()


@pytest.fixture
def kcoord(start_kcoord: StartKcoord) -> KcoordProcess:
    """A server with a 12-partition topic ``t12``."""
    return start_kcoord(topics=["t12:12"])
