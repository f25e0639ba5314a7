"""What a real ``kcoord serve`` imports before it answers its first Metadata (issue 33: exec
to the first answered Metadata is mostly import time, about 0.3 ms per million
instructions here). The server runs as users start it, ``python -m coordinator serve``,
under ``-X importtime`` with debug logging: the modules whose import lines come before the
"broker surface ready" log line are those a first Metadata waits for (from that line on,
Metadata is answered while a worker thread imports the other routes, so the cut is there
and not at the racing "answered Metadata" line). The test fails if modules only needed
later (a partition's log, the coordinator, the record sink) come back onto that path, or
if kcoord's own modules on it grow past the budget.
"""

from __future__ import annotations

import re
import socket
import time
from pathlib import Path

from serve_process import kcoord_serve

import wire
from wire.framing import NEED_DATA, FrameReader

#: Imported later (a partition's first load, the coordinator's load, the cleaner), never
#: before the first Metadata of a broker without topics.
LATER = (
    "coordinator.broker.partition_log",  # with the first partition (topics._new_partitions)
    "coordinator.broker.control_batches",
    "coordinator.txn.partition",
    "coordinator.txn.producer_state",
    "wire.records",
    "coordinator.configs.store",  # with the coordinator
    "storage.records",
    "storage.log_cleaner_plan",
    "coordinator.core",
    "coordinator.server.runtime",
    "coordinator.server.sink",
    "storage.async_log",
)
#: kcoord's own modules (coordinator, wire, storage) imported before the first Metadata:
#: 86 on main 596da47, 2026-11-28 (97 before the partition log moved to the first
#: partition). No slack: a module added to this path must pay for itself by removing one.
OWN_MODULE_BUDGET = 86
_IMPORT = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)")
_OWN = ("coordinator", "wire", "storage")


def _own(name: str) -> bool:
    return name.split(".", 1)[0] in _OWN


def _first_metadata_imports(data_dir: Path) -> list[str]:
    err = data_dir.parent / "stderr.txt"
    with kcoord_serve(["--data-dir", str(data_dir), "--log-level", "debug"], err,
                      python_flags=["-X", "importtime"]) as (_, port):
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            sock.sendall(wire.encode_request(3, 0, 1, "imports", {"topics": []}))
            reader = FrameReader()
            while (payload := reader.next_frame()) is NEED_DATA:
                chunk = sock.recv(65536)
                assert chunk, "the server closed the connection"
                reader.receive_data(chunk)
        assert wire.decode_response(3, 0, bytes(payload))[0] == 1
        deadline = time.monotonic() + 10  # the debug line follows the answer's send
        while "answered Metadata" not in err.read_text() and time.monotonic() < deadline:
            time.sleep(0.01)
    lines = err.read_text().splitlines()
    assert any("answered Metadata" in text for text in lines)
    before: list[str] = []
    for text in lines:
        if "broker surface ready" in text:
            return before
        if imported := _IMPORT.match(text):
            before.append(imported.group(1))
    raise AssertionError("no 'broker surface ready' line in the server's log")


def test_the_first_metadata_waits_for_no_module_needed_only_later(tmp_path: Path) -> None:
    imported = _first_metadata_imports(tmp_path / "data")
    # (Route modules are imported by importlib.import_module, which -X importtime does not
    # show; what they import it does.)
    assert "coordinator.broker.topic_files" in imported  # the disk topics were opened
    assert [name for name in LATER if name in imported] == []
    own = [name for name in imported if _own(name)]
    assert len(own) <= OWN_MODULE_BUDGET, sorted(own)
