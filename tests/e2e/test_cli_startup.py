"""Issue 32 items 9-11 with real processes: every start-up check comes before ``kcoord
listening`` (one line on stderr, exit 2, the right port named), a closed stdout never stops
the server, ``log dump | head`` exits quietly, ``log dump --type`` refuses a typo."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from e2e_support import REPO
from test_cli import api_versions_error, wait_until_locked

SERVE = [sys.executable, "-m", "coordinator", "serve"]
V1_LOG = REPO / "tests" / "storage" / "fixtures" / "v1-log"


def refused(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``kcoord serve ARGS`` expecting it to refuse to start."""
    result = subprocess.run([*SERVE, *args], capture_output=True, text=True, timeout=60,
                            cwd=REPO)
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert result.stdout == ""  # "kcoord listening on ..." never printed
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    return result


def free_ports(count: int) -> int:
    """A port P such that P .. P + count - 1 are free now."""
    for _ in range(50):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = int(probe.getsockname()[1])
        if base + count > 65535:
            continue
        try:
            for port in range(base, base + count):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
        except OSError:
            continue
        return base
    raise AssertionError("no free port range")


def test_a_data_dir_locked_by_another_server_is_refused_before_listening(
    tmp_path: Path, start_kcoord: Any
) -> None:
    start_kcoord(data_dir=tmp_path / "shared")
    wait_until_locked(tmp_path / "shared" / ".lock")
    result = refused("--port", "0", "--data-dir", str(tmp_path / "shared"))
    assert "in use by another kcoord (pid " in result.stderr


def test_a_data_dir_that_cannot_be_created_is_refused_before_listening() -> None:
    """os.access says yes to root; mkdir in /proc still fails."""
    result = refused("--port", "0", "--data-dir", "/proc/kcoord-no-such/data")
    assert "--data-dir /proc/kcoord-no-such/data: cannot be created" in result.stderr


def test_a_control_port_equal_to_the_kafka_port_is_refused(tmp_path: Path) -> None:
    port = free_ports(1)
    result = refused("--port", str(port), "--control-port", str(port),
                     "--data-dir", str(tmp_path / "d"))
    assert f"--control-port {port} is broker 0's Kafka port (--port {port})" in result.stderr


def test_a_control_port_equal_to_broker_1s_port_is_named_as_such(tmp_path: Path) -> None:
    port = free_ports(2)
    result = refused("--port", str(port), "--brokers", "2", "--control-port", str(port + 1),
                     "--data-dir", str(tmp_path / "d"))
    assert (f"--control-port {port + 1} is broker 1's Kafka port (--port {port} --brokers 2)"
            in result.stderr)


def _get(port: int, path: str) -> tuple[int, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as resp:
        return int(resp.status), json.loads(resp.read())


def test_a_closed_stdout_never_stops_the_server(tmp_path: Path) -> None:
    """``kcoord serve --control-port P | head -1``: the reader is gone before the server
    writes its lines; it keeps serving (it died blaming the socket: "Broken pipe")."""
    port = free_ports(2)
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write to stdout now fails with EPIPE
    proc = subprocess.Popen(
        [*SERVE, "--port", str(port), "--control-port", str(port + 1),
         "--data-dir", str(tmp_path / "d")],
        stdout=write_end, stderr=subprocess.PIPE, text=True, cwd=REPO)
    os.close(write_end)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.communicate()[1]
            try:
                assert _get(port + 1, "/faults") == (200, [])
                break
            except OSError:
                assert time.monotonic() < deadline, "the control API never answered"
                time.sleep(0.1)
        assert api_versions_error(port) == 0
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert "Broken pipe" not in err and "Traceback" not in err, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_log_dump_into_a_closed_pipe_exits_quietly() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    result = subprocess.run([sys.executable, "-m", "coordinator", "log", "dump", str(V1_LOG)],
                            stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60,
                            cwd=REPO)
    os.close(write_end)
    assert (result.returncode, result.stderr) == (0, "")


@pytest.mark.parametrize("typo", ["offset_comit", "OffsetCommit"])
def test_log_dump_refuses_an_unknown_type_naming_the_valid_ones(typo: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "coordinator", "log", "dump", str(V1_LOG), "--type", typo],
        capture_output=True, text=True, timeout=60, cwd=REPO)
    assert result.returncode == 2 and result.stdout == ""
    assert f"unknown --type {typo}" in result.stderr
    assert "offset_commit, rebalance_event" in result.stderr
    known = subprocess.run(
        [sys.executable, "-m", "coordinator", "log", "dump", str(V1_LOG), "--type",
         "offset_commit"], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert known.returncode == 0 and "offset_commit::" in known.stdout


def test_a_busy_port_of_broker_1_is_named_before_listening(tmp_path: Path) -> None:
    port = free_ports(2)
    with socket.socket() as busy:
        busy.bind(("0.0.0.0", port + 1))
        busy.listen()
        result = subprocess.run(
            [*SERVE, "--port", str(port), "--brokers", "2", "--data-dir", str(tmp_path / "d")],
            capture_output=True, text=True, timeout=60, cwd=REPO)
    assert result.returncode == 1 and result.stdout == "", result
    lines = [line for line in result.stderr.splitlines() if line.startswith("kcoord:")]
    assert len(lines) == 1 and lines[0].startswith("kcoord: cannot serve broker 1 on ")
    assert f":{port + 1}: " in lines[0], result.stderr
