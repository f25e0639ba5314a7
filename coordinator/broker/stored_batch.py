"""One batch of a partition log as memory holds it: its offsets, largest timestamp and size,
and either its bytes (a partition kept in memory only) or where they lie in a segment file
of the data directory, for an appended batch and one the log cleaner rewrote alike (issue 33:
the bytes of every batch appended were also held in memory to answer Fetch, 10.5 MiB for
100,000 x 100 B records; the cleaner's output was held too).

A located batch is read back through its :class:`SegmentSource` (the topic files'
``storage.open_files.PooledFileSystem``), which keeps one read-only descriptor per segment
file among its bounded open files and closes it when the file is deleted or replaced.
Fetch (:func:`read_batches`) reads on the event loop only what needs neither an open nor
the disk (``RWF_NOWAIT``: bytes in the page cache); the rest is read in a worker thread,
one read at a time for the whole store, so the bytes in flight stay one batch's (read in
threads for every answer at once, concurrent answers' bytes sat outside the answer
memory's bound: the hardening soak's ten unread readers grew RSS by 212 to 330 MiB
against a 200 MiB bound; read on the loop, a segment's open once held it 5.7 s). What is
read is checked against what the index knows (base offset, batch length, CRC field): the
log cleaner, in a worker thread, may have replaced or deleted the file since, and a batch
that is no longer where the index says raises :class:`BatchGone` rather than answering
other bytes. Retention runs on the event loop between answers.
"""

from __future__ import annotations

import struct
from typing import Protocol

import trio

from wire.records import CRC_AT, LENGTH_END

__all__ = ["BatchGone", "SegmentSource", "StoredBatch", "read_batch", "read_batches"]

_HEAD = struct.Struct(">qi")  # baseOffset, batchLength
_CRC = struct.Struct(">I")  # at CRC_AT


class SegmentSource(Protocol):
    """Where located batches' bytes are read (``PooledFileSystem``)."""

    def read_now(self, path: str, offset: int, size: int) -> bytes | None: ...
    def read_kept(self, path: str, offset: int, size: int) -> bytes: ...


class BatchGone(Exception):
    """A located batch is no longer where the index says (its segment file was deleted or
    replaced since)."""


class StoredBatch:
    """One appended batch: offsets, max timestamp, size and its bytes or their place."""

    __slots__ = ("_data", "base_offset", "crc", "last_offset", "max_timestamp", "path",
                 "position", "size", "source")

    def __init__(self, base_offset: int, last_offset: int, max_timestamp: int,
                 data: bytes, path: str | None = None, position: int = 0,
                 source: SegmentSource | None = None) -> None:
        """``data`` is the batch; with ``path`` and ``source`` it is also at ``position``
        of that segment file, and only its size and CRC field are kept."""
        self.base_offset = base_offset
        self.last_offset = last_offset
        self.max_timestamp = max_timestamp
        self.size = len(data)
        located = path is not None and source is not None
        self.path = path if located else None
        self.position = position
        self.source = source if located else None
        self.crc = _CRC.unpack_from(data, CRC_AT)[0] if located else 0
        self._data: bytes | None = None if located else data

    @classmethod
    def located(cls, base_offset: int, last_offset: int, max_timestamp: int, size: int,
                crc: int, path: str, position: int, source: SegmentSource) -> StoredBatch:
        """A batch known only by where it lies (the log cleaner's output): its ``size``
        bytes at ``position`` of ``path``, whose CRC field is ``crc``."""
        batch = cls.__new__(cls)
        batch.base_offset = base_offset
        batch.last_offset = last_offset
        batch.max_timestamp = max_timestamp
        batch.size = size
        batch.path = path
        batch.position = position
        batch.source = source
        batch.crc = crc
        batch._data = None
        return batch

    @property
    def held(self) -> bytes | None:
        """The bytes when memory holds them, else None (located)."""
        return self._data

    @property
    def data(self) -> bytes:
        """The batch's bytes, read from its segment file when located, blocking (tools and
        tests; the server reads with :func:`read_batch`); BatchGone."""
        if self._data is not None:
            return self._data
        source, path = self.source, self.path
        assert source is not None and path is not None
        try:
            data = source.read_now(path, self.position, self.size)
            if data is None:
                data = source.read_kept(path, self.position, self.size)
        except OSError as exc:
            raise BatchGone(f"{path}: {exc.strerror or exc}") from exc
        return self.checked(data)

    def checked(self, data: bytes) -> bytes:
        """``data`` read from where the index says: BatchGone unless it is this batch."""
        if (len(data) != self.size
                or _HEAD.unpack_from(data) != (self.base_offset, self.size - LENGTH_END)
                or _CRC.unpack_from(data, CRC_AT)[0] != self.crc):
            raise BatchGone(f"{self.path} no longer holds the batch at offset "
                            f"{self.base_offset}")
        return data

    def __repr__(self) -> str:
        where = f"{self.path}@{self.position}" if self.path is not None else "memory"
        return (f"StoredBatch({self.base_offset}..{self.last_offset}, {self.size} B, "
                f"{where})")


async def read_batch(batch: StoredBatch, limiter: trio.CapacityLimiter | None = None) -> bytes:
    """``batch``'s bytes: held, read on the spot when that needs neither an open nor the
    disk, else in a worker thread under ``limiter``; BatchGone when it is no longer where
    its index entry says."""
    held = batch.held
    if held is not None:
        return held
    source, path = batch.source, batch.path
    assert source is not None and path is not None
    try:
        data = source.read_now(path, batch.position, batch.size)
        if data is None:
            data = await trio.to_thread.run_sync(
                source.read_kept, path, batch.position, batch.size, limiter=limiter)
    except OSError as exc:
        raise BatchGone(f"{path}: {exc.strerror or exc}") from exc
    return batch.checked(data)


async def read_batches(batches: list[StoredBatch],
                       limiter: trio.CapacityLimiter | None = None) -> list[bytes]:
    """The bytes of ``batches`` in order (:func:`read_batch`), up to the first no longer
    where its index entry says (a segment file the log cleaner replaced or retention
    deleted since: the read ends there and the client asks again)."""
    out: list[bytes] = []
    for batch in batches:
        try:
            out.append(await read_batch(batch, limiter))
        except BatchGone:
            break
    return out
