"""A bounded number of open segment files for many logs (the topic partitions).

A log keeps its active segment open for appends. With one log per topic partition, that
is one descriptor per partition ever written to, held for the life of the process: at the
usual limit of 1,024 descriptors about 500 partitions exhaust it, and the server can no
longer open a socket or a file (issue 32 item 6). Kafka keeps its index files mapped, not
every file open; here :class:`PooledFileSystem` hands the logs handles that open their
file when used and are closed again, least recently used first, once more than
``max_open`` are open. A closed handle reopens by path (renames are followed), so a log
never notices.

Closing a handle to make room never fsyncs it: the pool closes files on the event loop (a
Produce to a partition whose file is closed), and one fsync per closed file held every
connection (about 0.7 s for 50 new partitions past 256 files). Nothing acknowledged needs
that fsync: under ``--fsync always`` each append is fsynced before it is acknowledged,
under ``interval`` and ``never`` an acknowledged write is in the OS's page cache, which a
closed descriptor keeps (it survives SIGKILL, as before). A closed handle with writes not
yet fsynced stays ``dirty``, and its log's next fsync (the interval flusher's, a roll's,
the log's close) reopens it by path and fsyncs it: fsync flushes the file, whichever
descriptor wrote it, and reports a write-back error no descriptor has seen yet (Linux 4.16
and later), so the log's fsync policy still sees a failing disk.

The logs of a pool share the lock of the directory above them (the data directory, which
the metadata log locks): :meth:`PooledFileSystem.lock` takes no descriptor of its own.

When the OS refuses a descriptor even after the pool closed one of its own, the
``OSError`` (``EMFILE``/``ENFILE``) reaches the log's caller, which answers
KAFKA_STORAGE_ERROR; a write that could not open its file wrote nothing, and the cut-back
after it truncates by path.
"""

from __future__ import annotations

import errno
import os
import threading
from collections import OrderedDict

from .fs import FileHandle, OsFileSystem

__all__ = ["DEFAULT_MAX_OPEN_SEGMENT_FILES", "PooledFileSystem"]

DEFAULT_MAX_OPEN_SEGMENT_FILES = 256
_NO_LOCK = -1
_OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE)
_APPEND = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)


class _PooledFile:
    """A handle whose descriptor the pool may close between uses."""

    __slots__ = ("dirty", "fd", "path", "pinned", "pool")

    def __init__(self, pool: PooledFileSystem, path: str, fd: int) -> None:
        self.pool = pool
        self.path = path
        self.fd: int | None = fd
        #: Written since its last fsync (kept while the pool has it closed).
        self.dirty = False
        #: Operations under way (the pool never closes a handle in use).
        self.pinned = 0

    def write(self, data: bytes | memoryview) -> int:
        fd = self.pool.acquire(self)
        try:
            written = os.write(fd, data)
            self.dirty = True
            return written
        finally:
            self.pool.release(self)

    def fsync(self) -> None:
        if self.fd is None and not self.dirty:  # closed by the pool with nothing to sync
            return
        fd = self.pool.acquire(self)  # reopened by path if the pool closed it
        try:
            os.fsync(fd)
            self.dirty = False
        finally:
            self.pool.release(self)

    def truncate(self, size: int) -> None:
        if self.fd is None:
            os.truncate(self.path, size)  # no descriptor needed
            return
        fd = self.pool.acquire(self)
        try:
            os.ftruncate(fd, size)
        finally:
            self.pool.release(self)

    def close(self) -> None:
        self.pool.forget(self)


class PooledFileSystem(OsFileSystem):
    """The real file system, with at most ``max_open`` append handles open at once."""

    def __init__(self, max_open: int = DEFAULT_MAX_OPEN_SEGMENT_FILES) -> None:
        if max_open < 1:
            raise ValueError(f"max_open must be at least 1: {max_open}")
        self.max_open = max_open
        self._lock = threading.Lock()
        #: Handles with an open descriptor, least recently used first.
        self._open: OrderedDict[_PooledFile, None] = OrderedDict()
        #: Every live handle by path (renames move them).
        self._by_path: dict[str, list[_PooledFile]] = {}
        #: Descriptors the pool closed to make room (diagnostics, tests).
        self.evictions = 0

    @property
    def open_count(self) -> int:
        """Descriptors open now."""
        return len(self._open)

    def open_append(self, path: str, *, create: bool = False) -> FileHandle:
        flags = _APPEND | (os.O_CREAT | os.O_EXCL if create else 0)
        with self._lock:
            handle = _PooledFile(self, path, self._open_fd(path, flags))
            self._open[handle] = None
            self._by_path.setdefault(path, []).append(handle)
            self._shrink()
        return handle

    def rename(self, src: str, dst: str) -> None:
        with self._lock:
            os.rename(src, dst)
            moved = self._by_path.pop(src, None)
            if moved:
                for handle in moved:
                    handle.path = dst
                self._by_path.setdefault(dst, []).extend(moved)

    def lock(self, path: str) -> int:
        """The directory above is locked already (see the module's docstring)."""
        return _NO_LOCK

    def unlock(self, fd: int) -> None:
        if fd != _NO_LOCK:
            super().unlock(fd)

    # -- the handles' side ----------------------------------------------------------------

    def acquire(self, handle: _PooledFile) -> int:
        """``handle``'s descriptor, opened if the pool closed it; pinned until released."""
        with self._lock:
            fd = handle.fd
            if fd is None:
                fd = handle.fd = self._open_fd(handle.path, _APPEND)
                self._open[handle] = None
                self._shrink(keep=handle)
            else:
                self._open.move_to_end(handle)
            handle.pinned += 1
            return fd

    def release(self, handle: _PooledFile) -> None:
        with self._lock:
            handle.pinned -= 1

    def forget(self, handle: _PooledFile) -> None:
        """Close ``handle`` for good (its log closed it)."""
        with self._lock:
            self._open.pop(handle, None)
            same = self._by_path.get(handle.path)
            if same is not None and handle in same:
                same.remove(handle)
                if not same:
                    del self._by_path[handle.path]
            fd, handle.fd = handle.fd, None
        if fd is not None:
            os.close(fd)

    def _open_fd(self, path: str, flags: int) -> int:
        """Open ``path``; out of descriptors, close an idle handle of the pool and retry."""
        try:
            return os.open(path, flags, 0o644)
        except OSError as exc:
            if exc.errno not in _OUT_OF_DESCRIPTORS or not self._evict_one():
                raise
        return os.open(path, flags, 0o644)

    def _shrink(self, keep: _PooledFile | None = None) -> None:
        while len(self._open) > self.max_open and self._evict_one(keep):
            pass

    def _evict_one(self, keep: _PooledFile | None = None) -> bool:
        for handle in self._open:
            if handle.pinned or handle is keep:
                continue
            del self._open[handle]
            fd, handle.fd = handle.fd, None
            if fd is not None:
                os.close(fd)  # no fsync: ``dirty`` stays for the log's next one
            self.evictions += 1
            return True
        return False
