"""One batch of a partition log as memory holds it: its offsets, largest timestamp and size,
and either its bytes (a partition kept in memory only, a batch the log cleaner rewrote) or
where they lie in a segment file of the data directory (issue 33: the bytes of every batch
appended were also held in memory to answer Fetch, 10.5 MiB for 100,000 x 100 B records).

A located batch is read back with ``os.pread`` on a read-only descriptor opened for the
read (:class:`BatchReader` keeps one per segment file for one answer). Fetch reads them on
the event loop, one answer at a time. Read in worker threads, concurrent answers' bytes sat
outside the answer memory's bound and in the threads' allocator arenas (the hardening
soak's ten unread readers: RSS +212 to +330 MiB against a 200 MiB bound); on the loop, a
cold page cache or a busy disk holds it meanwhile (a segment's open once held it 5.7 s):
not solved. What is read is checked against what
the index knows (base offset, batch length, CRC field): the log cleaner, in a worker thread,
may have replaced or deleted the file since, and a batch that is no longer where the index
says raises :class:`BatchGone` rather than answering other bytes. Retention runs on the event
loop between answers, so an answer never sees its own index go stale.
"""

from __future__ import annotations

import os
import struct

from wire.records import CRC_AT, LENGTH_END

__all__ = ["BatchGone", "BatchReader", "StoredBatch", "read_batches"]

_HEAD = struct.Struct(">qi")  # baseOffset, batchLength
_CRC = struct.Struct(">I")  # at CRC_AT
_READ_ONLY = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)


class BatchGone(Exception):
    """A located batch is no longer where the index says (its segment file was deleted or
    replaced since)."""


class StoredBatch:
    """One appended batch: offsets, max timestamp, size and its bytes or their place."""

    __slots__ = ("_data", "base_offset", "crc", "last_offset", "max_timestamp", "path",
                 "position", "size")

    def __init__(self, base_offset: int, last_offset: int, max_timestamp: int,
                 data: bytes, path: str | None = None, position: int = 0) -> None:
        """``data`` is the batch; with ``path`` it is also at ``position`` of that segment
        file, and only its size and CRC field are kept."""
        self.base_offset = base_offset
        self.last_offset = last_offset
        self.max_timestamp = max_timestamp
        self.size = len(data)
        self.path = path
        self.position = position
        self.crc = _CRC.unpack_from(data, CRC_AT)[0] if path is not None else 0
        self._data: bytes | None = None if path is not None else data

    @property
    def data(self) -> bytes:
        """The batch's bytes (read from its segment file when located); BatchGone."""
        if self._data is not None:
            return self._data
        with BatchReader() as reader:
            return reader.read(self)

    def __repr__(self) -> str:
        where = f"{self.path}@{self.position}" if self.path is not None else "memory"
        return (f"StoredBatch({self.base_offset}..{self.last_offset}, {self.size} B, "
                f"{where})")


class BatchReader:
    """Reads located batches, one read-only descriptor per segment file until closed."""

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}

    def read(self, batch: StoredBatch) -> bytes:
        """``batch``'s bytes, checked against its index entry; BatchGone."""
        held = batch._data
        if held is not None:
            return held
        path = batch.path
        assert path is not None
        try:
            fd = self._fds.get(path)
            if fd is None:
                fd = self._fds[path] = os.open(path, _READ_ONLY)
            data = os.pread(fd, batch.size, batch.position)
        except OSError as exc:
            raise BatchGone(f"{path}: {exc.strerror or exc}") from exc
        if (len(data) != batch.size
                or _HEAD.unpack_from(data) != (batch.base_offset, batch.size - LENGTH_END)
                or _CRC.unpack_from(data, CRC_AT)[0] != batch.crc):
            raise BatchGone(f"{path} no longer holds the batch at offset {batch.base_offset}")
        return data

    def close(self) -> None:
        fds, self._fds = self._fds, {}
        for fd in fds.values():
            os.close(fd)

    def __enter__(self) -> BatchReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_batches(batches: list[StoredBatch]) -> list[bytes]:
    """The bytes of ``batches`` in order, up to the first no longer where its index entry
    says (a segment file the log cleaner replaced or retention deleted since: the read ends
    there and the client asks again)."""
    out: list[bytes] = []
    with BatchReader() as reader:
        for batch in batches:
            try:
                out.append(reader.read(batch))
            except BatchGone:
                break
    return out
