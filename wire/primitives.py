"""Kafka's primitive types as construct Adapters.

Each primitive is declared twice, on purpose:

* ``_decode`` / ``_encode`` over a plain construct definition that uses ``this`` for its
  length dependencies: the readable reference, used when a schema is not compiled;
* ``_emitparse`` / ``_emitbuild``, which ``Construct.compile()`` inlines as calls to the
  fast readers and writers below. Construct's own compiled ``Bytes(this.n)`` does not
  check for short reads, so the fast path does, and counts are checked against what is
  left in the frame before anything is allocated.

The tests parse and build every schema both ways and compare.
"""

from __future__ import annotations

import struct
import uuid
from io import BytesIO
from typing import Any

from construct import (
    Adapter,
    Array,
    Bytes,
    Construct,
    Flag,
    GreedyBytes,
    If,
    Int16sb,
    Int32sb,
    Prefixed,
    PrefixedArray,
    Struct,
    VarInt,
    ZigZag,
    this,
)

from wire.fields import zero_uuid
from wire.varint import encode_uvarint

ZERO_UUID = zero_uuid()

__all__ = [
    "ZERO_UUID",
    "KafkaArray",
    "KafkaBool",
    "KafkaBytes",
    "KafkaString",
    "KafkaUuid",
    "SignedVarInt",
    "SignedVarLong",
    "UnsignedVarInt",
    "WireDecodeError",
    "read_exact",
    "read_uvarint",
    "write_uvarint",
]

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


class WireDecodeError(ValueError):
    """Raised by the readers on malformed input; the codec turns it into CorruptFrame."""


# ---------------------------------------------------------------------------------------
# fast readers and writers (used by compiled schemas, and by framing/records)
# ---------------------------------------------------------------------------------------


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
    "from wire.primitives import read_uvarint, write_uvarint, read_varint, read_varlong, "
    "write_varint, write_varlong, read_string, write_string, read_bytes, write_bytes, "
    "read_array_count, write_array_count, read_uuid, write_uuid, read_exact, ZERO_UUID"
)


def ensure_fast_imports(code: Any) -> None:
    """Add the fast helpers' import to a construct CodeGen once."""
    if not getattr(code, "_kafka_fast_imports", False):
        code.append(_FAST_IMPORT)
        code._kafka_fast_imports = True


# ---------------------------------------------------------------------------------------
# the Adapters
# ---------------------------------------------------------------------------------------


class UnsignedVarInt(Adapter):  # type: ignore[misc]
    """Kafka's unsigned varint (int32 range), LEB128 as construct's VarInt."""

    def __init__(self) -> None:
        super().__init__(VarInt)

    def _decode(self, obj: int, context: Any, path: Any) -> int:
        if obj >= 2**32:
            raise WireDecodeError("unsigned varint out of range")
        return obj

    def _encode(self, obj: int, context: Any, path: Any) -> int:
        if not 0 <= obj < 2**32:
            raise ValueError(f"unsigned varint out of range: {obj}")
        return obj

    def _emitparse(self, code: Any) -> str:
        ensure_fast_imports(code)
        return "read_uvarint(io)"

    def _emitbuild(self, code: Any) -> str:
        ensure_fast_imports(code)
        return "(write_uvarint(io, obj), obj)[1]"


class _SignedVar(Adapter):  # type: ignore[misc]
    bits = 32

    def __init__(self) -> None:
        super().__init__(ZigZag)

    def _decode(self, obj: int, context: Any, path: Any) -> int:
        if not -(2 ** (self.bits - 1)) <= obj < 2 ** (self.bits - 1):
            raise WireDecodeError("signed varint out of range")
        return obj

    def _encode(self, obj: int, context: Any, path: Any) -> int:
        if not -(2 ** (self.bits - 1)) <= obj < 2 ** (self.bits - 1):
            raise ValueError(f"signed varint out of range: {obj}")
        return obj


class SignedVarInt(_SignedVar):
    """Kafka's zig-zag varint (int32)."""

    bits = 32

    def _emitparse(self, code: Any) -> str:
        ensure_fast_imports(code)
        return "read_varint(io)"

    def _emitbuild(self, code: Any) -> str:
        ensure_fast_imports(code)
        return "(write_varint(io, obj), obj)[1]"


class SignedVarLong(_SignedVar):
    """Kafka's zig-zag varlong (int64)."""

    bits = 64

    def _emitparse(self, code: Any) -> str:
        ensure_fast_imports(code)
        return "read_varlong(io)"

    def _emitbuild(self, code: Any) -> str:
        ensure_fast_imports(code)
        return "(write_varlong(io, obj), obj)[1]"


class KafkaBool(Adapter):  # type: ignore[misc]
    """Kafka's boolean: one byte, non-zero is true. Construct's compiled ``Flag`` reads
    ``io.read(1) != b"\\x00"``, which turns a missing byte into True; this one fails."""

    def __init__(self) -> None:
        super().__init__(Flag)

    def _decode(self, obj: bool, context: Any, path: Any) -> bool:
        return bool(obj)

    def _encode(self, obj: bool, context: Any, path: Any) -> bool:
        return bool(obj)

    def _emitparse(self, code: Any) -> str:
        ensure_fast_imports(code)
        return "(read_exact(io, 1) != b'\\x00')"

    def _emitbuild(self, code: Any) -> str:
        return "(io.write(b'\\x01' if obj else b'\\x00'), obj)[1]"


def _length_prefixed(length: Construct, compact: bool) -> Construct:
    """``n`` then ``n`` bytes (or ``n - 1`` for compact), absent when null."""
    if compact:
        return Struct("n" / length, "data" / If(this.n > 0, Bytes(this.n - 1)))
    return Struct("n" / length, "data" / If(this.n >= 0, Bytes(this.n)))


class KafkaString(Adapter):  # type: ignore[misc]
    """string / nullable string / compact string / compact nullable string."""

    def __init__(self, compact: bool, nullable: bool) -> None:
        super().__init__(_length_prefixed(UnsignedVarInt() if compact else Int16sb, compact))
        self.compact = compact
        self.nullable = nullable

    def _decode(self, obj: Any, context: Any, path: Any) -> str | None:
        if obj.data is None:
            if self.nullable and obj.n == (0 if self.compact else -1):
                return None
            raise WireDecodeError(f"invalid string length {obj.n}")
        if len(obj.data) != (obj.n - 1 if self.compact else obj.n):
            raise WireDecodeError("truncated string")
        return str(obj.data.decode("utf-8"))

    def _encode(self, obj: str | None, context: Any, path: Any) -> dict[str, Any]:
        if obj is None:
            if not self.nullable:
                raise ValueError("null written to a non-nullable string")
            return {"n": 0 if self.compact else -1, "data": None}
        data = obj.encode("utf-8")
        return {"n": len(data) + 1 if self.compact else len(data), "data": data}

    def _emitparse(self, code: Any) -> str:
        ensure_fast_imports(code)
        return f"read_string(io, {self.compact}, {self.nullable})"

    def _emitbuild(self, code: Any) -> str:
        ensure_fast_imports(code)
        if self.compact and self.nullable:  # a null is one zero byte: no call for it
            return ("(io.write(b'\\x00') if obj is None"
                    " else write_string(io, obj, True, True), obj)[1]")
        return f"(write_string(io, obj, {self.compact}, {self.nullable}), obj)[1]"


class KafkaBytes(Adapter):  # type: ignore[misc]
    """bytes / nullable bytes / compact bytes / compact nullable bytes (and records)."""

    def __init__(self, compact: bool, nullable: bool) -> None:
        super().__init__(_length_prefixed(UnsignedVarInt() if compact else Int32sb, compact))
        self.compact = compact
        self.nullable = nullable

    def _decode(self, obj: Any, context: Any, path: Any) -> bytes | None:
        if obj.data is None:
            if self.nullable and obj.n == (0 if self.compact else -1):
                return None
            raise WireDecodeError(f"invalid bytes length {obj.n}")
        if len(obj.data) != (obj.n - 1 if self.compact else obj.n):
            raise WireDecodeError("truncated bytes")
        return bytes(obj.data)

    def _encode(self, obj: bytes | None, context: Any, path: Any) -> dict[str, Any]:
        if obj is None:
            if not self.nullable:
                raise ValueError("null written to non-nullable bytes")
            return {"n": 0 if self.compact else -1, "data": None}
        return {"n": len(obj) + 1 if self.compact else len(obj), "data": bytes(obj)}

    def _emitparse(self, code: Any) -> str:
        ensure_fast_imports(code)
        return f"read_bytes(io, {self.compact}, {self.nullable})"

    def _emitbuild(self, code: Any) -> str:
        ensure_fast_imports(code)
        return f"(write_bytes(io, obj, {self.compact}, {self.nullable}), obj)[1]"


class KafkaUuid(Adapter):  # type: ignore[misc]
    """A 16-byte UUID as ``uuid.UUID``."""

    def __init__(self) -> None:
        super().__init__(Bytes(16))

    def _decode(self, obj: bytes, context: Any, path: Any) -> uuid.UUID:
        return uuid.UUID(bytes=bytes(obj))

    def _encode(self, obj: uuid.UUID, context: Any, path: Any) -> bytes:
        return obj.bytes

    def _emitparse(self, code: Any) -> str:
        ensure_fast_imports(code)
        return "read_uuid(io)"

    def _emitbuild(self, code: Any) -> str:
        ensure_fast_imports(code)
        return "(write_uuid(io, obj), obj)[1]"


class KafkaArray(Adapter):  # type: ignore[misc]
    """array / nullable array / compact array / compact nullable array of ``element``."""

    def __init__(self, element: Construct, compact: bool, nullable: bool) -> None:
        count = UnsignedVarInt() if compact else Int32sb
        if compact:
            inner = Struct("n" / count, "elements" / If(this.n > 0, Array(this.n - 1, element)))
        else:
            inner = Struct("n" / count, "elements" / If(this.n >= 0, Array(this.n, element)))
        super().__init__(inner)
        self.element = element
        self.compact = compact
        self.nullable = nullable

    def _decode(self, obj: Any, context: Any, path: Any) -> list[Any] | None:
        if obj["elements"] is None:
            if self.nullable and obj["n"] == (0 if self.compact else -1):
                return None
            raise WireDecodeError(f"invalid array length {obj['n']}")
        return list(obj["elements"])

    def _encode(self, obj: list[Any] | None, context: Any, path: Any) -> dict[str, Any]:
        if obj is None:
            if not self.nullable:
                raise ValueError("null written to a non-nullable array")
            return {"n": 0 if self.compact else -1, "elements": None}
        return {"n": len(obj) + 1 if self.compact else len(obj), "elements": list(obj)}

    def _emitparse(self, code: Any) -> str:
        ensure_fast_imports(code)
        fname = f"parse_kafka_array_{code.allocateId()}"
        code.append(
            f"def {fname}(io, this):\n"
            f"    n = read_array_count(io, {self.compact}, {self.nullable})\n"
            f"    if n < 0:\n"
            f"        return None\n"
            f"    return [{self.element._compileparse(code)} for _ in range(n)]\n"
        )
        return f"{fname}(io, this)"

    def _emitbuild(self, code: Any) -> str:
        ensure_fast_imports(code)
        fname = f"build_kafka_array_{code.allocateId()}"
        code.append(
            f"def {fname}(items, io, this):\n"
            f"    write_array_count(io, items, {self.compact}, {self.nullable})\n"
            f"    if items is not None:\n"
            f"        for obj in items:\n"
            f"            {self.element._compilebuild(code)}\n"
            f"    return items\n"
        )
        return f"{fname}(obj, io, this)"


def tagged_section() -> Construct:
    """The raw tagged-field section: a count, then (tag, size, data) entries."""
    entry = Struct("tag" / UnsignedVarInt(), "data" / Prefixed(UnsignedVarInt(), GreedyBytes))
    return PrefixedArray(UnsignedVarInt(), entry)
