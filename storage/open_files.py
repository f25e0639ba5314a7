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

Segment files are also read through the pool (Fetch, ShareFetch, ListOffsets by timestamp
read batches back): one read-only handle per file, kept among the same ``max_open``
descriptors, closed when the pool unlinks or renames the file (retention, the log cleaner's
swap) or ``forget_reads_under`` its directory (topic deletion), so a deleted file's space is
not held. :meth:`PooledFileSystem.read_now` reads only what needs neither an open nor the
disk (``RWF_NOWAIT``), for the event loop; :meth:`PooledFileSystem.read_kept` opens and
waits, for a worker thread.

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
_READ = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
#: ``preadv`` flag: fail with EAGAIN rather than wait for the disk (Linux 4.14+).
_NOWAIT = getattr(os, "RWF_NOWAIT", 0)
_WOULD_WAIT = (errno.EAGAIN, errno.EOPNOTSUPP, errno.EINVAL)


class _PooledFile:
    """A handle whose descriptor the pool may close between uses."""

    __slots__ = ("dirty", "doomed", "fd", "flags", "path", "pinned", "pool")

    def __init__(self, pool: PooledFileSystem, path: str, fd: int, flags: int = _APPEND) -> None:
        self.pool = pool
        self.path = path
        self.fd: int | None = fd
        #: How it (re)opens: appending, or read-only (a segment's read handle).
        self.flags = flags
        #: Forgotten while pinned: closed by the last release.
        self.doomed = False
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
        #: Read-only handles of segment files, by path (``read_now``, ``read_kept``).
        self._readers: dict[str, _PooledFile] = {}
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
            self._forget_reader(src)
            self._forget_reader(dst)
            os.rename(src, dst)
            moved = self._by_path.pop(src, None)
            if moved:
                for handle in moved:
                    handle.path = dst
                self._by_path.setdefault(dst, []).extend(moved)

    def unlink(self, path: str) -> None:
        with self._lock:
            self._forget_reader(path)
        os.unlink(path)

    # -- reads of segment files -----------------------------------------------------------

    def read_now(self, path: str, offset: int, size: int) -> bytes | None:
        """The ``size`` bytes of ``path`` from ``offset`` if reading them needs neither an
        open nor the disk: through the file's kept read handle, with ``RWF_NOWAIT`` (the
        bytes in the page cache); None when it would wait (no read handle open, some of the
        bytes not cached, or the flag unsupported) or fewer are there: then
        :meth:`read_kept`, in a worker thread.
        For the event loop, which a file's open held 5.7 s once (issue 28's CI)."""
        with self._lock:
            handle = self._readers.get(path)
            if handle is None or handle.fd is None or not _NOWAIT:
                return None
            fd = handle.fd
            self._open.move_to_end(handle)
            handle.pinned += 1
        try:
            buffer = bytearray(size)
            try:
                got = os.preadv(fd, [buffer], offset, _NOWAIT)
            except OSError as exc:
                if exc.errno in _WOULD_WAIT:
                    return None
                raise
            # Short: the rest is not cached (RWF_NOWAIT stops at the first page it would
            # wait for), or past the end of the file; read_kept tells which.
            return bytes(buffer) if got == size else None
        finally:
            self.release(handle)

    def read_kept(self, path: str, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes from ``offset``, through the file's read handle (opened
        here if it is not, and kept for the next read, counted against ``max_open``);
        blocking."""
        with self._lock:
            handle = self._readers.get(path)
            if handle is None:
                fd = self._open_fd(path, _READ)
                handle = self._readers[path] = _PooledFile(self, path, fd, _READ)
            elif handle.fd is None:
                fd = handle.fd = self._open_fd(path, _READ)
            else:
                fd = handle.fd
            self._open[handle] = None
            self._open.move_to_end(handle)
            handle.pinned += 1
            self._shrink(keep=handle)
        try:
            return os.pread(fd, size, offset)
        finally:
            self.release(handle)

    def forget_reads_under(self, directory: str) -> None:
        """Close the read handles of files under ``directory`` (being deleted)."""
        prefix = os.path.join(directory, "")
        with self._lock:
            for path in [p for p in self._readers if p.startswith(prefix)]:
                self._forget_reader(path)

    def close_reads(self) -> None:
        """Close every read handle (the logs are closing)."""
        with self._lock:
            for path in list(self._readers):
                self._forget_reader(path)

    def _forget_reader(self, path: str) -> None:
        """(Under the lock.) ``path``'s read handle closed, now or by its last release:
        a deleted or replaced file is not kept alive by it."""
        handle = self._readers.pop(path, None)
        if handle is None:
            return
        self._open.pop(handle, None)
        handle.doomed = True
        if handle.pinned:
            return
        fd, handle.fd = handle.fd, None
        if fd is not None:
            os.close(fd)

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
            if handle.doomed:
                raise FileNotFoundError(errno.ENOENT, "deleted or replaced", handle.path)
            if fd is None:
                fd = handle.fd = self._open_fd(handle.path, handle.flags)
                self._open[handle] = None
                self._shrink(keep=handle)
            else:
                self._open.move_to_end(handle)
            handle.pinned += 1
            return fd

    def release(self, handle: _PooledFile) -> None:
        with self._lock:
            handle.pinned -= 1
            if handle.doomed and not handle.pinned:
                fd, handle.fd = handle.fd, None
                if fd is not None:
                    os.close(fd)

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
