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


def _fds_to(path: Path) -> list[int]:
    """This process's descriptors open on ``path`` (deleted or not)."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue
        if target.removesuffix(" (deleted)") == str(path):
            found.append(int(name))
    return found


def test_a_segments_read_handle_is_kept_bounded_and_closed_with_its_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fs = PooledFileSystem(max_open=2)
    files = [tmp_path / name for name in "abc"]
    for n, path in enumerate(files):
        path.write_bytes(bytes([n]) * 100)
    a, b, c = (str(p) for p in files)
    assert fs.read_now(a, 10, 5) is None  # no read handle yet: it would have to open
    opened: list[str] = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda p, *rest: (opened.append(str(p)),
                                                      real_open(p, *rest))[1])
    assert fs.read_kept(a, 10, 5) == b"\0" * 5
    assert fs.read_now(a, 90, 10) == b"\0" * 10  # kept: read on the spot, no open
    assert fs.read_now(a, 95, 10) is None  # short (past the end): read_kept says
    assert fs.read_kept(a, 95, 10) == b"\0" * 5
    assert opened == [a]
    fs.read_kept(b, 0, 1)
    fs.read_kept(c, 0, 1)
    assert fs.open_count == 2 and fs.evictions == 1  # read handles count against max_open
    assert fs.read_now(a, 0, 1) is None  # a's descriptor made room: reopened by a read
    fs.unlink(c)
    assert _fds_to(files[2]) == []  # a deleted file is not kept alive by its read handle
    fs.rename(b, a)
    assert _fds_to(files[1]) == [] and _fds_to(files[0]) == []
    assert fs.read_kept(a, 0, 2) == b"\1\1"  # the file now there
    fs.close_reads()
    assert fs.open_count == 0 and _fds_to(files[0]) == []


def test_a_read_handle_forgotten_while_in_use_closes_after_the_read(tmp_path: Path) -> None:
    fs = PooledFileSystem()
    path = tmp_path / "seg"
    path.write_bytes(b"x" * 10)
    fs.read_kept(str(path), 0, 1)
    handle = fs._readers[str(path)]
    fd = fs.acquire(handle)  # a read under way in a worker thread
    fs.unlink(str(path))
    assert os.pread(fd, 2, 0) == b"xx"  # still open for the read in flight
    fs.release(handle)
    with pytest.raises(OSError) as closed:
        os.fstat(fd)
    assert closed.value.errno == errno.EBADF
    with pytest.raises(FileNotFoundError):
        fs.acquire(handle)  # never reopened by its old name


def test_a_read_that_is_only_partly_cached_is_left_to_read_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``RWF_NOWAIT`` stops at the first page not in the page cache and returns what it
    read: that is not the batch (a Fetch got BatchGone for a batch still on disk, the
    consumer's reads seen failing in ``bench_topic_compaction.py --no-cleaner``). The file
    dropped from the cache but its first page (no readahead on the read handle), then a
    read across the first two pages; and the same with ``preadv`` made to stop short."""
    page = os.sysconf("SC_PAGE_SIZE")
    path = tmp_path / "seg"
    path.write_bytes(bytes(range(256)) * (64 * page // 256))
    fs = PooledFileSystem()
    fs.read_kept(str(path), 0, 1)
    fd = fs._readers[str(path)].fd
    assert fd is not None
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.pread(fd, page, 0)
    assert fs.read_now(str(path), page - 100, 200) is None
    assert fs.read_kept(str(path), page - 100, 200) == path.read_bytes()[page - 100:page + 100]

    def stops_short(fd: int, buffers: list[bytearray], offset: int, flags: int = 0) -> int:
        return 100
    monkeypatch.setattr(os, "preadv", stops_short)
    assert fs.read_now(str(path), page - 100, 200) is None
