"""File descriptors (issue 32 item 6), against a real ``kcoord serve`` whose descriptor limit
is 128 (``RLIMIT_NOFILE``, soft and hard): producing to 150 partitions used to fail with a
traceback once each partition held two descriptors, the server then could not start again
on its own data, and a flood of connections during start-up made it exit 1."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka import KafkaProducer
    from kafka.admin import KafkaAdminClient, NewTopic

LIMIT = 128
PARTITIONS = 150

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, LIMIT))


def _serve(data_dir: Path, port: int = 0) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from coordinator.cli import main; sys.exit(main())",
         "serve", "--port", str(port), "--data-dir", str(data_dir), "--log-level", "error"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=_limited)
    line = proc.stdout.readline() if proc.stdout is not None else ""
    if "listening" not in line:
        proc.kill()
        _, err = proc.communicate(timeout=30)
        raise AssertionError(f"kcoord did not start: {line!r} {err[-2000:]}")
    return proc, int(line.rsplit(":", 1)[1].split()[0])


def _stop(proc: subprocess.Popen[str]) -> str:
    proc.terminate()
    _, err = proc.communicate(timeout=30)
    return err


def _produce(port: int, partitions: range) -> list[Any]:
    producer = KafkaProducer(bootstrap_servers=f"127.0.0.1:{port}", acks=1, retries=0,
                             request_timeout_ms=10_000, max_block_ms=10_000)
    try:
        futures = [producer.send("many", b"v", partition=i) for i in partitions]
        return [f.get(timeout=20) for f in futures]
    finally:
        producer.close(timeout=5)


def test_many_partitions_within_a_descriptor_limit(tmp_path: Path) -> None:
    proc, port = _serve(tmp_path)
    try:
        admin = KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{port}")
        admin.create_topics([NewTopic("many", PARTITIONS, 1)])
        admin.close()
        sent = _produce(port, range(PARTITIONS))
        assert [m.offset for m in sent] == [0] * PARTITIONS
        assert len(os.listdir(f"/proc/{proc.pid}/fd")) < LIMIT
    finally:
        err = _stop(proc)
    assert "Traceback" not in err
    # It starts again on its own data, within the same limit, and appends where it was.
    proc, port = _serve(tmp_path)
    try:
        assert [m.offset for m in _produce(port, range(0, PARTITIONS, 10))] == [1] * 15
    finally:
        err = _stop(proc)
    assert "Traceback" not in err

    # A flood of connections during start-up: the server keeps serving.
    proc, port = _serve(tmp_path, port)
    flood: list[socket.socket] = []
    try:
        began = time.monotonic()
        while time.monotonic() - began < 3 and proc.poll() is None and len(flood) < 2_000:
            try:
                flood.append(socket.create_connection(("127.0.0.1", port), timeout=1))
            except OSError:
                time.sleep(0.01)
        assert proc.poll() is None
        for sock in flood:
            sock.close()
        flood.clear()
        assert [m.offset for m in _produce(port, range(10, 11))] == [2]
    finally:
        for sock in flood:
            sock.close()
        err = _stop(proc)
    assert "Traceback" not in err


def test_descriptors_are_shared_out_within_the_limit() -> None:
    from coordinator.server.descriptors import RESERVED, descriptor_budget
    from coordinator.server.options import DEFAULT_MAX_OPEN_SEGMENT_FILES, build_options
    from storage import open_files

    assert DEFAULT_MAX_OPEN_SEGMENT_FILES == open_files.DEFAULT_MAX_OPEN_SEGMENT_FILES
    options = build_options({"kcoord.max.open.segment.files": "20"})
    assert options.max_open_segment_files == 20
    budget = descriptor_budget(options.max_open_segment_files)
    assert budget.limit == resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    assert budget.segment_files <= 20
    assert budget.segment_files + budget.connections + RESERVED <= max(budget.limit, 80)
