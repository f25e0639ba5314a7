"""Opening a data directory: finish or discard interrupted work, check every segment.

``recover_directory`` removes temporary files an interrupted write left, completes a
committed compaction (``L-H.swap``), checks each segment's header and entries, truncates a
torn tail of the last segment (and reports it), and refuses corruption anywhere else unless
the mode is ``truncate``. It returns the segments, in order, and what it repaired.
"""

from __future__ import annotations

import logging
import os
import zlib

from .directory import (
    SWAP_RE,
    TEMP_SUFFIXES,
    RecoveryAction,
    Segment,
    list_segments,
    segment_name,
)
from .errors import CorruptLogError, UnsupportedFormatError
from .fs import FileSystem
from .live_index import LiveIndex, index_range
from .policy import RecoverMode
from .segment import (
    HEADER_SIZE,
    ScanResult,
    SegmentHeaderError,
    StopReason,
    decode_header,
    find_next_valid_entry,
    scan_entries,
)
from .segment_summary import (
    SegmentSummary,
    load_summary,
    orphan_summaries,
    remove_summary,
    write_summary,
)

__all__ = ["recover_directory"]

log = logging.getLogger(__name__)


def recover_directory(
    fs: FileSystem, directory: str, mode: RecoverMode, index: LiveIndex | None = None
) -> tuple[list[Segment], list[RecoveryAction], SegmentSummary | None]:
    """The directory's segments after recovery, the repairs made, and the summary of the
    last segment so far (the log adds its appends to it and writes it when it rolls).
    With an ``index``, the check of every segment also fills it (see ``live_index``);
    when a segment needs repair, or is moved aside, the index is marked incomplete (replay
    rebuilds it).

    A closed segment (every one but the last) with a valid summary (``segment_summary``)
    is not checked entry by entry; one checked cleanly without a valid summary gets one
    written."""
    names = fs.listdir(directory)
    for name in names:
        if name.endswith(TEMP_SUFFIXES):
            log.warning("removing %s left by an interrupted write", name)
            fs.unlink(os.path.join(directory, name))
    swaps = sorted(n for n in names if SWAP_RE.match(n))
    for name in swaps:
        _finish_swap(fs, directory, name)
    if swaps:
        names = fs.listdir(directory)
    found = list_segments(names)
    segments: list[Segment] = []
    actions: list[RecoveryAction] = []
    summary: SegmentSummary | None = None
    for i, (base, name) in enumerate(found):
        path = os.path.join(directory, name)
        seg, summary = _check_segment(
            fs, directory, base, path, mode, actions, index, last=i == len(found) - 1
        )
        if seg is None:
            continue
        if segments:
            prev = segments[-1]
            if seg.base < prev.base + prev.count:
                raise CorruptLogError(
                    seg.path,
                    0,
                    f"base index {seg.base} overlaps {prev.name} "
                    f"({prev.count} entries from {prev.base})",
                )
        segments.append(seg)
    _remove_orphan_summaries(fs, directory, segments)
    if not segments:
        return segments, actions, None
    last = segments[-1]
    if summary is None or summary.base != last.base:  # repaired: summarise what is left
        own = LiveIndex()
        header = fs.read_range(last.path, 0, HEADER_SIZE)
        valid, count, checksum = index_range(
            fs, last.path, last.base, HEADER_SIZE, last.size, own, zlib.crc32(header)
        )
        summary = SegmentSummary.from_index(last.base, valid, count, own, checksum)
    return segments, actions, summary


def _remove_orphan_summaries(fs: FileSystem, directory: str, segments: list[Segment]) -> None:
    orphans = orphan_summaries(fs.listdir(directory), {seg.name for seg in segments})
    for name in orphans:
        log.info("removing %s: its segment is gone", name)
        fs.unlink(os.path.join(directory, name))
    if orphans:
        fs.fsync_dir(directory)


def _finish_swap(fs: FileSystem, directory: str, name: str) -> None:
    """Complete a compaction whose output was committed (renamed to .swap)."""
    m = SWAP_RE.match(name)
    assert m is not None
    lo, hi = int(m.group(1)), int(m.group(2))
    path = os.path.join(directory, name)
    data = fs.read_bytes(path)
    try:
        base = decode_header(data)
    except SegmentHeaderError as exc:
        raise CorruptLogError(path, 0, f"compaction output: {exc}") from None
    scan = scan_entries(data, HEADER_SIZE)
    if base != lo or scan.stop is not None:
        raise CorruptLogError(path, HEADER_SIZE + scan.valid_bytes, "compaction output is damaged")
    for seg_base, seg_name in list_segments(fs.listdir(directory)):
        if lo <= seg_base < hi:
            remove_summary(fs, os.path.join(directory, seg_name))
            fs.unlink(os.path.join(directory, seg_name))
    fs.rename(path, os.path.join(directory, segment_name(lo)))
    fs.fsync_dir(directory)
    log.warning("finished an interrupted compaction of entries [%d, %d)", lo, hi)


def _check_segment(
    fs: FileSystem,
    directory: str,
    base: int,
    path: str,
    mode: RecoverMode,
    actions: list[RecoveryAction],
    index: LiveIndex | None,
    *,
    last: bool,
) -> tuple[Segment | None, SegmentSummary | None]:
    """The segment after its check (None if moved aside), and its summary when it was
    found whole (None when repaired)."""
    size = fs.size(path)
    header = fs.read_range(path, 0, HEADER_SIZE)
    try:
        _check_header(header, base)
    except SegmentHeaderError:
        pass  # reported below, from the whole file, as before
    else:
        summary = None if last else load_summary(fs, path, base, size,
                                                   keys=index is not None)
        loaded = summary is not None
        if summary is None:
            own = LiveIndex()
            valid, count, checksum = index_range(
                fs, path, base, HEADER_SIZE, size, own, zlib.crc32(header)
            )
            if valid == size:
                summary = SegmentSummary.from_index(base, size, count, own, checksum)
            del own
        if summary is not None:
            if index is not None:
                summary.add_to(index)
            if not loaded and not last:
                write_summary(fs, directory, path, summary)
            return Segment(base, path, size, summary.count, verified=size), summary
    # Something to report or repair: the whole file, as it always was read.
    if index is not None:
        index.complete = False
    data = fs.read_bytes(path)
    try:
        _check_header(data, base)
    except SegmentHeaderError as exc:
        if mode != "truncate":
            raise CorruptLogError(path, 0, f"bad segment header: {exc}") from None
        aside = path + ".corrupt"
        fs.rename(path, aside)
        fs.fsync_dir(directory)
        actions.append(RecoveryAction(path, 0, len(data), f"bad header ({exc}); moved to {aside}"))
        return None, None
    count, scan = _count_entries(data)
    size = len(data)
    if scan.stop is not None:
        bad = HEADER_SIZE + scan.valid_bytes
        if scan.stop is StopReason.UNSUPPORTED_FORMAT:
            raise UnsupportedFormatError(
                f"{path} byte {bad}: {scan.stop.value} ({scan.stop_detail}); "
                "written by a newer kcoord?"
            )
        reason = f"{scan.stop.value} ({scan.stop_detail})"
        after = find_next_valid_entry(data, bad)
        torn_tail = last and after is None
        if not torn_tail and mode != "truncate":
            where = "in the middle of the log" if not last else "followed by valid entries"
            if after is not None:
                where = f"followed by a valid entry at byte {after}"
            raise CorruptLogError(path, bad, f"{reason}, {where}")
        _truncate_file(fs, path, bad)
        kind = "torn tail" if torn_tail else "corruption (recover=truncate)"
        actions.append(
            RecoveryAction(path, bad, size - bad, f"{kind}: {reason}", count)
        )
        size = bad
    return Segment(base, path, size, count, verified=size), None


def _check_header(data: bytes, base: int) -> None:
    header_base = decode_header(data)
    if header_base != base:
        raise SegmentHeaderError(f"header names base {header_base}, file name {base}")


#: Entries checked per ``scan_entries`` call when only their number is wanted.
_COUNT_BATCH = 1 << 16


def _count_entries(data: bytes) -> tuple[int, ScanResult]:
    """How many valid entries the segment ``data`` holds, and the scan's outcome with
    ``valid_bytes`` counted from the header. Scanned in batches: one list of positions
    for a whole 64 MiB segment is a million ints (about 36 MiB)."""
    count = 0
    pos = HEADER_SIZE
    while True:
        scan = scan_entries(data, pos, collect=False, limit=_COUNT_BATCH)
        count += len(scan.positions)
        pos += scan.valid_bytes
        if scan.stop is not None or not scan.positions or pos >= len(data):
            return count, ScanResult([], [], pos - HEADER_SIZE, scan.stop, scan.stop_detail)


def _truncate_file(fs: FileSystem, path: str, size: int) -> None:
    handle = fs.open_append(path)
    try:
        handle.truncate(size)
        handle.fsync()
    finally:
        handle.close()
