"""The fixture's own contract: Kafka-named config by marker or parameter, and teardown that
leaks no threads, sockets or files over many cycles."""

from __future__ import annotations

import os
import threading
import time

import pytest

from coordinator.testing import KcoordServer


@pytest.mark.kcoord_config({"group.max.size": "3", "group.min.session.timeout.ms": "1000"})
def test_marker_config_reaches_the_server(kcoord: KcoordServer) -> None:
    assert kcoord.config["group.max.size"] == "3"
    assert kcoord.config["group.initial.rebalance.delay.ms"] == "0"  # the test default
    assert kcoord.port > 0 and kcoord.bootstrap == f"127.0.0.1:{kcoord.port}"


@pytest.mark.parametrize("kcoord", [{"num.partitions": "7"}], indirect=True)
def test_parameter_config_reaches_the_server(kcoord: KcoordServer) -> None:
    assert kcoord.config["num.partitions"] == "7"


def test_bad_config_is_refused_at_start() -> None:
    server = KcoordServer({"group.max.size": "zero"})
    with pytest.raises(Exception, match=r"group\.max\.size"):
        server.start()
    server.close()


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _own_threads() -> int:
    """Threads other than trio's cached workers (``Trio thread N``: process-wide, each
    exits after 10 s idle)."""
    return sum(not t.name.startswith("Trio thread") for t in threading.enumerate())


def test_two_hundred_cycles_leak_nothing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    KcoordServer(data_dir=str(tmp_path / "warm")).start().close()  # imports, caches
    threads, own, fds = threading.active_count(), _own_threads(), _open_fds()
    for i in range(200):
        with KcoordServer(data_dir=str(tmp_path / f"d{i % 4}")) as server:
            assert server.port > 0
    assert _own_threads() <= own
    # A segment read or fsync may have started one more cached trio worker in a late cycle:
    # it must be idle, so it exits within trio's 10 s idle timeout.
    deadline = time.monotonic() + 15
    while threading.active_count() > threads and time.monotonic() < deadline:
        time.sleep(0.1)
    assert threading.active_count() <= threads  # (an earlier idle worker may exit)
    assert _open_fds() <= fds + 2  # allow the interpreter's own lazily opened handles
