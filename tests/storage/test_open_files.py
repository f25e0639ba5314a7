"""The pool of open segment files (issue 32 item 6): logs keep working with at most
``max_open`` descriptors among them; a closed handle reopens by path, follows renames, and
is fsynced as it is closed."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

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


def _dirty_log_and_its_eviction(tmp_path: Path, fsync: Any) -> Log:
    """A log with an unsynced write whose handle the pool (of one) then closes, with
    ``fsync`` standing in for ``os.fsync`` meanwhile."""
    fs = PooledFileSystem(max_open=1)
    log = Log.open(str(tmp_path / "a"), fsync="interval", fs=fs)
    log.write_batch(_entry(b"k", b"v"))
    real_fsync = os.fsync
    os.fsync = fsync
    try:
        fs.open_append(str(tmp_path / "other"), create=True).close()  # takes a's place
    finally:
        os.fsync = real_fsync
    assert fs.evictions == 1
    return log


def test_a_handle_closed_with_unsynced_writes_is_fsynced(tmp_path: Path) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    log = _dirty_log_and_its_eviction(tmp_path, lambda fd: (synced.append(fd), real_fsync(fd)))
    assert len(synced) == 1
    log.sync()  # nothing left to fsync: no reopen
    assert isinstance(log.fs, PooledFileSystem) and log.fs.open_count == 0
    log.close()


def test_a_failed_fsync_as_a_handle_closes_is_raised_by_the_next_fsync(tmp_path: Path) -> None:
    from storage.errors import LogWriteError

    def failing(fd: int) -> None:
        raise OSError(errno.EIO, "I/O error")

    log = _dirty_log_and_its_eviction(tmp_path, failing)
    with pytest.raises(LogWriteError):
        log.sync()
    assert log.failed is not None  # the fsync policy saw the failure
    log.close()
