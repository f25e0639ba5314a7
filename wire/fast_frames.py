"""Reading and writing Kafka's primitive types without construct, for the hand-coded
request decoders and response encoders of the hot APIs (``wire/apis/offset_commit.py``,
``wire/apis/heartbeat.py``; dispatched by ``wire/fast_codec.py``).

The readers take ``(data, pos)`` and return ``(value, next pos)``; they raise ``Malformed``
(or IndexError/UnicodeDecodeError/struct.error) on anything they do not handle, and the
caller then leaves the frame to the construct codec, which decodes it or reports it the
codec's way. Only the well-formed, common shapes are read here: no tagged fields, no null
where the schema allows none.
"""

from __future__ import annotations

import struct

from wire.varint import encode_uvarint

__all__ = [
    "I16",
    "I32",
    "I64",
    "REQUEST_PREFIX",
    "UNKNOWN_TAGS",
    "Malformed",
    "array_count",
    "compact_string",
    "encode_compact_string",
    "encode_string",
    "message_end",
    "no_tags",
    "nullable_compact_string",
    "nullable_string",
    "request_header_end",
    "string",
    "uvarint",
]

I16 = struct.Struct(">h")
I32 = struct.Struct(">i")
I64 = struct.Struct(">q")
REQUEST_PREFIX = struct.Struct(">hhi")
#: ``wire.schema.UNKNOWN_TAGS`` (that module loads construct): the key under which decoded
#: messages keep tagged fields the schema does not name.
UNKNOWN_TAGS = "unknown_tagged_fields"


class Malformed(ValueError):
    """A shape the hand-coded path leaves to the construct codec."""


def uvarint(data: bytes, pos: int) -> tuple[int, int]:
    """An unsigned varint of at most five bytes."""
    byte = data[pos]
    if byte < 0x80:
        return byte, pos + 1
    value = byte & 0x7F
    shift = 7
    pos += 1
    while shift < 35:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
    raise Malformed("varint too long")


def _take(data: bytes, pos: int, size: int) -> str:
    end = pos + size
    if end > len(data):
        raise Malformed("truncated")
    return data[pos:end].decode("utf-8")


def string(data: bytes, pos: int) -> tuple[str, int]:
    """An int16-length string (not null)."""
    (size,) = I16.unpack_from(data, pos)
    if size < 0:
        raise Malformed("null string")
    pos += 2
    return _take(data, pos, size), pos + size


def nullable_string(data: bytes, pos: int) -> tuple[str | None, int]:
    """An int16-length string, -1 for null."""
    (size,) = I16.unpack_from(data, pos)
    pos += 2
    if size < 0:
        if size != -1:
            raise Malformed("negative string length")
        return None, pos
    return _take(data, pos, size), pos + size


def compact_string(data: bytes, pos: int) -> tuple[str, int]:
    """A uvarint(length + 1) string (not null)."""
    size = data[pos]
    if 0 < size < 0x80:  # the usual one-byte length, read here
        return _take(data, pos + 1, size - 1), pos + size
    size, pos = uvarint(data, pos)
    if size == 0:
        raise Malformed("null string")
    size -= 1
    return _take(data, pos, size), pos + size


def nullable_compact_string(data: bytes, pos: int) -> tuple[str | None, int]:
    """A uvarint(length + 1) string, 0 for null."""
    size = data[pos]
    if size < 0x80:  # the usual one-byte length (or null), read here
        if size == 0:
            return None, pos + 1
        return _take(data, pos + 1, size - 1), pos + size
    size, pos = uvarint(data, pos)
    if size == 0:
        return None, pos
    size -= 1
    return _take(data, pos, size), pos + size


def array_count(data: bytes, pos: int, flexible: bool) -> tuple[int, int]:
    """An array's length (int32, or uvarint(length + 1) when flexible; not null)."""
    if flexible:
        count, pos = uvarint(data, pos)
        count -= 1
    else:
        (count,) = I32.unpack_from(data, pos)
        pos += 4
    if count < 0:
        raise Malformed("null array")
    return count, pos


def no_tags(data: bytes, pos: int) -> int:
    """Past a struct's empty tagged-field section (flexible versions)."""
    if data[pos] != 0:
        raise Malformed("tagged fields")
    return pos + 1


def message_end(data: bytes, pos: int, flexible: bool) -> None:
    """The message's own tagged fields (none) and nothing after them."""
    if flexible:
        pos = no_tags(data, pos)
    if pos != len(data):
        raise Malformed("trailing bytes")


def request_header_end(data: bytes, flexible: bool) -> tuple[str | None, int]:
    """The client id and where the body starts (request header v1, or v2 when flexible;
    header tagged fields are left to the codec)."""
    client_id, pos = nullable_string(data, REQUEST_PREFIX.size)
    if flexible:
        pos = no_tags(data, pos)
    return client_id, pos


def encode_string(value: str) -> bytes:
    """An int16-length string."""
    data = value.encode("utf-8")
    if len(data) > 0x7FFF:
        raise Malformed("string too long")
    return I16.pack(len(data)) + data


def encode_compact_string(value: str) -> bytes:
    """A uvarint(length + 1) string."""
    data = value.encode("utf-8")
    return encode_uvarint(len(data) + 1) + data
