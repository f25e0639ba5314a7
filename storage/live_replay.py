"""Replay of the live set: the records a last-value-per-key reader needs, in log order.

``Log.open(live_index=True)`` fills a :class:`~storage.live_index.LiveIndex` while it
checks the segments; :func:`replay_live` completes it over whatever was appended since (or
builds it, if open did not), then decodes only the entries it names: each key's newest
entry (tombstones included) and every TransactionState entry, in log order. Applying them
in that order leaves a last-value-per-key state (the coordinator's ``store.apply``, the
transaction coordinator's metadata and its producer-id high-water mark) exactly as applying
every record would; RebalanceEvent history, which replay ignores, is not decoded.

Memory stays bounded: the index holds one int per live key, and entries are read back in
windows of at most ``READ_CHUNK`` bytes around them.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence

from storage.records import Record, RecordKey

from .directory import Segment
from .errors import CorruptLogError
from .fast_decode import fast_decode
from .fs import FileSystem
from .live_index import SEQ_STRIDE, LiveIndex, index_range, read_entry_window
from .record_codec import RecordDecodeError, decode_record
from .segment import HEADER_SIZE, entry_end, scan_entries

__all__ = ["replay_live"]


def replay_live(
    fs: FileSystem,
    segments: Sequence[Segment],
    index: LiveIndex | None,
    live: dict[bytes, int],
) -> Generator[Record, None, int]:
    """The live records of ``segments`` in log order (see the module docstring). ``index``
    covers a prefix of them (or is None); ``live`` gets each live key's newest entry size,
    as ``Log.replay`` computes it. Returns (as the generator's value) the RebalanceEvent
    bytes of the whole log."""
    by_base = {seg.base: seg for seg in segments}
    if index is None or not index.complete or not _describes(index, by_base):
        index = LiveIndex()
    for seg in segments:
        start = index.covered.get(seg.base, HEADER_SIZE)
        if start < seg.size:
            valid, _, _ = index_range(fs, seg.path, seg.base, start, seg.size, index)
            if valid != seg.size:
                raise CorruptLogError(
                    seg.path, valid, "segment changed on disk after it was opened"
                )
    keys: dict[bytes, RecordKey] = {}
    window = b""
    window_seg: Segment | None = None
    window_at = 0  # file offset of window[0]
    for position in index.positions():
        base, pos = divmod(position, SEQ_STRIDE)
        seg = by_base[base]
        rel = pos - window_at
        if seg is not window_seg or rel < 0 or not _holds_entry(window, rel):
            window, _ = read_entry_window(fs, seg.path, pos, seg.size)
            window_seg, window_at, rel = seg, pos, 0
        stop = _entry_end(window, rel)
        if stop == 0:
            raise CorruptLogError(seg.path, pos, "segment changed on disk after it was opened")
        records, after, _ = fast_decode(window, rel, stop, live, keys, verify=False, limit=1)
        if after == stop:
            yield from records
        else:
            record = _decode_slow(seg, window, rel, stop, pos, live)
            if record is not None:
                yield record
    return index.event_bytes


def _describes(index: LiveIndex, by_base: dict[int, Segment]) -> bool:
    """Whether everything ``index`` covers is still in the log, at no greater size."""
    return all(
        base in by_base and covered <= by_base[base].size
        for base, covered in index.covered.items()
    )


def _entry_end(data: bytes, pos: int) -> int:
    """Where the entry framed at ``data[pos:]`` ends, 0 if it does not fit."""
    stop = entry_end(data, pos)
    return stop if stop <= len(data) else 0


def _holds_entry(data: bytes, pos: int) -> bool:
    return _entry_end(data, pos) != 0


def _decode_slow(
    seg: Segment, data: bytes, rel: int, stop: int, pos: int, live: dict[bytes, int]
) -> Record | None:
    """One entry on the general path: precise errors, a warning for an unknown type."""
    scan = scan_entries(data, rel, stop, limit=1)
    if scan.stop is not None or not scan.entries:
        raise CorruptLogError(seg.path, pos, "segment changed on disk after it was opened")
    key, value = scan.entries[0]
    try:
        record = decode_record(key, value)
    except RecordDecodeError as exc:
        raise CorruptLogError(seg.path, pos, f"entry does not decode: {exc}") from None
    if value is None:
        live.pop(key, None)
    else:
        live[key] = stop - rel
    return record
