"""A log cleaner round's file work (``log_cleaner.write_cleaned``: the offset map, every
record filtered, each group's output committed as a swap file) in a child process
(``child_process``: not on the GIL the server's event loop needs). The parent still installs
the swaps and applies the result to the partition in memory (``log_cleaner.clean_log``):
only where the file work runs differs. A log on another file system than the real one (the
tests' fault injection) is cleaned in the calling thread, as a child could not see it.

The child answers in JSON: the result's numbers, each group's offsets and where in its
output each kept batch lies (their bytes stay on disk).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .child_process import (
    ChildFailed,
    can_run_in_child,
    read_spec,
    run_child,
    segments_from_spec,
    segments_spec,
)
from .errors import CompactionError
from .fs import OsFileSystem
from .log_cleaner import (
    CleanedGroup,
    CleanResult,
    CleanRound,
    KeptBatch,
    LastRecord,
    discard_uninstalled,
    write_cleaned,
)
from .log_cleaner_plan import CleanerLogConfig, SegmentInfo

if TYPE_CHECKING:
    from .directory import Segment
    from .fs import FileSystem

__all__ = ["CHILD_TIMEOUT_S", "write_cleaned_in_child"]

#: How long a child may clean (Kafka's rounds read up to a dedupe buffer's worth of keys).
CHILD_TIMEOUT_S = 1800.0
_GROUP_FIELDS = ("lo", "hi", "first_offset", "last_offset", "first_timestamp", "entries")


def write_cleaned_in_child(fs: FileSystem, directory: str, segments: Sequence[Segment],
                           job: CleanRound) -> CleanResult:
    """``write_cleaned`` in a child process (here if ``fs`` is not the real one; blocking:
    call from a worker thread). CompactionError if the child fails, once what it wrote is
    deleted (``log_cleaner.discard_uninstalled``): the log is as it was."""
    if not can_run_in_child(fs):
        return write_cleaned(fs, directory, segments, job)
    spec = {"directory": directory, "segments": segments_spec(segments),
            "round": _round_spec(job)}
    try:
        return _read_result(run_child(__name__, spec, CHILD_TIMEOUT_S))
    except (ChildFailed, ValueError, KeyError, TypeError) as exc:
        discard_uninstalled(fs, directory)
        raise CompactionError(f"log cleaning failed ({exc}); the log is unchanged") from exc


def _round_spec(job: CleanRound) -> dict[str, Any]:
    return {"infos": [dataclasses.astuple(i) for i in job.infos],
            "first_dirty_offset": job.first_dirty_offset,
            "first_uncleanable_offset": job.first_uncleanable_offset,
            "config": dataclasses.asdict(job.config), "now_ms": job.now_ms,
            "log_start_offset": job.log_start_offset, "aborted": list(job.aborted),
            "last_records": [[pid, r.last_data_offset, r.producer_epoch]
                             for pid, r in job.last_records.items()],
            "dedupe_buffer_size": job.dedupe_buffer_size}


def _round_from_spec(spec: dict[str, Any]) -> CleanRound:
    return CleanRound(
        [SegmentInfo(*i) for i in spec["infos"]], spec["first_dirty_offset"],
        spec["first_uncleanable_offset"], CleanerLogConfig(**spec["config"]), spec["now_ms"],
        spec["log_start_offset"], [(a, b, c) for a, b, c in spec["aborted"]],
        {pid: LastRecord(last, epoch) for pid, last, epoch in spec["last_records"]},
        spec["dedupe_buffer_size"])


def _write_result(result: CleanResult) -> bytes:
    numbers = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)
               if f.name not in ("groups", "retained_aborted")}
    return json.dumps({**numbers, "retained_aborted": sorted(result.retained_aborted),
                       "groups": [[*(getattr(g, n) for n in _GROUP_FIELDS), g.kept]
                                  for g in result.groups]}).encode()


def _read_result(out: bytes) -> CleanResult:
    head = json.loads(out)
    groups = []
    for *values, kept in head.pop("groups"):
        group = CleanedGroup(**dict(zip(_GROUP_FIELDS, values, strict=True)))
        group.kept = [KeptBatch(*k) for k in kept]
        groups.append(group)
    retained = {(pid, offset) for pid, offset in head.pop("retained_aborted")}
    return CleanResult(groups=groups, retained_aborted=retained, **head)


def _child() -> None:
    spec = read_spec()
    result = write_cleaned(OsFileSystem(), spec["directory"],
                           segments_from_spec(spec["segments"]), _round_from_spec(spec["round"]))
    sys.stdout.buffer.write(_write_result(result))


if __name__ == "__main__":
    _child()
