"""kcoord's pytest plugin (installed with kcoord through the ``pytest11`` entry point).

Fixtures:

- ``kcoord``: a fresh in-process kcoord per test (function scope) on 127.0.0.1:0, data in a
  temporary directory; yields a :class:`~coordinator.testing.double.KcoordServer`
  (``bootstrap``, ``create_topic``, ``describe_group``, ``committed``, ``advance``,
  ``inject``, ``restart``).
- ``kcoord_session``: one server for the whole session (cheaper; tests share groups).

Configuration with Kafka's names, through a marker or an indirect parameter::

    @pytest.mark.kcoord_config({"group.min.session.timeout.ms": "1000"})
    def test_x(kcoord): ...

    @pytest.mark.parametrize("kcoord", [{"group.max.size": "2"}], indirect=True)
    def test_y(kcoord): ...

Several brokers in the one server (``stop_broker``, ``start_broker``, ``move_coordinator``,
``coordinator_of``, ``bootstraps``)::

    @pytest.mark.kcoord_brokers(3)
    def test_failover(kcoord): ...

Defaults for tests: ``group.initial.rebalance.delay.ms=0``.

A failing test that used ``kcoord`` gets a ``kcoord`` section in its report: the groups,
and what each client connection sent and when (``diagnosis.py``), so that a client that
went silent can be told from a server that did not assign.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Iterator
from typing import Any

import pytest

from coordinator.testing.diagnosis import failure_report
from coordinator.testing.double import KcoordServer

__all__ = ["kcoord", "kcoord_session"]

MARKER = "kcoord_config"
BROKERS_MARKER = "kcoord_brokers"


def pytest_configure(config: pytest.Config) -> None:
    """Register the configuration marker."""
    config.addinivalue_line(
        "markers", f"{MARKER}(properties): Kafka-named configuration for the kcoord fixture"
    )
    config.addinivalue_line(
        "markers", f"{BROKERS_MARKER}(n): run the kcoord fixture with n brokers"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    """A failed test's report gets its kcoord's groups and connections (the server still
    runs: fixtures are torn down after the call's report)."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    server = getattr(item, "funcargs", {}).get("kcoord")
    if report.when == "call" and report.failed and isinstance(server, KcoordServer):
        with contextlib.suppress(Exception):  # a server the test stopped has nothing to add
            report.sections.append(("kcoord", failure_report(server)))


def _brokers_for(request: pytest.FixtureRequest) -> int:
    marker = request.node.get_closest_marker(BROKERS_MARKER)
    if marker is None:
        return 1
    if len(marker.args) != 1 or isinstance(marker.args[0], bool) or not isinstance(
        marker.args[0], int
    ) or marker.args[0] < 1:
        raise pytest.UsageError(f"@pytest.mark.{BROKERS_MARKER} takes one positive int")
    return int(marker.args[0])


def _config_for(request: pytest.FixtureRequest) -> dict[str, str]:
    config: dict[str, str] = {}
    marker = request.node.get_closest_marker(MARKER)
    if marker is not None:
        if len(marker.args) != 1 or not isinstance(marker.args[0], dict):
            raise pytest.UsageError(f"@pytest.mark.{MARKER} takes one dict of properties")
        config.update({str(k): str(v) for k, v in marker.args[0].items()})
    param: Any = getattr(request, "param", None)
    if param is not None:
        if not isinstance(param, dict):
            raise pytest.UsageError("the kcoord fixture's parameter is a dict of properties")
        config.update({str(k): str(v) for k, v in param.items()})
    return config


@pytest.fixture
def kcoord(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KcoordServer]:
    """A kcoord server for one test."""
    data_dir = tmp_path_factory.mktemp("kcoord")
    server = KcoordServer(_config_for(request), data_dir=str(data_dir),
                          brokers=_brokers_for(request))
    server.start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def kcoord_session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KcoordServer]:
    """One kcoord server shared by the whole test session."""
    data_dir = tmp_path_factory.mktemp("kcoord-session")
    server = KcoordServer(_config_for(request), data_dir=str(data_dir))
    server.start()
    try:
        yield server
    finally:
        server.close()
