"""Declarative Kafka message schemas: :class:`Field` and :class:`Message` mirror Kafka's JSON
message schemas (``versions``, ``nullableVersions``, ``taggedVersions``/``tag``, defaults).

Construct-free, so the API modules and the registry (the ApiVersions table) load without
building or importing any codec (startup time: construct's import alone is 20-50 ms);
``wire.schema`` turns these declarations into construct per version.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import uuid

    from construct import Container

__all__ = ["NO_VERSIONS", "Field", "Message", "VersionRange", "versions", "zero_uuid"]


def zero_uuid() -> uuid.UUID:
    """The all-zero UUID, a uuid field's default (``wire.kafka_uuid`` is imported on first
    use: ``uuid``, with ``platform``, costs 2-20 ms of startup)."""
    from wire.kafka_uuid import ZERO_UUID

    return ZERO_UUID


#: The value of an absent scalar field, by Kafka type name.
SCALAR_DEFAULTS: dict[str, Any] = {
    "int8": 0,
    "int16": 0,
    "int32": 0,
    "int64": 0,
    "uint16": 0,
    "uint32": 0,
    "float64": 0.0,
    "bool": False,
    "varint": 0,
    "varlong": 0,
    "uvarint": 0,
}


@dataclass(frozen=True, slots=True)
class VersionRange:
    """An inclusive range of versions; ``high`` of None means open ended ("3+")."""

    low: int
    high: int | None

    def __contains__(self, version: object) -> bool:
        return (
            isinstance(version, int)
            and version >= self.low
            and (self.high is None or version <= self.high)
        )


NO_VERSIONS = VersionRange(1, 0)


@cache
def versions(spec: str) -> VersionRange:
    """Parse Kafka's version notation: "0+", "3-5", "7", "none"."""
    if spec == "none":
        return NO_VERSIONS
    if spec.endswith("+"):
        return VersionRange(int(spec[:-1]), None)
    if "-" in spec:
        low, high = spec.split("-")
        return VersionRange(int(low), int(high))
    return VersionRange(int(spec), int(spec))


@dataclass(frozen=True)
class Field:
    """One field, as in Kafka's JSON: ``type`` is a Kafka type name ("int32", "string",
    "bytes", "records", "uuid", ...), "[]T" for an array of a primitive, "[]" for an array
    of structs given by ``fields``, or "struct" for a single struct."""

    name: str
    type: str
    versions: str = "0+"
    nullable: str = "none"
    default: Any = None
    tag: int | None = None
    tagged: str = "none"
    fields: tuple[Field, ...] = ()
    compact: bool = True  # False: Kafka's field-level "flexibleVersions": "none"

    def present_in(self, version: int) -> bool:
        """Whether the field exists (regular or tagged) at this version."""
        return version in versions(self.versions)

    def is_tagged_in(self, version: int) -> bool:
        """Whether the field lives in the tagged section at this version."""
        return self.tag is not None and version in versions(self.tagged)

    def nullable_in(self, version: int) -> bool:
        """Whether null is allowed at this version."""
        return version in versions(self.nullable)

    def default_value(self) -> Any:
        """The value a decoded message holds when the field is absent (a fresh copy)."""
        if self.type == "struct":
            return None if self.default == "null" else _struct_defaults(self.fields)
        if self.type.startswith("[]"):
            return None if self.default == "null" else []
        if self.default == "null":
            return None
        if self.default is not None:
            return self.default
        if self.type in ("string",):
            return ""
        if self.type == "bytes":
            return b""
        if self.type == "records":
            return None
        if self.type == "uuid":
            return zero_uuid()
        return SCALAR_DEFAULTS[self.type]


def _struct_defaults(fields: tuple[Field, ...]) -> Container:
    from construct import Container  # decoded messages are Containers; built on first use

    return Container({f.name: f.default_value() for f in fields})


@dataclass(frozen=True, eq=False)  # identity hash: message_struct's cache key, hashed per call
class Message:
    """A request or response schema: ``valid`` and ``flexible`` are version specs."""

    name: str
    api_key: int
    valid: str
    flexible: str
    fields: tuple[Field, ...]

    def is_flexible(self, version: int) -> bool:
        """Flexible versions use compact encodings, tagged fields and header v2 / v1."""
        return version in versions(self.flexible)

    @cached_property
    def version_range(self) -> range:
        """Every valid version (computed once)."""
        return self.versions()

    def versions(self) -> range:
        """Every valid version."""
        rng = versions(self.valid)
        assert rng.high is not None, "valid versions must be bounded"
        return range(rng.low, rng.high + 1)

