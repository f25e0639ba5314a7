"""Real ``kcoord serve`` subprocesses for the end-to-end tests (always killed afterwards)."""

from __future__ import annotations

import contextlib
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

#: What every end-to-end test ignores: kafka-python's deprecated schema loading (above), and
#: the ResourceWarning of a socket a client dropped unclosed. kafka-python 3.0.12 does that
#: with a failed connection attempt; the warning fires in whatever test the collector next
#: runs in, as an unraisable exception (one CI run failed in an aiokafka test on a socket
#: that test had not opened). Which client's socket it was cannot be told apart from
#: kcoord's there, so kcoord's own sockets are checked outside tests/e2e (tests/coordinator,
#: tests/durability), where the warning stays an error. ``_collect_client_sockets`` collects
#: what is left at the end of each module.
CLIENT_WARNINGS = (pytest.mark.filterwarnings("ignore::DeprecationWarning"),
                   pytest.mark.filterwarnings("ignore::ResourceWarning"))


@pytest.fixture(autouse=True, scope="module")
def _collect_client_sockets() -> Iterator[None]:
    """After each module, collect what its clients left: kafka-python 3.0.12 drops the socket
    of a failed connection attempt (to a stopped broker) without closing it, and its network
    thread may let go of it only after the test's own teardown collected. Unclosed, such a
    socket's ResourceWarning would fire in whatever later test the collector runs in (a Spark
    test, in one full run). So the threads the module started are given up to 5 s to end,
    then the garbage is collected with that warning ignored. A module that wants those
    warnings checks them itself."""
    import gc
    import threading
    import time

    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 5
    for thread in set(threading.enumerate()) - before:
        if not thread.daemon or thread.name.startswith("kafka"):
            thread.join(max(0.0, deadline - time.monotonic()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "e2e" in item.nodeid.split("/"):
            for mark in CLIENT_WARNINGS:
                item.add_marker(mark)


StartKcoord = Callable[..., KcoordProcess]


class ExternalBroker:
    """A broker named by ``--bootstrap``: only its address is known."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap


def _external(request: pytest.FixtureRequest) -> str | None:
    value: str | None = request.config.getoption("--bootstrap")
    return value


def _fresh_topic(bootstrap: str, name: str, partitions: int, timeout: float = 60.0) -> None:
    """Delete ``name`` if it exists and create it empty: the tests count messages exactly.
    Kafka deletes topics asynchronously, so creation is retried (bounded)."""
    import time

    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import TopicAlreadyExistsError, UnknownTopicOrPartitionError

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        with contextlib.suppress(UnknownTopicOrPartitionError):
            admin.delete_topics([name])
        deadline = time.monotonic() + timeout
        while True:
            try:
                admin.create_topics([NewTopic(name, partitions, 1)])
                return
            except TopicAlreadyExistsError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
    finally:
        admin.close()


@pytest.fixture
def start_kcoord(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[StartKcoord]:
    """``start_kcoord(topics=[...], config={...})``: a started server, killed at teardown."""
    if _external(request):
        pytest.skip("needs kcoord's own process (restart, data dir, CLI); --bootstrap is set")
    started: list[KcoordProcess] = []

    def start(data_dir: Path | None = None, port: int = 0, **kwargs: Any) -> KcoordProcess:
        process = KcoordProcess(data_dir or tmp_path / f"data{len(started)}", **kwargs)
        started.append(process)
        return process.start(port)

    yield start
    for process in started:
        process.kill()


@pytest.fixture
def kcoord(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A server with a 12-partition topic ``t12``: a kcoord subprocess, or the external
    broker ``--bootstrap`` names (where ``t12`` is re-created empty for each test)."""
    bootstrap = _external(request)
    if bootstrap:
        _fresh_topic(bootstrap, "t12", 12)
        yield ExternalBroker(bootstrap)
        return
    process = KcoordProcess(tmp_path / "data", topics=["t12:12"])
    try:
        yield process.start(0)
    finally:
        process.kill()
