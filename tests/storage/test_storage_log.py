"""log: segments on disk, recovery at open, the lock, fsync policies, replay."""

from __future__ import annotations

import dataclasses
import logging
import os
import struct
import subprocess
import sys
import time

import pytest
from crc32c import crc32c
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from storage_strategies import overwriting_records, records

from storage.directory import segment_name
from storage.errors import (
    CorruptLogError,
    LogClosedError,
    LogLockedError,
    RecordTooLargeError,
    UnsupportedFormatError,
)
from storage.fast_decode import fast_decode
from storage.log import Log
from storage.record_codec import RecordDecodeError, decode_record, encode_record
from storage.records import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    RebalanceEventKey,
    RebalanceEventValue,
    Record,
)
from storage.segment import HEADER_SIZE, MAX_ENTRY_LENGTH, encode_entry, scan_entries


def commit(i: int, group: str = "g1", partition: int | None = None) -> Record:
    p = i % 4 if partition is None else partition
    return Record(OffsetCommitKey(group, "t", p), OffsetCommitValue(i, -1, "", 1000 + i))


def replayed(directory: str, **kwargs: object) -> list[Record]:
    with Log.open(directory, **kwargs) as log:  # type: ignore[arg-type]
        return list(log.replay())


def seg_path(directory: str, base: int = 0) -> str:
    return os.path.join(directory, segment_name(base))


# ------------------------------------------------------------------------------------
# Basics


def test_append_replay_reopen(data_dir: str) -> None:
    recs = [commit(i) for i in range(10)] + [Record(GroupMetadataKey("g1"), None)]
    with Log.open(data_dir) as log:
        assert list(log.replay()) == []
        log.append(recs[:4])
        log.append(recs[4:])
        assert list(log.replay()) == recs
        assert log.next_index == 11
    assert replayed(data_dir) == recs
    assert sorted(os.listdir(data_dir)) == [".lock", "00000000000000000000.log"]


def test_segments_roll_at_size_limit(data_dir: str) -> None:
    entry_size = len(encode_entry(*encode_record(commit(0))))
    limit = HEADER_SIZE + 3 * entry_size
    recs = [commit(i) for i in range(10)]
    with Log.open(data_dir, segment_bytes=limit) as log:
        for r in recs:
            log.append([r])
        assert [s.base for s in log.segments] == [0, 3, 6, 9]
        assert [s.count for s in log.segments] == [3, 3, 3, 1]
    names = sorted(n for n in os.listdir(data_dir) if n.endswith(".log"))
    assert names == [f"{b:020d}.log" for b in (0, 3, 6, 9)]
    assert replayed(data_dir, segment_bytes=limit) == recs


def test_batch_larger_than_a_segment_gets_its_own(data_dir: str) -> None:
    with Log.open(data_dir, segment_bytes=200) as log:
        log.append([commit(0)])
        log.append([commit(i) for i in range(1, 20)])
        log.append([commit(20)])
        assert [s.count for s in log.segments] == [1, 19, 1]
    assert len(replayed(data_dir, segment_bytes=200)) == 21


def test_replay_skips_unknown_record_types(data_dir: str, caplog: pytest.LogCaptureFixture) -> None:
    with Log.open(data_dir) as log:
        log.append([commit(0)])
    unknown = encode_entry(b"\x00\x63\x00\x01g", b"\x00\x00")
    with open(seg_path(data_dir), "ab") as f:
        f.write(unknown + encode_entry(*encode_record(commit(1))))
    from storage import record_codec

    record_codec._warned_key_versions.discard(99)
    with caplog.at_level(logging.WARNING):
        assert replayed(data_dir) == [commit(0), commit(1)]
    assert any("unknown key version 99" in r.message for r in caplog.records)


def test_undecodable_record_is_a_clear_error(data_dir: str) -> None:
    with Log.open(data_dir) as log:
        log.append([commit(0)])
    key, _ = encode_record(commit(1))
    with open(seg_path(data_dir), "ab") as f:
        f.write(encode_entry(key, b"\x00\x03garbage"))
    with Log.open(data_dir) as log, pytest.raises(CorruptLogError) as info:
        list(log.replay())
    assert info.value.path == seg_path(data_dir)
    assert "entry 1 does not decode" in str(info.value)


def test_record_too_large(data_dir: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import storage.batch as log_mod

    big = Record(GroupMetadataKey("g"), GroupMetadataValue("c", 1, None, None, -1, ()))
    monkeypatch.setattr(log_mod, "MAX_ENTRY_LENGTH", 10)
    with Log.open(data_dir) as log:
        with pytest.raises(RecordTooLargeError):
            log.append([commit(0), big])
        assert list(log.replay()) == []  # nothing of the batch was written
    assert MAX_ENTRY_LENGTH > 10


def test_closed_log_refuses_appends(data_dir: str) -> None:
    log = Log.open(data_dir)
    log.close()
    with pytest.raises(LogClosedError):
        log.append([commit(0)])


def test_bad_options(data_dir: str) -> None:
    with pytest.raises(ValueError):
        Log.open(data_dir, fsync="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Log.open(data_dir, recover="pray")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Log.open(data_dir, segment_bytes=10)


# ------------------------------------------------------------------------------------
# Fsync policies


def test_fsync_always_fsyncs_every_append(data_dir: str) -> None:
    with Log.open(data_dir, fsync="always") as log:
        for i in range(5):
            log.append([commit(i)])
        assert log.fsync_count == 5 and not log.dirty


def test_fsync_never_only_on_close(data_dir: str) -> None:
    log = Log.open(data_dir, fsync="never")
    for i in range(5):
        log.append([commit(i)])
    assert log.fsync_count == 0 and log.dirty
    log.close()
    assert log.fsync_count == 1


def test_fsync_interval(data_dir: str) -> None:
    with Log.open(data_dir, fsync="interval", fsync_interval_ms=50) as log:
        log.append([commit(0)])
        log.append([commit(1)])
        assert log.fsync_count == 0 and log.dirty
        time.sleep(0.06)
        log.append([commit(2)])  # the interval has passed: this append fsyncs
        assert log.fsync_count == 1 and not log.dirty
        log.append([commit(3)])
        log.sync()
        log.sync()  # nothing new: no second fsync
        assert log.fsync_count == 2


# ------------------------------------------------------------------------------------
# Recovery


def _write_log(data_dir: str, n: int, segment_bytes: int = 1 << 20) -> list[Record]:
    recs = [commit(i) for i in range(n)]
    with Log.open(data_dir, segment_bytes=segment_bytes) as log:
        for r in recs:
            log.append([r])
    return recs


@pytest.mark.parametrize("cut", [1, 5, 17, 30])
def test_torn_tail_is_truncated_and_reported(
    data_dir: str, cut: int, caplog: pytest.LogCaptureFixture
) -> None:
    recs = _write_log(data_dir, 5)
    path = seg_path(data_dir)
    size = os.path.getsize(path)
    partial = encode_entry(*encode_record(commit(99)))[:cut]
    with open(path, "ab") as f:
        f.write(partial)
    with caplog.at_level(logging.WARNING, logger="storage.log"):
        log = Log.open(data_dir)
    with log:
        assert [(a.path, a.offset, a.dropped_bytes) for a in log.recovery] == [(path, size, cut)]
        assert "torn tail" in log.recovery[0].reason
        assert list(log.replay()) == recs
        log.append([commit(5)])
    assert os.path.getsize(path) == size + len(encode_entry(*encode_record(commit(5))))
    assert any(f"dropped {cut} bytes" in r.message for r in caplog.records)
    assert replayed(data_dir) == [*recs, commit(5)]


def test_garbage_last_entry_is_a_torn_tail(data_dir: str) -> None:
    recs = _write_log(data_dir, 3)
    with open(seg_path(data_dir), "ab") as f:
        f.write(b"\x00" * 4096)  # e.g. a file extended with zeros by a crash
    with Log.open(data_dir) as log:
        assert log.recovery[0].dropped_bytes == 4096
        assert list(log.replay()) == recs


def _flip(path: str, offset: int) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        byte = f.read(1)[0]
        f.seek(offset)
        f.write(bytes([byte ^ 0x40]))


def test_corruption_in_a_closed_segment_stops_open(data_dir: str) -> None:
    entry_size = len(encode_entry(*encode_record(commit(0))))
    limit = HEADER_SIZE + 3 * entry_size
    recs = _write_log(data_dir, 7, segment_bytes=limit)
    path = seg_path(data_dir, 0)
    bad = HEADER_SIZE + entry_size + 20  # inside the second entry of the first segment
    _flip(path, bad)
    with pytest.raises(CorruptLogError) as info:
        Log.open(data_dir, segment_bytes=limit)
    err = info.value
    assert err.path == path and err.offset == HEADER_SIZE + entry_size
    assert path in str(err) and f"byte offset {err.offset}" in str(err)
    assert "--recover=truncate" in str(err)
    # The failed open released the lock and changed nothing.
    with pytest.raises(CorruptLogError):
        Log.open(data_dir, segment_bytes=limit)
    # recover="truncate" cuts the damaged segment and keeps going.
    with Log.open(data_dir, segment_bytes=limit, recover="truncate") as log:
        assert log.recovery[0].path == path and log.recovery[0].offset == err.offset
        assert list(log.replay()) == [recs[0], *recs[3:]]


def test_corruption_followed_by_valid_entries_in_last_segment(data_dir: str) -> None:
    recs = _write_log(data_dir, 5)
    entry_size = len(encode_entry(*encode_record(commit(0))))
    path = seg_path(data_dir)
    _flip(path, HEADER_SIZE + 2 * entry_size + 30)
    with pytest.raises(CorruptLogError) as info:
        Log.open(data_dir)
    assert info.value.offset == HEADER_SIZE + 2 * entry_size
    assert f"valid entry at byte {HEADER_SIZE + 3 * entry_size}" in str(info.value)
    with Log.open(data_dir, recover="truncate") as log:
        assert list(log.replay()) == recs[:2]


def test_bad_header(data_dir: str) -> None:
    _write_log(data_dir, 2)
    path = seg_path(data_dir)
    _flip(path, 3)
    with pytest.raises(CorruptLogError, match="bad segment header"):
        Log.open(data_dir)
    with Log.open(data_dir, recover="truncate") as log:
        assert os.path.exists(path + ".corrupt")
        assert list(log.replay()) == []


def test_header_base_must_match_file_name(data_dir: str) -> None:
    _write_log(data_dir, 2)
    os.rename(seg_path(data_dir), seg_path(data_dir, 5))
    with pytest.raises(CorruptLogError, match="header names base 0"):
        Log.open(data_dir)


def test_overlapping_segments(data_dir: str) -> None:
    entry_size = len(encode_entry(*encode_record(commit(0))))
    _write_log(data_dir, 4, segment_bytes=HEADER_SIZE + 2 * entry_size)
    # Rewrite segment 2 as if it started at 1 (overlapping segment 0's two entries).
    with open(seg_path(data_dir, 2), "rb") as f:
        body = f.read()[HEADER_SIZE:]
    from storage.segment import encode_header

    os.unlink(seg_path(data_dir, 2))
    with open(seg_path(data_dir, 1), "wb") as f:
        f.write(encode_header(1) + body)
    with pytest.raises(CorruptLogError, match="overlaps"):
        Log.open(data_dir)


def test_entry_from_a_newer_format_is_refused(data_dir: str) -> None:
    _write_log(data_dir, 1)
    body = b"\x00\x02" + b"future payload"
    with open(seg_path(data_dir), "ab") as f:
        f.write(struct.pack(">II", len(body), crc32c(body)) + body)
    with pytest.raises(UnsupportedFormatError, match="newer kcoord"):
        Log.open(data_dir, recover="truncate")


def test_temporary_files_are_removed(data_dir: str) -> None:
    recs = _write_log(data_dir, 2)
    for name in ("00000000000000000002.log.new", f"{0:020d}-{2:020d}.cleaned"):
        with open(os.path.join(data_dir, name), "wb") as f:
            f.write(b"partial")
    assert replayed(data_dir) == recs
    assert sorted(os.listdir(data_dir)) == [".lock", "00000000000000000000.log"]


# ------------------------------------------------------------------------------------
# The lock


def test_second_open_fails_fast(data_dir: str) -> None:
    with Log.open(data_dir):
        started = time.monotonic()
        with pytest.raises(LogLockedError) as info:
            Log.open(data_dir)
        assert time.monotonic() - started < 1
        assert data_dir in str(info.value) and f"pid {os.getpid()}" in str(info.value)
    Log.open(data_dir).close()  # released on close


def test_lock_holds_against_another_process(data_dir: str) -> None:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from storage.log import Log\nfrom storage.errors import LogLockedError\n"
        "try:\n    Log.open(sys.argv[2])\nexcept LogLockedError as e:\n"
        "    print(e); sys.exit(3)\n"
    )
    with Log.open(data_dir):
        proc = subprocess.run(
            [sys.executable, "-c", code, root, data_dir],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 3, proc.stderr
    assert "in use by another kcoord" in proc.stdout


# ------------------------------------------------------------------------------------
# Statistics for compaction


def test_compaction_statistics(data_dir: str) -> None:
    with Log.open(data_dir) as log:
        assert not log.needs_compaction(1.0, 0)  # unknown before a replay
        list(log.replay())
        for i in range(40):
            log.append([commit(i)])  # 4 keys overwritten 10 times
        event = Record(RebalanceEventKey("g1"), RebalanceEventValue("member_join", 1, 1))
        log.append([event])
        size = len(encode_entry(*encode_record(commit(0))))
        assert log.live_bytes == 4 * size
        assert log.event_bytes == len(encode_entry(*encode_record(event)))
        assert log.needs_compaction(1.0, 0)
        assert not log.needs_compaction(100.0, 0)
        assert not log.needs_compaction(1.0, 10**9)
    with Log.open(data_dir) as log:
        list(log.replay())
        assert log.live_bytes == 4 * size


# ------------------------------------------------------------------------------------
# The replay fast path does what the general path does.


def _general(data: bytes, start: int) -> list[Record]:
    scan = scan_entries(data, start)
    out = []
    for key, value in scan.entries:
        record = decode_record(key, value)
        if record is not None:
            out.append(record)
    return out


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(records, overwriting_records), max_size=12), st.data())
def test_fast_replay_matches_general_path(recs: list[Record], draw: st.DataObject) -> None:
    data = b"".join(encode_entry(*encode_record(r)) for r in recs)
    if data and draw.draw(st.booleans()):
        at = draw.draw(st.integers(0, len(data) - 1))
        data = data[:at] + bytes([data[at] ^ 0x10]) + data[at + 1 :]
    live: dict[bytes, int] = {}
    fast, pos, _ = fast_decode(data, 0, len(data), live, {})
    # Where the fast path stops, the general path takes over; together they must give
    # exactly what the general path gives alone.
    try:
        expected = _general(data, 0)
    except RecordDecodeError:  # undecodable bytes: the fast path must have stopped there
        assert pos < len(data)
        return
    assert fast + _general(data, pos) == expected


def test_fast_replay_builds_ordinary_records() -> None:
    rec = Record(OffsetCommitKey("g", "t", 1), OffsetCommitValue(7, 2, "meta", 99))
    data = encode_entry(*encode_record(rec))
    (out,), _, _ = fast_decode(data, 0, len(data), {}, {})
    assert out == rec and hash(out) == hash(rec) and repr(out) == repr(rec)
    with pytest.raises(dataclasses.FrozenInstanceError):
        out.value.offset = 8  # type: ignore[misc, union-attr]


def test_fast_replay_limit_and_offsets(data_dir: str) -> None:
    recs = [commit(i) for i in range(10)]
    data = b"".join(encode_entry(*encode_record(r)) for r in recs)
    out, pos, _ = fast_decode(data, 0, len(data), {}, {}, limit=4)
    assert out == recs[:4]
    rest, end, _ = fast_decode(data, pos, len(data), {}, {})
    assert rest == recs[4:] and end == len(data)
