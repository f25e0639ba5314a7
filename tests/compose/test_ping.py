"""``kcoord ping``: exit 0 once a broker answers ApiVersions, 1 on timeout, 2 on bad arguments.

Brokers here are tiny threaded TCP servers on 127.0.0.1:0 speaking through ``wire``, and
once the real ``kcoord serve`` run as a subprocess.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import wire
from coordinator import ping

ROOT = Path(__file__).resolve().parents[2]

# What a fake broker does with one connection: ("answer", error_code), ("close",), ("stall",).
Behaviour = Callable[[int], tuple[str, int]]


class FakeBroker:
    """A threaded TCP server on 127.0.0.1:0; ``behaviour(n)`` decides connection n's fate."""

    def __init__(self, behaviour: Behaviour, listen_after: float = 0.0) -> None:
        self.behaviour = behaviour
        self.requests: list[wire.DecodedRequest] = []
        self.connections = 0
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        self._listen_after = listen_after
        if not listen_after:
            self._sock.listen(8)  # before __init__ returns: no refused first attempt
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _run(self) -> None:
        # Bound but not listening: connections are refused until listen().
        if self._listen_after:
            if self._stop.wait(self._listen_after):
                return
            self._sock.listen(8)
        self._sock.settimeout(0.05)
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            with conn:
                self.connections += 1
                self._handle(conn, self.behaviour(self.connections))

    def _handle(self, conn: socket.socket, action: tuple[str, int]) -> None:
        kind, error_code = action
        if kind == "close":
            return
        conn.settimeout(2.0)
        reader = wire.FrameReader()
        payload: bytes | object = wire.NEED_DATA
        while payload is wire.NEED_DATA:
            data = conn.recv(65536)
            if not data:
                return
            reader.receive_data(data)
            payload = reader.next_frame()
        assert isinstance(payload, bytes)
        request = wire.decode_request(payload)
        self.requests.append(request)
        if kind == "stall":
            self._stop.wait(5.0)
            return
        body = {"error_code": error_code, "api_keys": wire.api_versions_keys()}
        conn.sendall(wire.encode_response(18, 0, request.correlation_id, body))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)
        assert not self._thread.is_alive()
        self._sock.close()


@pytest.fixture
def broker() -> Iterator[Callable[..., FakeBroker]]:
    started: list[FakeBroker] = []

    def start(behaviour: Behaviour = lambda n: ("answer", 0), **kw: float) -> FakeBroker:
        fake = FakeBroker(behaviour, **kw)
        started.append(fake)
        return fake

    yield start
    for fake in started:
        fake.close()


def closed_port() -> int:
    """A port nothing listens on (bound, never listened, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def one_line(text: str) -> str:
    lines = text.splitlines()
    assert len(lines) == 1, text
    return lines[0]


def test_answering_broker_exits_0(
    broker: Callable[..., FakeBroker], capsys: pytest.CaptureFixture[str]
) -> None:
    fake = broker()
    assert ping.main(["--bootstrap", fake.bootstrap]) == 0
    out, err = capsys.readouterr()
    assert (out, err) == ("", "")
    [request] = fake.requests
    assert (request.api_key, request.api_version) == (18, 0)
    assert request.client_id == "kcoord-ping"


def test_closed_port_times_out_with_1_quickly(capsys: pytest.CaptureFixture[str]) -> None:
    port = closed_port()
    started = time.monotonic()
    assert ping.main(["--bootstrap", f"127.0.0.1:{port}", "--timeout", "0.5"]) == 1
    elapsed = time.monotonic() - started
    assert 0.5 <= elapsed < 1.5
    line = one_line(capsys.readouterr().err)
    assert line.startswith(f"kcoord ping: 127.0.0.1:{port} did not answer ApiVersions within 0.5s")


def test_retries_until_the_broker_listens(broker: Callable[..., FakeBroker]) -> None:
    fake = broker(listen_after=0.6)
    started = time.monotonic()
    assert ping.main(["--bootstrap", fake.bootstrap, "--timeout", "5"]) == 0
    assert 0.6 <= time.monotonic() - started < 2.0


def test_retries_past_errors_and_dropped_connections(broker: Callable[..., FakeBroker]) -> None:
    script = {1: ("close", 0), 2: ("answer", 15), 3: ("answer", 0)}  # 15 COORDINATOR_NOT_AVAILABLE
    fake = broker(lambda n: script[n])
    assert ping.main(["--bootstrap", fake.bootstrap, "--timeout", "5"]) == 0
    assert fake.connections == 3
    assert [r.correlation_id for r in fake.requests] == [2, 3]


def test_error_code_until_timeout_exits_1(
    broker: Callable[..., FakeBroker], capsys: pytest.CaptureFixture[str]
) -> None:
    fake = broker(lambda n: ("answer", 15))
    assert ping.main(["--bootstrap", fake.bootstrap, "--timeout", "0.5"]) == 1
    assert one_line(capsys.readouterr().err).endswith("ApiVersions answered error_code 15")
    assert len(fake.requests) >= 2  # retried every 200 ms


def test_a_stalled_broker_is_bounded_by_the_timeout(
    broker: Callable[..., FakeBroker], capsys: pytest.CaptureFixture[str]
) -> None:
    fake = broker(lambda n: ("stall", 0))
    started = time.monotonic()
    assert ping.main(["--bootstrap", fake.bootstrap, "--timeout", "0.5"]) == 1
    assert time.monotonic() - started < 1.5
    assert one_line(capsys.readouterr().err).endswith("no answer in time")


def test_unresolvable_host_times_out_with_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert ping.main(["--bootstrap", "no-such-host.invalid:9092", "--timeout", "0.3"]) == 1
    one_line(capsys.readouterr().err)


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--bootstrap", "localhost"],
        ["--bootstrap", ":9092"],
        ["--bootstrap", "localhost:"],
        ["--bootstrap", "localhost:port"],
        ["--bootstrap", "localhost:0"],
        ["--bootstrap", "localhost:65536"],
        ["--bootstrap", "::1:9092"],
        ["--bootstrap", "a:1,b:2"],
        ["--bootstrap", "localhost:9092", "--timeout", "0"],
        ["--bootstrap", "localhost:9092", "--timeout", "-1"],
        ["--bootstrap", "localhost:9092", "--timeout", "nan"],
        ["--bootstrap", "localhost:9092", "--timeout", "soon"],
        ["--bootstrap", "localhost:9092", "--unknown"],
        ["localhost:9092"],
    ],
)
def test_bad_arguments_exit_2_with_one_line(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert ping.main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert one_line(err).startswith("kcoord ping: error: ")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("localhost:9092", ("localhost", 9092)),
        ("kcoord:9092", ("kcoord", 9092)),
        ("10.0.0.1:1", ("10.0.0.1", 1)),
        ("[::1]:9092", ("::1", 9092)),
    ],
)
def test_parse_bootstrap(text: str, expected: tuple[str, int]) -> None:
    assert ping.parse_bootstrap(text) == expected


def test_ipv6_loopback(capsys: pytest.CaptureFixture[str]) -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6")
    try:
        probe = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        probe.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback")
    port = probe.getsockname()[1]
    probe.close()
    assert ping.main(["--bootstrap", f"[::1]:{port}", "--timeout", "0.3"]) == 1
    assert f"[::1]:{port} did not answer" in capsys.readouterr().err


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def test_module_entry_point_exit_codes() -> None:
    """``python -m coordinator.ping``: the same contract as a process (stderr one line)."""
    port = closed_port()
    timed_out = subprocess.run(
        [sys.executable, "-m", "coordinator.ping", "--bootstrap", f"127.0.0.1:{port}",
         "--timeout", "0.3"],
        capture_output=True, text=True, env=_env(), timeout=30, check=False,
    )  # fmt: skip
    assert timed_out.returncode == 1
    one_line(timed_out.stderr)
    bad = subprocess.run(
        [sys.executable, "-m", "coordinator.ping", "--bootstrap", "nope"],
        capture_output=True, text=True, env=_env(), timeout=30, check=False,
    )  # fmt: skip
    assert bad.returncode == 2
    assert one_line(bad.stderr) == "kcoord ping: error: --bootstrap 'nope': expected HOST:PORT"


@pytest.fixture
def real_server(tmp_path: Path) -> Iterator[str]:
    """``python -m coordinator serve --port 0`` as a subprocess; yields its HOST:PORT."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "coordinator", "serve", "--port", "0",
         "--data-dir", str(tmp_path / "data"), "--log-level", "warning"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=_env(),
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("kcoord listening on "), line
        yield line.removeprefix("kcoord listening on ")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def test_pings_the_real_server(real_server: str) -> None:
    assert ping.main(["--bootstrap", real_server, "--timeout", "5"]) == 0


def test_kcoord_ping_command_on_the_real_server(real_server: str) -> None:
    """``python -m coordinator ping`` (what ``kcoord ping`` runs), once wired into the CLI."""

    def kcoord_ping(bootstrap: str, timeout: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "coordinator", "ping", "--bootstrap", bootstrap,
             "--timeout", timeout],
            capture_output=True, text=True, env=_env(), timeout=30, check=False,
        )  # fmt: skip

    closed = kcoord_ping(f"127.0.0.1:{closed_port()}", "0.3")
    if closed.returncode == 2 and "invalid choice: 'ping'" in closed.stderr:
        pytest.skip("kcoord ping is not wired into coordinator/cli.py yet")
    assert closed.returncode == 1, closed.stderr
    one_line(closed.stderr)
    answered = kcoord_ping(real_server, "5")
    assert answered.returncode == 0, answered.stderr
    assert (answered.stdout, answered.stderr) == ("", "")
