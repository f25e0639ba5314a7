"""``kcoord serve`` freezes its heap once loaded and logs its collector's pauses when it stops
(``coordinator/server/collector.py``): a real server process, as users start it."""

from __future__ import annotations

import re
import signal
import socket
import time
from pathlib import Path

from serve_process import kcoord_serve

import wire
from wire.framing import NEED_DATA, FrameReader

_PAUSES = re.compile(r"gen(\d) (\d+)/([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+)")


GROUPS, PARTITIONS = 20, 200


def _commit(corr: int) -> bytes:
    """A simple commit (no member) of every partition for one group: new offsets live on."""
    return wire.encode_request(8, 2, corr, "gc", {
        "group_id": f"group-{corr}", "generation_id_or_member_epoch": -1, "member_id": "",
        "retention_time_ms": -1, "topics": [{"name": "t", "partitions": [
            {"partition_index": p, "committed_offset": corr, "committed_metadata": ""}
            for p in range(PARTITIONS)]}]})


def _wait_for(err: Path, text: str) -> None:
    deadline = time.monotonic() + 60
    while text not in err.read_text():
        assert time.monotonic() < deadline, f"no {text!r} in the log within 60 s"
        time.sleep(0.02)


def _serve_and_stop(data_dir: Path) -> str:
    """Start a server, commit offsets once its heap is frozen, stop it (SIGTERM): its log."""
    err = data_dir.parent / "stderr.txt"
    args = ["--data-dir", str(data_dir), "--log-level", "info", "--topic", f"t:{PARTITIONS}"]
    with kcoord_serve(args, err) as (proc, port):
        _wait_for(err, "loaded state frozen")  # the pauses are counted from there
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            reader = FrameReader()
            for corr in range(1, GROUPS + 1):
                sock.sendall(_commit(corr))
                while (payload := reader.next_frame()) is NEED_DATA:
                    chunk = sock.recv(65536)
                    assert chunk, "the server closed the connection"
                    reader.receive_data(chunk)
                _, answer = wire.decode_response(8, 2, bytes(payload))
                assert [p.error_code for t in answer.topics for p in t.partitions] == (
                    [0] * PARTITIONS)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    return err.read_text()


def test_the_heap_is_frozen_after_the_load_and_the_pauses_are_logged_at_stop(
        tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    log = _serve_and_stop(data_dir).splitlines()
    loaded = next(i for i, line in enumerate(log) if "coordinator loaded:" in line)
    frozen = next(i for i, line in enumerate(log) if "loaded state frozen" in line)
    assert loaded < frozen, "the heap was frozen before the coordinator's state was loaded"
    stopped = [line for line in log if "collector pauses" in line]
    assert len(stopped) == 1, log[-5:]
    each = {int(found[0]): (int(found[1]), *map(float, found[2:]))
            for found in _PAUSES.findall(stopped[0])}
    assert sorted(each) == [0, 1, 2]
    # 4,000 new committed offsets are enough for collections of the youngest generation;
    # each is counted with its time (wall and CPU: total >= longest >= 0).
    assert each[0][0] > 0
    for count, total, longest, cpu_total, cpu_longest in each.values():
        assert total >= longest >= 0 and cpu_total >= cpu_longest >= 0
        assert count > 0 or total == 0
    # Nothing grew to the sweep floor: no full collection walked the heap.
    assert "unfrozen 0 times" in stopped[0]
