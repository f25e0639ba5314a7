"""The file-system calls the log makes, behind an interface so tests can inject faults.

:class:`OsFileSystem` is the real thing. :class:`FaultyFileSystem` wraps it and, following a
:class:`FaultPlan`, turns chosen operations into torn writes, short writes, ``ENOSPC`` /
``EIO`` errors, fsync failures or a simulated crash (after which every call fails, as if the
process had died). It can also model a power loss by cutting files back to what was last
fsynced.
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

__all__ = [
    "FaultPlan",
    "FaultyFileSystem",
    "FileHandle",
    "FileSystem",
    "OsFileSystem",
    "SimulatedCrash",
    "write_all",
    "write_atomically",
]


class FileHandle(Protocol):
    """An open file the log appends to."""

    def write(self, data: bytes | memoryview) -> int: ...
    def fsync(self) -> None: ...
    def truncate(self, size: int) -> None: ...
    def close(self) -> None: ...


class FileSystem(Protocol):
    """Everything the log, compaction and recovery do to the disk."""

    def makedirs(self, path: str) -> None: ...
    def listdir(self, path: str) -> list[str]: ...
    def exists(self, path: str) -> bool: ...
    def size(self, path: str) -> int: ...
    def mtime_ns(self, path: str) -> int: ...
    def set_mtime_ns(self, path: str, mtime_ns: int) -> None: ...
    def read_bytes(self, path: str) -> bytes: ...
    def read_range(self, path: str, offset: int, size: int) -> bytes: ...
    def open_append(self, path: str, *, create: bool = False) -> FileHandle: ...
    def rename(self, src: str, dst: str) -> None: ...
    def unlink(self, path: str) -> None: ...
    def fsync_dir(self, path: str) -> None: ...
    def lock(self, path: str) -> int: ...
    def unlock(self, fd: int) -> None: ...


class _OsFile:
    __slots__ = ("fd",)

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def write(self, data: bytes | memoryview) -> int:
        return os.write(self.fd, data)

    def fsync(self) -> None:
        os.fsync(self.fd)

    def truncate(self, size: int) -> None:
        os.ftruncate(self.fd, size)

    def close(self) -> None:
        os.close(self.fd)


class OsFileSystem:
    """The real file system (``os`` calls, ``fcntl.flock`` for the lock)."""

    def makedirs(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)

    def listdir(self, path: str) -> list[str]:
        return os.listdir(path)

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def size(self, path: str) -> int:
        return os.stat(path).st_size

    def mtime_ns(self, path: str) -> int:
        return os.stat(path).st_mtime_ns

    def set_mtime_ns(self, path: str, mtime_ns: int) -> None:
        os.utime(path, ns=(mtime_ns, mtime_ns))

    def read_bytes(self, path: str) -> bytes:
        with open(path, "rb") as f:
            return f.read()

    def read_range(self, path: str, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes from ``offset`` (fewer at the end of the file)."""
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            return os.pread(fd, size, offset)
        finally:
            os.close(fd)

    def open_append(self, path: str, *, create: bool = False) -> FileHandle:
        flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        if create:
            flags |= os.O_CREAT | os.O_EXCL
        return _OsFile(os.open(path, flags, 0o644))

    def rename(self, src: str, dst: str) -> None:
        os.rename(src, dst)

    def unlink(self, path: str) -> None:
        os.unlink(path)

    def fsync_dir(self, path: str) -> None:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def lock(self, path: str) -> int:
        """Take an exclusive, non-blocking ``flock`` on ``path``; BlockingIOError if held."""
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return fd

    def unlock(self, fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


# --------------------------------------------------------------------------------------
# Fault injection


class SimulatedCrash(BaseException):
    """The simulated process died. A BaseException so ``except Exception``/``OSError``
    handlers in the code under test do not swallow it, like a real SIGKILL."""


@dataclass
class FaultPlan:
    """What to break. Operations are counted from 0 across the whole file system
    (write, fsync, truncate, rename, unlink, fsync_dir, set_mtime, create).

    - ``crash_at``: the operation with this index crashes (a write first writes
      ``torn_bytes`` of its data when set); every later call crashes too.
    - ``write_errors`` / ``fsync_errors``: the n-th write / fsync (counted separately)
      raises ``OSError(errno)``.
    - ``short_writes``: the n-th write writes only k bytes and returns k.
    """

    crash_at: int | None = None
    torn_bytes: int | None = None
    write_errors: dict[int, int] = field(default_factory=dict)
    fsync_errors: dict[int, int] = field(default_factory=dict)
    short_writes: dict[int, int] = field(default_factory=dict)


class _FaultyFile:
    def __init__(self, fs: FaultyFileSystem, path: str, inner: _OsFile) -> None:
        self.fs = fs
        self.path = path
        self.inner = inner
        self.closed = False

    def write(self, data: bytes | memoryview) -> int:
        return self.fs._write(self, data)

    def fsync(self) -> None:
        self.fs._op("fsync")
        n = self.fs._fsyncs
        self.fs._fsyncs += 1
        self.fs.fsync_calls += 1
        if n in self.fs.plan.fsync_errors:
            raise OSError(self.fs.plan.fsync_errors[n], "injected fsync failure")
        self.inner.fsync()
        self.fs.synced_size[self.path] = os.fstat(self.inner.fd).st_size

    def truncate(self, size: int) -> None:
        self.fs._op("truncate")
        self.inner.truncate(size)

    def close(self) -> None:
        # Not an operation a crash can interrupt; after a crash the "kernel" has already
        # closed the descriptor (see FaultyFileSystem._die), so this is a no-op.
        if self.closed:
            return
        self.closed = True
        self.inner.close()
        if self in self.fs._handles:
            self.fs._handles.remove(self)


class FaultyFileSystem(OsFileSystem):
    """An :class:`OsFileSystem` that injects the faults of a :class:`FaultPlan`."""

    def __init__(self, plan: FaultPlan | None = None) -> None:
        self.plan = plan or FaultPlan()
        self.ops = 0
        self.crashed = False
        self.fsync_calls = 0
        self.op_log: list[str] = []
        self._writes = 0
        self._fsyncs = 0
        #: size of each file at its last successful fsync (for :meth:`lose_unsynced`)
        self.synced_size: dict[str, int] = {}
        self.on_op: Callable[[str], None] | None = None
        self._handles: list[_FaultyFile] = []
        self._locks: set[int] = set()

    def arm(self, plan: FaultPlan) -> None:
        """Replace the plan and restart the operation counters."""
        self.plan = plan
        self.ops = 0
        self._writes = 0
        self._fsyncs = 0
        self.op_log.clear()

    def _op(self, name: str) -> None:
        if self.crashed:
            raise SimulatedCrash(f"{name} after crash")
        index = self.ops
        self.ops += 1
        self.op_log.append(name)
        if self.on_op is not None:
            self.on_op(name)
        if self.plan.crash_at is not None and index == self.plan.crash_at and name != "write":
            self._die()
            raise SimulatedCrash(f"crash at op {index} ({name})")

    def crash(self) -> None:
        """Kill the simulated process now (every later call raises SimulatedCrash)."""
        self._die()

    def _die(self) -> None:
        """The process is gone: the kernel closes its files and drops its locks."""
        self.crashed = True
        for handle in list(self._handles):
            handle.close()
        for fd in list(self._locks):
            super().unlock(fd)
        self._locks.clear()

    def _write(self, f: _FaultyFile, data: bytes | memoryview) -> int:
        index = self.ops
        self._op("write")
        n = self._writes
        self._writes += 1
        if self.plan.crash_at is not None and index == self.plan.crash_at:
            k = self.plan.torn_bytes
            if k:
                f.inner.write(data[: min(k, len(data))])
            self._die()
            raise SimulatedCrash(f"crash at op {index} (write, {k or 0} bytes torn)")
        if n in self.plan.write_errors:
            raise OSError(self.plan.write_errors[n], os.strerror(self.plan.write_errors[n]))
        if n in self.plan.short_writes:
            return f.inner.write(data[: self.plan.short_writes[n]])
        return f.inner.write(data)

    def open_append(self, path: str, *, create: bool = False) -> FileHandle:
        if create:
            self._op("create")
        elif self.crashed:
            raise SimulatedCrash("open after crash")
        flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
        if create:
            flags |= os.O_CREAT | os.O_EXCL
        handle = _FaultyFile(self, path, _OsFile(os.open(path, flags, 0o644)))
        self._handles.append(handle)
        if create:
            self.synced_size[path] = 0  # nothing of a new file is durable until fsynced
        return handle

    def rename(self, src: str, dst: str) -> None:
        self._op("rename")
        super().rename(src, dst)
        for handle in self._handles:
            if handle.path == src:
                handle.path = dst
        if src in self.synced_size:
            self.synced_size[dst] = self.synced_size.pop(src)

    def unlink(self, path: str) -> None:
        self._op("unlink")
        super().unlink(path)
        self.synced_size.pop(path, None)

    def fsync_dir(self, path: str) -> None:
        self._op("fsync_dir")
        super().fsync_dir(path)

    def set_mtime_ns(self, path: str, mtime_ns: int) -> None:
        self._op("set_mtime")
        super().set_mtime_ns(path, mtime_ns)

    def read_bytes(self, path: str) -> bytes:
        if self.crashed:
            raise SimulatedCrash("read after crash")
        return super().read_bytes(path)

    def read_range(self, path: str, offset: int, size: int) -> bytes:
        if self.crashed:
            raise SimulatedCrash("read after crash")
        return super().read_range(path, offset, size)

    def lock(self, path: str) -> int:
        if self.crashed:
            raise SimulatedCrash("lock after crash")
        fd = super().lock(path)
        self._locks.add(fd)
        return fd

    def unlock(self, fd: int) -> None:
        if fd in self._locks:  # after a crash the lock is already gone
            self._locks.discard(fd)
            super().unlock(fd)

    def lose_unsynced(self) -> None:
        """Model a power loss: cut every file created or fsynced through this object back
        to its size at its last fsync (0 for a new file never fsynced). Directory entries
        are not modelled: a rename or unlink is assumed durable once it returns."""
        for path, size in self.synced_size.items():
            if os.path.exists(path) and os.path.getsize(path) > size:
                os.truncate(path, size)


ENOSPC = errno.ENOSPC
EIO = errno.EIO


def write_all(handle: FileHandle, data: bytes | bytearray) -> None:
    """Write all of ``data`` (one write() in the usual case: no view to slice); OSError
    (EIO) if a write writes nothing."""
    whole = data if isinstance(data, bytes) else memoryview(data)
    done = 0
    while done < len(data):
        n = handle.write(memoryview(data)[done:] if done else whole)
        if n <= 0:
            raise OSError(errno.EIO, f"write returned {n}")
        done += n


def write_atomically(fs: FileSystem, directory: str, path: str, temp: str,
                     data: bytes | bytearray) -> None:
    """Make ``path`` hold ``data`` or what it held before, whatever happens: ``temp``
    written and fsynced, renamed over ``path``, ``directory`` fsynced. On OSError the
    temporary file is removed (if it can be) and the error raised."""
    try:
        if fs.exists(temp):
            fs.unlink(temp)
        handle = fs.open_append(temp, create=True)
        try:
            write_all(handle, data)
            handle.fsync()
        finally:
            handle.close()
        fs.rename(temp, path)
        fs.fsync_dir(directory)
    except OSError:
        try:
            if fs.exists(temp):
                fs.unlink(temp)
        except OSError:
            pass
        raise
