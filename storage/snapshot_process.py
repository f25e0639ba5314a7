"""The periodic live snapshot of a serving log, built in a child process
(``child_process``: not on the GIL the server's event loop needs).

``snapshot_log(log, build=build_in_child)``: the parent still keeps the segments from
compaction and fsyncs the log (``snapshot_log``); the child runs ``build_and_write`` on
the segments as they were then, and the parent learns what the snapshot covers and its
statistics. A log on another file system than the real one (the tests' fault injection)
builds in the calling thread: the same ``build_and_write``.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import TYPE_CHECKING

from .child_process import (
    ChildFailed,
    can_run_in_child,
    read_spec,
    run_child,
    segments_from_spec,
    segments_spec,
)
from .fs import OsFileSystem
from .live_snapshot import SNAPSHOT_FILE, LiveSnapshot
from .snapshot_log import build_and_write

if TYPE_CHECKING:
    from .directory import Segment
    from .fs import FileSystem

__all__ = ["CHILD_TIMEOUT_S", "build_in_child"]

log = logging.getLogger(__name__)

#: How long a child may build (10^6 committed partitions: 3.5 s here).
CHILD_TIMEOUT_S = 600.0


def build_in_child(fs: FileSystem, directory: str, segments: list[Segment],
                   ) -> LiveSnapshot | None:
    """``build_and_write`` in a child process (here if ``fs`` is not the real one; blocking:
    call from a worker thread). What the snapshot covers and its statistics come back; its
    groups and other entries stay in the file. None if it could not be written (logged)."""
    if not can_run_in_child(fs):
        return build_and_write(fs, directory, segments)
    spec = {"directory": directory, "segments": segments_spec(segments)}
    try:
        made = json.loads(run_child(__name__, spec, CHILD_TIMEOUT_S))
    except (ChildFailed, ValueError) as exc:
        log.warning("could not build %s (ignored): %s", SNAPSHOT_FILE, exc)
        return None
    if made is None:
        return None  # (the child said why: run_child logged it)
    return LiveSnapshot([(b, s, c) for b, s, c in made["covered"]], {}, b"",
                        made["live_bytes"], made["event_bytes"])


def _child() -> None:
    spec = read_spec()
    snapshot = build_and_write(OsFileSystem(), spec["directory"],
                               segments_from_spec(spec["segments"]))
    sys.stdout.write(json.dumps(None if snapshot is None else {
        "covered": snapshot.covered, "live_bytes": snapshot.live_bytes,
        "event_bytes": snapshot.event_bytes}))


if __name__ == "__main__":
    _child()
