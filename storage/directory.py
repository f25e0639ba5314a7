"""What a data directory holds, and the one view of it every reader shares.

File names (segments, compaction output, temporary files, the lock), taking the lock
(:func:`lock_directory`), the bookkeeping of an open log's segments, and
:func:`find_segments`: the segments to read in log order, where a committed compaction
output (``L-H.swap``) stands in for the segments it replaces, as recovery would make it
(FORMAT.md section 1). ``kcoord log dump`` and the pipeline read
through it; ``Log.open`` completes the swap on disk instead.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .errors import LogLockedError
from .fs import FileSystem
from .segment import HEADER_SIZE

__all__ = [
    "LOCK_NAME",
    "SEGMENT_RE",
    "SWAP_RE",
    "TEMP_SUFFIXES",
    "RecoveryAction",
    "Segment",
    "SegmentFile",
    "find_segments",
    "list_segments",
    "lock_directory",
    "segment_name",
    "select_segments",
]

LOCK_NAME = ".lock"
SEGMENT_RE = re.compile(r"^(\d{20})\.log$")
SWAP_RE = re.compile(r"^(\d{20})-(\d{20})\.swap$")
#: Temporary files: a segment being created, compaction output not yet committed, a
#: segment summary being written (``segment_summary.SUMMARY_TEMP_SUFFIX``).
TEMP_SUFFIXES = (".log.new", ".cleaned", ".summary.new", ".snapshot.new")


def segment_name(base: int) -> str:
    """``00000000000000000042.log``: the file of the segment whose first entry is 42."""
    return f"{base:020d}.log"


def list_segments(names: Sequence[str]) -> list[tuple[int, str]]:
    """(base, name) of the segment files among ``names``, by base."""
    found = [(int(m.group(1)), n) for n in names if (m := SEGMENT_RE.match(n))]
    return sorted(found)


@dataclass
class Segment:
    """One segment file: its first entry index, path, valid size and entry count."""

    base: int
    path: str
    size: int
    count: int
    #: bytes from the start of the file whose entries open() checked (CRC included)
    verified: int = HEADER_SIZE

    @property
    def name(self) -> str:
        return os.path.basename(self.path)


@dataclass(frozen=True, slots=True)
class RecoveryAction:
    """Something ``open`` repaired: which file, where, how many bytes, and why."""

    path: str
    offset: int
    dropped_bytes: int
    reason: str
    #: valid entries left in the file before ``offset``
    entries_kept: int = 0


@dataclass(frozen=True, slots=True)
class SegmentFile:
    """One segment file to read, and whether it is its directory's last (only the last
    may have a torn tail)."""

    data_dir: str
    name: str
    base: int
    last: bool

    @property
    def path(self) -> str:
        return os.path.join(self.data_dir, self.name)


def find_segments(data_dir: str) -> list[SegmentFile]:
    """The segments to read in ``data_dir``, by base index: the ``*.log`` files, except that
    a committed compaction output ``L-H.swap`` replaces the segments whose base is in
    [L, H). Raises FileNotFoundError / NotADirectoryError."""
    directory = os.path.abspath(data_dir)
    return select_segments(directory, os.listdir(directory))


def select_segments(directory: str, names: Sequence[str]) -> list[SegmentFile]:
    """:func:`find_segments` over a listing already made: ``names`` are the file names in
    ``directory`` (a path or a URI, kept as given in the SegmentFiles)."""
    found = dict(list_segments(names))
    for name in sorted(names):
        m = SWAP_RE.match(name)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            for base in [b for b in found if lo <= b < hi]:
                del found[base]
            found[lo] = name
    bases = sorted(found)
    return [SegmentFile(directory, found[b], b, i == len(bases) - 1) for i, b in enumerate(bases)]



def lock_directory(fs: FileSystem, directory: str) -> int:
    """Create ``directory`` if missing (its entry made durable) and take its lock: the
    lock's descriptor, or :class:`LogLockedError` naming the process that holds it."""
    if not fs.exists(directory):
        fs.makedirs(directory)
        # Make the new directory's own entry durable, or a power loss could take the
        # whole data directory (and every acknowledged record in it) with it.
        fs.fsync_dir(os.path.dirname(os.path.abspath(directory)))
    lock_path = os.path.join(directory, LOCK_NAME)
    try:
        return fs.lock(lock_path)
    except BlockingIOError:
        holder = _read_lock_holder(lock_path)
        raise LogLockedError(
            f"data directory {directory} is in use by another kcoord{holder} "
            f"(lock {lock_path}); stop it or choose another --data-dir"
        ) from None


def _read_lock_holder(lock_path: str) -> str:
    try:
        with open(lock_path) as f:
            pid = f.read().strip()
    except OSError:
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""
