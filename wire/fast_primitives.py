"""Kafka's primitive types' fast readers and writers over a ``BytesIO``: the functions the
compiled schemas call (``primitives.py``'s Adapters emit the calls and
``ensure_fast_imports`` the import), also used by framing and records. They check for
short reads, and check counts against what is left in the frame before anything is
allocated.
"""

from __future__ import annotations

import struct
import uuid
from io import BytesIO
from typing import Any

from wire.kafka_uuid import ZERO_UUID
from wire.varint import encode_uvarint

__all__ = [
    "ZERO_UUID",
    "WireDecodeError",
    "ensure_fast_imports",
    "read_array_count",
    "read_bytes",
    "read_exact",
    "read_string",
    "read_uuid",
    "read_uvarint",
    "read_varint",
    "read_varlong",
    "remaining",
    "write_array_count",
    "write_bytes",
    "write_string",
    "write_uuid",
    "write_uvarint",
    "write_varint",
    "write_varlong",
]

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


class WireDecodeError(ValueError):
    """Raised by the readers on malformed input; the codec turns it into CorruptFrame."""


def read_exact(io: BytesIO, n: int) -> bytes:
    """Read exactly ``n`` bytes or fail: a short read is a truncated frame."""
    data = io.read(n)
    if len(data) != n:
        raise WireDecodeError(f"truncated: wanted {n} bytes, {len(data)} left")
    return data


def remaining(io: BytesIO) -> int:
    """Bytes left to read in an in-memory stream."""
    return io.getbuffer().nbytes - io.tell()


def read_uvarint(io: BytesIO, max_bytes: int = 5) -> int:
    """Unsigned LEB128 varint (Kafka's unsigned varint: at most 5 bytes, 10 for varlong),
    within 32 bits (64 for varlong) like the reference Adapters."""
    b = io.read(1)
    if not b:
        raise WireDecodeError("truncated varint")
    byte = b[0]
    if byte < 0x80:
        return byte  # the common case: lengths, counts and tags below 128
    return _uvarint_rest(io, byte, max_bytes)


def _uvarint_rest(io: BytesIO, first: int, max_bytes: int) -> int:
    """The rest of a varint whose first byte ``first`` has its continuation bit set."""
    result = first & 0x7F
    shift = 7
    for _ in range(max_bytes - 1):
        b = io.read(1)
        if not b:
            raise WireDecodeError("truncated varint")
        byte = b[0]
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            if result >> (32 if max_bytes <= 5 else 64):
                raise WireDecodeError("varint out of range")
            return result
        shift += 7
    raise WireDecodeError("varint too long")


def write_uvarint(io: BytesIO, value: int) -> None:
    """Write an unsigned varint."""
    io.write(encode_uvarint(value))


def read_varint(io: BytesIO) -> int:
    """Signed zig-zag varint (int32)."""
    raw = read_uvarint(io, 5)
    return (raw >> 1) ^ -(raw & 1)


def read_varlong(io: BytesIO) -> int:
    """Signed zig-zag varlong (int64)."""
    raw = read_uvarint(io, 10)
    return (raw >> 1) ^ -(raw & 1)


def write_varint(io: BytesIO, value: int) -> None:
    """Write a signed zig-zag varint (int32)."""
    if not -(2**31) <= value < 2**31:
        raise ValueError(f"varint out of range: {value}")
    io.write(encode_uvarint((value << 1) ^ (value >> 31)))


def write_varlong(io: BytesIO, value: int) -> None:
    """Write a signed zig-zag varlong (int64)."""
    if not -(2**63) <= value < 2**63:
        raise ValueError(f"varlong out of range: {value}")
    io.write(encode_uvarint((value << 1) ^ (value >> 63)))


def read_length(io: BytesIO, compact: bool) -> int:
    """A length or count: int32 (or int16 for strings, handled by the caller) / compact."""
    if compact:
        return read_uvarint(io) - 1
    return int(_I32.unpack(read_exact(io, 4))[0])


def read_string(io: BytesIO, compact: bool, nullable: bool) -> str | None:
    """A Kafka string: int16 length (or compact uvarint length+1), -1 means null."""
    if compact:  # read_uvarint inlined: requests are mostly short and null strings
        b = io.read(1)
        if not b:
            raise WireDecodeError("truncated varint")
        n = (b[0] if b[0] < 0x80 else _uvarint_rest(io, b[0], 5)) - 1
    else:
        n = _I16.unpack(read_exact(io, 2))[0]
    if n < 0:
        if n == -1 and nullable:
            return None
        raise WireDecodeError(f"invalid string length {n}")
    data = io.read(n)
    if len(data) != n:
        raise WireDecodeError(f"truncated: wanted {n} bytes, {len(data)} left")
    return data.decode("utf-8")


def write_string(io: BytesIO, value: str | None, compact: bool, nullable: bool) -> None:
    """Write a Kafka string; ``None`` only where the field is nullable."""
    if value is None:
        if not nullable:
            raise ValueError("null written to a non-nullable string")
        io.write(b"\x00" if compact else b"\xff\xff")
        return
    data = value.encode("utf-8")
    if compact:
        io.write(encode_uvarint(len(data) + 1))
    else:
        if len(data) > 0x7FFF:
            raise ValueError("string longer than 32767 bytes")
        io.write(_I16.pack(len(data)))
    io.write(data)


def read_bytes(io: BytesIO, compact: bool, nullable: bool) -> bytes | None:
    """Kafka bytes: int32 length (or compact), -1 means null."""
    n = read_length(io, compact)
    if n < 0:
        if n == -1 and nullable:
            return None
        raise WireDecodeError(f"invalid bytes length {n}")
    return read_exact(io, n)


def write_bytes(io: BytesIO, value: bytes | None, compact: bool, nullable: bool) -> None:
    """Write Kafka bytes; ``None`` only where the field is nullable."""
    if value is None:
        if not nullable:
            raise ValueError("null written to non-nullable bytes")
        io.write(b"\x00" if compact else b"\xff\xff\xff\xff")
        return
    if compact:
        io.write(encode_uvarint(len(value) + 1))
    else:
        io.write(_I32.pack(len(value)))
    io.write(value)


def read_array_count(io: BytesIO, compact: bool, nullable: bool) -> int:
    """An array's element count; -1 (null) only where nullable. Checked against the bytes
    left so that a hostile count never drives an allocation or a long loop."""
    if compact:  # read_uvarint inlined, as in read_string
        b = io.read(1)
        if not b:
            raise WireDecodeError("truncated varint")
        n = (b[0] if b[0] < 0x80 else _uvarint_rest(io, b[0], 5)) - 1
    else:
        n = read_length(io, compact)
    if n <= 0:
        if n == 0:
            return 0
        if n == -1 and nullable:
            return -1
        raise WireDecodeError(f"invalid array length {n}")
    if n > remaining(io):
        raise WireDecodeError(f"array of {n} elements in {remaining(io)} bytes")
    return n


def write_array_count(io: BytesIO, value: list[Any] | None, compact: bool, nullable: bool) -> None:
    """Write an array's count (the elements follow)."""
    if value is None:
        if not nullable:
            raise ValueError("null written to a non-nullable array")
        io.write(b"\x00" if compact else b"\xff\xff\xff\xff")
    elif compact:
        io.write(encode_uvarint(len(value) + 1))
    else:
        io.write(_I32.pack(len(value)))


def read_uuid(io: BytesIO) -> uuid.UUID:
    """A 16-byte UUID."""
    return uuid.UUID(bytes=read_exact(io, 16))


def write_uuid(io: BytesIO, value: uuid.UUID) -> None:
    """Write a 16-byte UUID."""
    io.write(value.bytes)


# Names the compiled code imports; kept in one place so the emitters stay short.
_FAST_IMPORT = (
    "from wire.fast_primitives import read_uvarint, write_uvarint, read_varint, read_varlong, "
    "write_varint, write_varlong, read_string, write_string, read_bytes, write_bytes, "
    "read_array_count, write_array_count, read_uuid, write_uuid, read_exact, ZERO_UUID"
)


def ensure_fast_imports(code: Any) -> None:
    """Add the fast helpers' import to a construct CodeGen once."""
    if not getattr(code, "_kafka_fast_imports", False):
        code.append(_FAST_IMPORT)
        code._kafka_fast_imports = True
