"""Size-prefixed framing, sans-I/O: feed bytes with ``receive_data``, take frames with
``next_frame`` until it returns ``NEED_DATA``.

A size prefix that is negative or above the maximum (Kafka's
``socket.request.max.bytes``, default 104857600) is refused as soon as its four bytes
arrive, before anything of that size is buffered or allocated.
"""

from __future__ import annotations

import struct
from enum import Enum
from typing import Final

from wire.errors import FrameTooLarge

__all__ = ["DEFAULT_MAX_FRAME_BYTES", "NEED_DATA", "FrameReader", "frame"]

DEFAULT_MAX_FRAME_BYTES: Final = 104_857_600
_SIZE = struct.Struct(">i")


class _NeedData(Enum):
    NEED_DATA = "NEED_DATA"


NEED_DATA: Final = _NeedData.NEED_DATA


class FrameReader:
    """Reassembles size-prefixed frames from a byte stream."""

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self.max_frame_bytes = max_frame_bytes
        self._buffer = bytearray()
        self._start = 0

    def receive_data(self, data: bytes) -> None:
        """Add bytes read from the connection."""
        if self._start and self._start >= len(self._buffer) // 2:
            del self._buffer[: self._start]
            self._start = 0
        self._buffer += data

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as frames."""
        return len(self._buffer) - self._start

    def pending_size(self) -> int | None:
        """The announced size of the frame being received (its size prefix is in), or None
        when no frame has started. Raises FrameTooLarge like :meth:`next_frame`."""
        if len(self._buffer) - self._start < 4:
            return None
        (size,) = _SIZE.unpack_from(self._buffer, self._start)
        if size < 0 or size > self.max_frame_bytes:
            raise FrameTooLarge(
                f"frame size {size} outside 0..{self.max_frame_bytes} (socket.request.max.bytes)"
            )
        return int(size)

    def next_frame(self) -> bytes | _NeedData:
        """The next complete frame's payload (without its size prefix), or NEED_DATA."""
        available = len(self._buffer) - self._start
        if available < 4:
            return NEED_DATA
        (size,) = _SIZE.unpack_from(self._buffer, self._start)
        if size < 0 or size > self.max_frame_bytes:
            raise FrameTooLarge(
                f"frame size {size} outside 0..{self.max_frame_bytes} (socket.request.max.bytes)"
            )
        if available < 4 + size:
            return NEED_DATA
        begin = self._start + 4
        with memoryview(self._buffer) as view:
            payload = bytes(view[begin : begin + size])  # one copy, not a slice and a copy
        self._start = begin + size
        if self._start == len(self._buffer):
            self._buffer.clear()
            self._start = 0
        return payload


def frame(payload: bytes) -> bytes:
    """Prefix ``payload`` with its size."""
    return _SIZE.pack(len(payload)) + payload
