"""The periodic live snapshot of a serving log, built in a child process
(``child_process``: not on the GIL the server's event loop needs).

The parent keeps the segments from compaction and fsyncs the log before the child starts
(``reading_segments``, ``durable``), hands it the segments as they are then, and learns
what the snapshot covers and its statistics. A log on another file system than the real
one (the tests' fault injection) builds in the calling thread, as a child could not see
that file system: the same ``build_and_write``.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import TYPE_CHECKING

from .child_process import ChildFailed, read_spec, run_child
from .directory import Segment
from .fs import OsFileSystem
from .live_snapshot import SNAPSHOT_FILE, LiveSnapshot
from .snapshot_log import build_and_write, durable, reading_segments

if TYPE_CHECKING:
    from .log import Log

__all__ = ["CHILD_TIMEOUT_S", "snapshot_in_child"]

log = logging.getLogger(__name__)

#: How long a child may build (10^6 committed partitions: a few seconds).
CHILD_TIMEOUT_S = 600.0


def snapshot_in_child(log_: Log, timeout_s: float = CHILD_TIMEOUT_S) -> LiveSnapshot | None:
    """Write the snapshot of the log as it is now from a child process (blocking: call from
    a worker thread). What it covers and its statistics come back; its groups and other
    entries stay in the file. None if it could not be written (logged)."""
    with reading_segments(log_) as segments:
        if not durable(log_):
            return None
        if type(log_.fs) is not OsFileSystem:
            return build_and_write(log_.fs, log_.directory, segments)
        spec = {"directory": log_.directory, "segments": [
            [s.base, s.path, s.size, s.count] for s in segments]}
        try:
            made = json.loads(run_child(__name__, spec, timeout_s))
        except (ChildFailed, ValueError) as exc:
            log.warning("could not build %s (ignored): %s", SNAPSHOT_FILE, exc)
            return None
    if made is None:
        return None  # (the child said why: run_child logged it)
    return LiveSnapshot([(b, s, c) for b, s, c in made["covered"]], {}, b"",
                        made["live_bytes"], made["event_bytes"])


def _child() -> None:
    spec = read_spec()
    segments = [Segment(base, path, size, count) for base, path, size, count in spec["segments"]]
    snapshot = build_and_write(OsFileSystem(), spec["directory"], segments)
    sys.stdout.write(json.dumps(None if snapshot is None else {
        "covered": snapshot.covered, "live_bytes": snapshot.live_bytes,
        "event_bytes": snapshot.event_bytes}))


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    _child()
