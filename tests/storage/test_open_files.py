"""The pool of open segment files (issue 32 item 6): logs keep working with at most
``max_open`` descriptors among them; a closed handle reopens by path, follows renames, and
is fsynced as it is closed."""

from __future__ import annotations

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


def test_a_handle_closed_with_unsynced_writes_is_fsynced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fs = PooledFileSystem(max_open=1)
    first = Log.open(str(tmp_path / "a"), fsync="interval", fs=fs)
    first.write_batch(_entry(b"k", b"v"))
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    second = Log.open(str(tmp_path / "b"), fsync="interval", fs=fs)  # closes a's handle
    assert synced and fs.evictions == 1
    first.sync()  # nothing left to fsync: no reopen
    assert fs.open_count == 1
    first.close()
    second.close()


def test_a_failed_fsync_as_a_handle_closes_is_raised_by_the_next_fsync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from storage.errors import LogWriteError

    fs = PooledFileSystem(max_open=1)
    first = Log.open(str(tmp_path / "a"), fsync="interval", fs=fs)
    first.write_batch(_entry(b"k", b"v"))

    def failing(fd: int) -> None:
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(os, "fsync", failing)
    other = fs.open_append(str(tmp_path / "other"), create=True)  # closes a's handle
    monkeypatch.undo()
    assert fs.evictions == 1
    with pytest.raises(LogWriteError):
        first.sync()
    assert first.failed is not None  # the fsync policy saw the failure
    other.close()
    first.close()
