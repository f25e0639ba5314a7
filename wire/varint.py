"""Kafka's unsigned varint, encoded without construct (``wire.fast_primitives`` and the
hand-coded paths share it)."""

from __future__ import annotations

__all__ = ["encode_uvarint"]


def encode_uvarint(value: int) -> bytes:
    """The bytes of an unsigned varint."""
    if value < 0:
        raise ValueError(f"unsigned varint cannot be negative: {value}")
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
