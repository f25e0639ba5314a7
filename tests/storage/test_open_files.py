"""The pool of open segment files (issue 32 item 6): logs keep working with at most
``max_open`` descriptors among them; a closed handle reopens by path, follows renames, and
is fsynced by its log's next fsync, not as the pool closes it."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from storage.batch import EncodedBatch
from storage.log import Log
from storage.open_files import PooledFileSystem
from storage.segment import encode_entry


def _entry(key: bytes, value: bytes) -> EncodedBatch:
    return EncodedBatch(encode_entry(key, value), 1)


def test_many_logs_share_a_bounded_number_of_descriptors(tmp_path: Path) -> None:
    fs = PooledFileSystem(max_open=3)
    logs = [Log.open(str(tmp_path / str(i)), fsync="interval", fs=fs, segment_bytes=200)
            for i in range(10)]
    assert fs.open_count <= 3
    for rounds in range(5):  # segments roll (create, rename) while handles come and go
        for i, log in enumerate(logs):
            log.write_batch(_entry(b"k%d" % i, b"v%d-%d" % (i, rounds) * 10))
            log.sync()
            assert fs.open_count <= 3
    assert fs.evictions > 0
    for log in logs:
        log.close()
    assert fs.open_count == 0
    for i in range(10):
        with Log.open(str(tmp_path / str(i)), fs=PooledFileSystem(1)) as again:
            values = [e[1] for seg in again.segments for e in again.read_segment(seg)[1].entries]
            assert values == [b"v%d-%d" % (i, r) * 10 for r in range(5)]


def _dirty_log_and_its_eviction(tmp_path: Path, fsyncs: list[int]) -> Log:
    """A log with an unsynced write whose handle the pool (of one) then closes; the fsyncs
    made meanwhile are appended to ``fsyncs``."""
    fs = PooledFileSystem(max_open=1)
    log = Log.open(str(tmp_path / "a"), fsync="interval", fs=fs)
    log.write_batch(_entry(b"k", b"v"))
    real_fsync = os.fsync
    os.fsync = lambda fd: (fsyncs.append(fd), real_fsync(fd))[1]
    try:
        fs.open_append(str(tmp_path / "other"), create=True).close()  # takes a's place
    finally:
        os.fsync = real_fsync
    assert fs.evictions == 1
    return log


def test_a_handle_closed_with_unsynced_writes_is_fsynced_by_its_logs_next_sync(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Closing for room fsyncs nothing (it happens on the event loop); the log's next fsync
    reopens the file and fsyncs it, once."""
    closing: list[int] = []
    log = _dirty_log_and_its_eviction(tmp_path, closing)
    assert closing == []
    assert isinstance(log.fs, PooledFileSystem) and log.fs.open_count == 0
    syncing: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (syncing.append(fd), real_fsync(fd))[1])
    log.sync()
    assert len(syncing) == 1 and not log.dirty
    log.sync()  # nothing left to fsync
    assert len(syncing) == 1
    log.close()
    assert len(syncing) == 1 and log.fs.open_count == 0


def test_a_failed_fsync_of_a_closed_handle_is_seen_by_the_fsync_policy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from storage.errors import LogWriteError

    log = _dirty_log_and_its_eviction(tmp_path, [])

    def failing(fd: int) -> None:
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(os, "fsync", failing)
    with pytest.raises(LogWriteError):
        log.sync()
    assert log.failed is not None  # the fsync policy saw the failure
    monkeypatch.undo()
    log.close()
