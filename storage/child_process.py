"""Storage work run in a child process: ``python -m MODULE`` with a JSON spec on stdin.

The server's background storage work (a live snapshot, a compaction) is Python work per
log entry. In a worker thread of the server it holds the GIL, and the event loop, which
lets the GIL go at every socket call, then waits up to the switch interval (5 ms) to get it
back after each one: a 5 s compaction of 10^6 entries held a 2,000-requests/s load's
answers for up to 1.6 s. A child process does that work on another core, with its own
memory; the server's worker thread only waits for it (``run_child``).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from .directory import Segment
from .fs import FaultyFileSystem, FileSystem, OsFileSystem

__all__ = ["MAX_RELAYED_LINES", "ChildFailed", "can_run_in_child", "read_spec", "run_child",
           "segments_from_spec", "segments_spec"]

log = logging.getLogger(__name__)

#: The last lines of a child's stderr relayed to the server's log when it succeeded.
MAX_RELAYED_LINES = 20


class ChildFailed(Exception):
    """The child could not do its work: its last line on stderr, or why it did not run."""


def run_child(module: str, spec: dict[str, Any], timeout_s: float) -> bytes:
    """Run ``python -m module`` (the interpreter running this one, through ``child_main``:
    at nice 10, killed if this process dies), ``spec`` as JSON on its stdin; its stdout.
    ChildFailed if it could not start, ran longer than ``timeout_s`` (it is killed) or
    exited with another code than 0; the last lines it wrote to stderr are logged."""
    try:
        child = subprocess.run(
            [sys.executable, "-m", "storage.child_main", module, str(os.getpid())],
            input=json.dumps(spec).encode(),
            capture_output=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        raise ChildFailed(f"{module} ran longer than {timeout_s:.0f} s") from None
    except OSError as exc:
        raise ChildFailed(f"{module} did not start: {exc.strerror or exc}") from None
    lines = child.stderr.decode(errors="replace").strip().splitlines()
    if child.returncode != 0:
        raise ChildFailed(lines[-1] if lines else f"{module} exited with {child.returncode}")
    for line in lines[-MAX_RELAYED_LINES:]:  # what it logged (its warnings)
        log.warning("%s", line)
    return child.stdout


def read_spec() -> Any:
    """In the child: the spec its parent sent."""
    return json.loads(sys.stdin.buffer.read())


def can_run_in_child(fs: FileSystem) -> bool:
    """Whether work on ``fs`` can move to a child: only on the real file system, pooled
    or not (a child could not see the tests' fault injection, which lives in this
    process)."""
    return isinstance(fs, OsFileSystem) and not isinstance(fs, FaultyFileSystem)


def segments_spec(segments: Sequence[Segment]) -> list[list[Any]]:
    """``segments`` as a spec carries them (``segments_from_spec`` reads them back)."""
    return [[s.base, s.path, s.size, s.count] for s in segments]


def segments_from_spec(spec: list[list[Any]]) -> list[Segment]:
    """The segments ``segments_spec`` wrote."""
    return [Segment(base, path, size, count) for base, path, size, count in spec]
