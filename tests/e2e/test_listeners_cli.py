"""``kcoord serve`` with several listeners (issue 29): one stdout line per listener, in
order, then per listener of each other broker; each port serves, and Metadata on each
shows only that listener's ports; mistakes are one-line usage errors, exit 2."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from e2e_support import REPO, KcoordProcess, assert_usage_errors, exchange

TWO = {"listeners": "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
       "listener.security.protocol.map": "INTERNAL:PLAINTEXT"}
LINE = re.compile(r"^kcoord (?:broker (\d) )?listening on 127\.0\.0\.1:(\d+) \((\w+)\)$")


def _metadata_ports(port: int) -> list[int]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        answer = exchange(sock, 3, 12, {"topics": []})
    return sorted(b.port for b in answer.brokers)


def test_one_line_per_listener_of_each_broker_in_order(start_kcoord: Any) -> None:
    server: KcoordProcess = start_kcoord(config=TWO, extra_args=["--brokers", "2"],
                                         listening_lines=4)
    parsed = [LINE.match(line) for line in server.lines]
    assert all(parsed), server.lines
    found = [(m.group(1), m.group(3), int(m.group(2))) for m in parsed if m]
    assert [(node, name) for node, name, _ in found] == [
        (None, "PLAINTEXT"), (None, "INTERNAL"), ("1", "PLAINTEXT"), ("1", "INTERNAL")]
    assert len({port for _, _, port in found}) == 4
    for _, name, port in found:
        assert _metadata_ports(port) == sorted(p for _, n, p in found if n == name)


def test_without_listeners_the_single_line_is_unchanged(start_kcoord: Any) -> None:
    server: KcoordProcess = start_kcoord()
    assert re.fullmatch(r"kcoord listening on 127\.0\.0\.1:\d+", server.listening_line)


def test_listener_mistakes_are_one_line_usage_errors(tmp_path: Path) -> None:
    properties = tmp_path / "server.properties"
    properties.write_text("".join(f"{key}={value}\n" for key, value in TWO.items()))
    two = ["--config-file", str(properties)]
    cases = {
        (*two, "--port", "0"): "--host/--port cannot be given with listeners",
        (*two, "--host", "127.0.0.1"): "--host/--port cannot be given with listeners",
        ("-c", "listeners=PLAINTEXT://:0,INTERNAL://:0"):
            "no security protocol defined for listener INTERNAL",
        ("-c", "listeners=PLAINTEXT://:19092,SSL://:19092"): "a different port",
        (*two, "-c", "advertised.listeners=OTHER://h:1"): "OTHER is not one of the listeners",
    }
    assert_usage_errors(tmp_path / "d", cases)


def test_a_listener_that_cannot_bind_is_named_and_nothing_is_announced(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "coordinator", "serve", "--data-dir", str(tmp_path / "d"),
             "-c", f"listeners=PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:{port}",
             "-c", "listener.security.protocol.map=INTERNAL:PLAINTEXT"],
            capture_output=True, text=True, timeout=30, cwd=REPO)
    assert result.returncode == 1, result.stderr
    assert f"cannot serve on 127.0.0.1:{port}" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.stdout == ""  # not even the first listener's line
