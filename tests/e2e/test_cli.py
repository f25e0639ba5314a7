"""The ``kcoord`` command-line contract, with real subprocesses."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e_support import REPO, KcoordProcess

from wire import decode_response, encode_request

SERVE = [sys.executable, "-m", "coordinator", "serve"]


def run_cli(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "coordinator", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )


@pytest.mark.parametrize(
    "args",
    [
        ["serve", "--bogus"],
        ["serve", "--port", "70000"],
        ["serve", "--port", "abc"],
        ["serve", "--fsync", "sometimes"],
        ["serve", "-c", "no.such.key=1"],
        ["serve", "-c", "novalue"],
        ["serve", "-c", "group.max.size=many"],
        ["serve", "-c", "group.min.session.timeout.ms=-5"],
        ["serve", "-c", "auto.create.topics.enable=perhaps"],
        ["serve", "-c", "socket.request.max.bytes=0"],
        ["serve", "-c", "connections.max.idle.ms=x"],
        ["serve", "--topic", "bad/name"],
        ["serve", "--topic", "t:0"],
        ["serve", "--config-file", "/nonexistent/server.properties"],
        ["serve", "--brokers", "0"],
        ["serve", "--brokers", "three"],
        ["serve", "--brokers", "3", "--port", "65534"],
        ["serve", "-c", "default.replication.factor=0"],
        ["serve", "-c", "coordinator.load.delay.ms=-1"],
        ["frobnicate"],
        [],
    ],
)
def test_bad_usage_is_one_line_on_stderr_and_exit_2(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    from coordinator.cli import main

    assert main(args) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert err.startswith("kcoord: error: ")


def test_a_data_dir_that_cannot_be_one_is_refused_before_listening(tmp_path: Path) -> None:
    """Issue 15 item 12: one line naming the path, exit 2, and no "listening" line."""
    a_file = tmp_path / "a-file"
    a_file.write_text("not a directory")
    for data_dir, why in ((a_file, "not a directory"), (a_file / "sub", "cannot be created")):
        result = run_cli("serve", "--port", "0", "--data-dir", str(data_dir))
        assert result.returncode == 2
        assert result.stdout == ""
        assert result.stderr == f"kcoord: error: --data-dir {data_dir}: {why}" + (
            f" in {a_file}\n" if why == "cannot be created" else "\n")


def test_no_command_names_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    from coordinator.cli import main

    assert main([]) == 2
    _, err = capsys.readouterr()
    for command in ("serve", "ping", "groups", "log dump", "pipeline"):
        assert command in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    from coordinator.cli import main

    assert main(["--version"]) == 0
    out, err = capsys.readouterr()
    assert (out, err) == (f"kcoord {version('kcoord')}\n", "")


def test_bad_usage_in_a_real_process() -> None:
    result = run_cli("serve", "-c", "no.such.key=1")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == "kcoord: error: unknown configuration key 'no.such.key'\n"


def test_config_file_unknown_key_and_good_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.properties"
    bad.write_text("# a comment\ngroup.max.size=10\ngroup.max.sise=3\n")
    result = run_cli("serve", "--config-file", str(bad))
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "kcoord: error: unknown configuration key 'group.max.sise' "
        "(did you mean 'group.max.size'?)")


def test_a_real_server_properties_starts_with_a_warning_per_foreign_key(
    tmp_path: Path, start_kcoord: Any
) -> None:
    """Issue 15 item 17: Kafka's stock server.properties keys that do not apply to one kcoord
    process are accepted, one warning each."""
    props = tmp_path / "server.properties"
    props.write_text("broker.id=0\nlog.dirs=/tmp/kafka-logs\n"
                     "num.network.threads=3\nnum.partitions=2\nzookeeper.connect=zk:2181\n")
    server = start_kcoord(extra_args=["--config-file", str(props)])
    assert api_versions_error(server.port) == 0
    stderr = server.stderr()
    for key in ("broker.id", "log.dirs", "num.network.threads",
                "zookeeper.connect"):
        assert stderr.count(f"configuration key {key} does not apply") == 1, key
    assert "num.partitions does not apply" not in stderr


def api_versions_error(port: int) -> int:
    """The error code of an ApiVersions v3 answered on ``port``."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(
            encode_request(
                18, 3, 7, "cli-test", {"client_software_name": "t", "client_software_version": "1"}
            )
        )
        data = b""
        while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
            chunk = sock.recv(65536)
            assert chunk
            data += chunk
        corr, body = decode_response(18, 3, data[4:])
        assert corr == 7
        return int(body.error_code)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_listening_line_then_clean_exit_on_signal(tmp_path: Path, sig: int) -> None:
    config = tmp_path / "server.properties"
    config.write_text(
        "group.initial.rebalance.delay.ms = 0\n"
        "offsets.retention.minutes: 60\n"
        "num.partitions 3\n"
        "connections.max.idle.ms=\\\n  60000\n"
    )
    process = KcoordProcess(
        tmp_path / "data", topics=["a", "b:2"], extra_args=["--config-file", str(config)]
    )
    process.start()
    try:
        assert process.port > 0
        assert api_versions_error(process.port) == 0
        assert process.proc is not None
        process.proc.send_signal(sig)
        assert process.proc.wait(15) == 0
    finally:
        process.kill()
    assert "Traceback" not in process.stderr()


def test_the_first_api_versions_equals_the_loaded_servers_answer(tmp_path: Path) -> None:
    # How fast it comes is measured by tests/benchmarks/bench_server.py --startup-only, not
    # here. Here: the early listener's answer is byte for byte the loaded server's, feature
    # fields included (transaction.version supported 0-2 at v4, finalized at its level).
    software = {"client_software_name": "kcoord-test", "client_software_version": "1"}
    process = KcoordProcess(tmp_path / "data", config={"transaction.version": "1"}).start()
    try:
        with socket.create_connection(("127.0.0.1", process.port), timeout=30) as sock:
            sock.sendall(encode_request(18, 4, 1, "c", software))
            (early,) = _frames(sock, 1)
        with socket.create_connection(("127.0.0.1", process.port), timeout=30) as sock:
            sock.sendall(encode_request(3, 9, 2, "c", {"topics": []})  # waits for the load
                         + encode_request(18, 4, 1, "c", software))
            _, loaded = _frames(sock, 2)
    finally:
        process.kill()
    assert early == loaded
    _, body = decode_response(18, 4, early)
    assert [(f.name, f.min_version, f.max_version) for f in body.supported_features] == [
        ("transaction.version", 0, 2), ("share.version", 0, 1)]
    assert [(f.name, f.max_version_level) for f in body.finalized_features] == [
        ("transaction.version", 1), ("share.version", 1)]


def wait_until_locked(lock: Path, timeout: float = 20.0) -> None:
    import fcntl
    import os
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if lock.exists():
            fd = os.open(lock, os.O_RDWR)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return  # held by the server
            else:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)
        time.sleep(0.02)
    raise AssertionError(f"{lock} was never locked by the first server")


def test_data_dir_in_use_exits_2_with_one_line(tmp_path: Path, start_kcoord: Any) -> None:
    first = start_kcoord(data_dir=tmp_path / "shared")
    assert first.port
    # The first server reports its address before it has opened (and locked) its log, so
    # that clients can connect during replay: wait until it really holds the lock.
    wait_until_locked(tmp_path / "shared" / ".lock")
    result = subprocess.run(
        [*SERVE, "--port", "0", "--data-dir", str(tmp_path / "shared")],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=REPO,
    )
    assert result.returncode == 2  # a start-up check, before listening (issue 32 item 9)
    assert result.stdout == ""
    errors = [line for line in result.stderr.splitlines() if line.startswith("kcoord:")]
    assert len(errors) == 1 and "in use" in errors[0], result.stderr


def test_port_in_use_exits_1(tmp_path: Path, start_kcoord: Any) -> None:
    first = start_kcoord()
    result = subprocess.run(
        [*SERVE, "--port", str(first.port), "--data-dir", str(tmp_path / "other")],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=REPO,
    )
    assert result.returncode == 1
    assert "cannot serve" in result.stderr


def test_a_busy_control_port_is_named_before_anything_listens(tmp_path: Path) -> None:
    """Issue 15 item 12: a --control-port in use is reported as the control port, in one
    line, and the Kafka port is never announced."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [*SERVE, "--port", "0", "--control-port", str(port), "--data-dir",
             str(tmp_path / "d")],
            capture_output=True, text=True, timeout=30, cwd=REPO,
        )
    assert result.returncode == 1
    assert result.stdout == ""  # "kcoord listening on ..." never printed
    lines = [line for line in result.stderr.splitlines() if line.startswith("kcoord:")]
    assert len(lines) == 1
    assert lines[0].startswith(f"kcoord: cannot serve the control API on 127.0.0.1:{port}: ")


def test_log_dump_dispatches_to_storage(tmp_path: Path, start_kcoord: Any) -> None:
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    server = start_kcoord(data_dir=tmp_path / "dumped", topics=["t12:12"])
    consumer = KafkaConsumer(
        bootstrap_servers=server.bootstrap, group_id="dumped-group", enable_auto_commit=False
    )
    try:
        consumer.commit({TopicPartition("t12", 5): OffsetAndMetadata(77, "", -1)})
    finally:
        consumer.close()
    server.stop()
    result = run_cli("log", "dump", str(tmp_path / "dumped"))
    assert result.returncode == 0, result.stderr
    assert "dumped-group" in result.stdout and "77" in result.stdout


def test_python_m_and_console_script_are_the_same_entry_point() -> None:
    from coordinator import cli

    assert run_cli("--help").returncode == 0
    script = Path(sys.executable).with_name("kcoord")
    if script.exists():
        result = subprocess.run(
            [str(script), "serve", "--bogus"], capture_output=True, text=True, timeout=30
        )
        assert result.returncode == 2
    assert callable(cli.main)


def test_several_brokers_print_one_listening_line_each(tmp_path: Path) -> None:
    """Issue 13: broker 0's line first (the bootstrap), then one line per other broker; every
    broker answers ApiVersions on its own port."""
    proc = subprocess.Popen(
        [*SERVE, "--port", "0", "--brokers", "3", "--data-dir", str(tmp_path / "data")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline().strip() for _ in range(3)]
        assert lines[0].startswith("kcoord listening on 127.0.0.1:")
        assert lines[1].startswith("kcoord broker 1 listening on 127.0.0.1:")
        assert lines[2].startswith("kcoord broker 2 listening on 127.0.0.1:")
        ports = [int(line.rsplit(":", 1)[1]) for line in lines]
        assert len(set(ports)) == 3
        assert [api_versions_error(port) for port in ports] == [0, 0, 0]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
        if proc.stdout is not None:
            proc.stdout.close()
        if proc.stderr is not None:
            proc.stderr.close()


def test_the_advertised_host_defaults_to_kcoord_advertised_host(tmp_path: Path) -> None:
    """Issue 15 item 20: the image sets KCOORD_ADVERTISED_HOST so that `docker run -p` works;
    --advertised-host still wins over it."""
    from e2e_support import raw_request

    env = {**os.environ, "KCOORD_ADVERTISED_HOST": "kcoord.example"}
    for extra, expected in (([], "kcoord.example"), (["--advertised-host", "flag"], "flag")):
        proc = subprocess.Popen(
            [*SERVE, "--port", "0", "--data-dir", str(tmp_path / f"data-{expected}"), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO, env=env,
        )
        try:
            assert proc.stdout is not None
            port = int(proc.stdout.readline().strip().rsplit(":", 1)[1])
            meta = raw_request(f"127.0.0.1:{port}", 3, 1, {"topics": []})
            assert [b.host for b in meta.brokers] == [expected]
        finally:
            proc.kill()
            proc.wait(5)
            if proc.stdout is not None:
                proc.stdout.close()


def _frames(sock: socket.socket, count: int) -> list[bytes]:
    data = b""
    frames = []
    while len(frames) < count:
        while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
            chunk = sock.recv(65536)
            assert chunk, "closed"
            data += chunk
        size = int.from_bytes(data[:4], "big")
        frames.append(data[4 : 4 + size])
        data = data[4 + size :]
    return frames


def test_a_connection_opened_at_the_listening_line_is_served_through_the_load(
    tmp_path: Path,
) -> None:
    # Answered first by the early listener (coordinator/server/early.py), then -- on the same
    # connection, in order -- by the server once it has taken the connection over.
    software = {"client_software_name": "kcoord-test", "client_software_version": "1"}
    process = KcoordProcess(tmp_path / "data", topics=["early:2"]).start()
    try:
        with socket.create_connection(("127.0.0.1", process.port), timeout=30) as sock:
            sock.sendall(
                encode_request(18, 3, 1, "c", software)
                + encode_request(3, 9, 2, "c", {"topics": [{"name": "early"}]})
                + encode_request(18, 3, 3, "c", software)
            )
            first, metadata, again = _frames(sock, 3)
        corr, versions = decode_response(18, 3, first)
        assert corr == 1 and versions.error_code == 0 and versions.api_keys
        corr, topics = decode_response(3, 9, metadata)
        assert corr == 2
        assert [(t.name, t.error_code, len(t.partitions)) for t in topics.topics] == [
            ("early", 0, 2)
        ]
        assert decode_response(18, 3, again) == (3, versions)  # the same table, loaded
    finally:
        process.kill()
    assert "Traceback" not in process.stderr()
