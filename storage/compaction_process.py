"""Compaction of a serving log with its rewrite (``compaction.rewrite_closed``: pass 1 over
every key, the live set written to the swap file) in a child process (``child_process``:
not on the GIL the server's event loop needs). The parent still rolls the active segment,
keeps replays away, and installs the swap (``compaction.compact``): only where the rewrite
runs differs. A log on another file system than the real one (the tests' fault injection)
rewrites in the calling thread, as a child could not see that file system."""

from __future__ import annotations

import dataclasses
import json
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
from .compaction import CompactionPolicy, Rewritten, rewrite_closed
from .errors import CompactionError
from .fs import OsFileSystem
from .segment_summary import decode_summary

if TYPE_CHECKING:
    from .directory import Segment
    from .fs import FileSystem

__all__ = ["CHILD_TIMEOUT_S", "rewrite_in_child"]

#: How long a child may rewrite (10^7 entries: about a minute).
CHILD_TIMEOUT_S = 1800.0


def rewrite_in_child(fs: FileSystem, directory: str, closed: list[Segment], hi: int,
                     policy: CompactionPolicy, now_ms: int) -> Rewritten:
    """``rewrite_closed`` in a child process (here if ``fs`` is not the real one; blocking:
    call from a worker thread)."""
    if not can_run_in_child(fs):
        return rewrite_closed(fs, directory, closed, hi, policy, now_ms)
    spec = {"directory": directory, "hi": hi, "now_ms": now_ms,
            "policy": dataclasses.asdict(policy),
            "closed": segments_spec(closed)}
    try:
        out = run_child(__name__, spec, CHILD_TIMEOUT_S)
        head, _, summary_bytes = out.partition(b"\n")
        numbers = json.loads(head)
        summary = decode_summary(summary_bytes)
    except (ChildFailed, ValueError) as exc:
        raise CompactionError(f"compaction failed ({exc}); the log is unchanged") from exc
    if summary is None:
        raise CompactionError("compaction's child sent no segment summary; the log is unchanged")
    return Rewritten(**numbers, summary=summary)


def _child() -> None:
    spec = read_spec()
    done = rewrite_closed(OsFileSystem(), spec["directory"], segments_from_spec(spec["closed"]),
                          spec["hi"],
                          CompactionPolicy(**spec["policy"]), spec["now_ms"])
    numbers = {f.name: getattr(done, f.name) for f in dataclasses.fields(done)
               if f.name != "summary"}
    sys.stdout.buffer.write(json.dumps(numbers).encode() + b"\n" + bytes(done.summary.encode()))


if __name__ == "__main__":
    _child()
