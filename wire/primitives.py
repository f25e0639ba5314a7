"""Kafka's primitive types as construct Adapters.

Each primitive is declared twice, on purpose:

* ``_decode`` / ``_encode`` over a plain construct definition that uses ``this`` for its
  length dependencies: the readable reference, used when a schema is not compiled;
* ``_emitparse`` / ``_emitbuild``, which ``Construct.compile()`` inlines as calls to the
  fast readers and writers of ``fast_primitives.py``. Construct's own compiled
  ``Bytes(this.n)`` does not check for short reads, so the fast path does, and counts are
  checked against what is left in the frame before anything is allocated.

The tests parse and build every schema both ways and compare.
"""

from __future__ import annotations

import uuid
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

from wire.fast_primitives import WireDecodeError, ensure_fast_imports

__all__ = [
    "KafkaArray",
    "KafkaBool",
    "KafkaBytes",
    "KafkaString",
    "KafkaUuid",
    "SignedVarInt",
    "SignedVarLong",
    "UnsignedVarInt",
]

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
