"""Declarative Kafka message schemas, turned into construct per version.

An API module describes its request and response as a :class:`Message`: a tree of
:class:`Field` that mirrors Kafka's JSON message schemas (``versions``,
``nullableVersions``, ``taggedVersions``/``tag``, defaults; declared in ``wire.fields``,
which needs no construct). :func:`message_struct` builds the construct for one version,
compiled and cached, on first use.

Decoded messages are construct ``Container``s (dicts with attribute access) holding
*every* field of the message, those absent from the version set to their defaults, so a
handler reads one model per API whatever the version. Encoding takes a dict, fills missing
fields with defaults and ignores fields the version does not carry. Tagged fields are
decoded into ordinary keys; unknown tags are kept under ``unknown_tagged_fields``
({tag: raw bytes}) and written back.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from functools import cache
from io import BytesIO
from typing import Any

from construct import (
    Adapter,
    Construct,
    Container,
    Float64b,
    If,
    Int8sb,
    Int16sb,
    Int16ub,
    Int32sb,
    Int32ub,
    Int64sb,
    Struct,
    this,
)

from wire.fast_primitives import WireDecodeError, ensure_fast_imports, read_uvarint
from wire.fields import Field, Message, VersionRange, versions
from wire.kafka_uuid import ZERO_UUID
from wire.primitives import (
    KafkaArray,
    KafkaBool,
    KafkaBytes,
    KafkaString,
    KafkaUuid,
    SignedVarInt,
    SignedVarLong,
    UnsignedVarInt,
    tagged_section,
)
from wire.varint import encode_uvarint

__all__ = ["UNKNOWN_TAGS", "Field", "Message", "VersionRange", "message_struct", "versions"]

UNKNOWN_TAGS = "unknown_tagged_fields"

_SCALARS: dict[str, Callable[[], Construct]] = {
    "int8": lambda: Int8sb,
    "int16": lambda: Int16sb,
    "int32": lambda: Int32sb,
    "int64": lambda: Int64sb,
    "uint16": lambda: Int16ub,
    "uint32": lambda: Int32ub,
    "float64": lambda: Float64b,
    "bool": KafkaBool,
    "varint": SignedVarInt,
    "varlong": SignedVarLong,
    "uvarint": UnsignedVarInt,
    "uuid": KafkaUuid,
}


def field_construct(field: Field, version: int, flexible: bool) -> Construct:
    """The construct for one field's value at a version."""
    nullable = field.nullable_in(version)
    flexible = flexible and field.compact
    kind = field.type
    if kind == "struct":
        struct = KafkaStruct(field.fields, version, flexible)
        return KafkaNullableStruct(struct) if nullable else struct
    if kind.startswith("[]"):
        element_type = kind[2:]
        if element_type:
            element = field_construct(Field(field.name, element_type), version, flexible)
        else:
            element = KafkaStruct(field.fields, version, flexible)
        return KafkaArray(element, compact=flexible, nullable=nullable)
    if kind == "string":
        return KafkaString(compact=flexible, nullable=nullable)
    if kind == "bytes":
        return KafkaBytes(compact=flexible, nullable=nullable)
    if kind == "records":
        return KafkaBytes(compact=flexible, nullable=True)
    return _SCALARS[kind]()


class KafkaStruct(Adapter):  # type: ignore[misc]
    """A Kafka struct at one version: its regular fields in order, then (when flexible)
    the tagged section. Decodes to a Container with every field of the schema."""

    def __init__(self, fields: tuple[Field, ...], version: int, flexible: bool) -> None:
        self.fields = fields
        self.version = version
        self.flexible = flexible
        self.regular = [
            (f.name, field_construct(f, version, flexible))
            for f in fields
            if f.present_in(version) and not (flexible and f.is_tagged_in(version))
        ]
        self.tagged: dict[int, tuple[Field, Construct]] = {
            f.tag: (f, field_construct(f, version, flexible))
            for f in fields
            if f.tag is not None and flexible and f.present_in(version) and f.is_tagged_in(version)
        }
        self.absent = [f for f in fields if not f.present_in(version)]
        self.tag_order = sorted(self.tagged)
        subcons = [name / sc for name, sc in self.regular]
        if flexible:
            subcons.append("_tags" / tagged_section())
        super().__init__(Struct(*subcons))

    # -- reference path ----------------------------------------------------------------

    def _decode(self, obj: Any, context: Any, path: Any) -> Container:
        out = Container()
        for name, _ in self.regular:
            out[name] = obj[name]
        for f in self.absent:
            out[f.name] = f.default_value()
        for tag in self.tag_order:
            f, _ = self.tagged[tag]
            out[f.name] = f.default_value()
        if self.flexible:
            previous = -1
            unknown: dict[int, bytes] = {}
            for entry in obj["_tags"]:
                tag = entry.tag
                if tag <= previous:
                    raise WireDecodeError(f"tag {tag} out of order")
                previous = tag
                if tag in self.tagged:
                    f, sc = self.tagged[tag]
                    sub = BytesIO(entry.data)
                    out[f.name] = sc.parse_stream(sub)
                    if sub.tell() != len(entry.data):
                        raise WireDecodeError(f"tagged field {tag} has trailing bytes")
                else:
                    unknown[tag] = bytes(entry.data)
            if unknown:
                out[UNKNOWN_TAGS] = unknown
        return out

    def _encode(self, obj: Any, context: Any, path: Any) -> dict[str, Any]:
        inner: dict[str, Any] = {}
        for f in self.fields:
            if f.present_in(self.version) and f.tag not in self.tagged:
                inner[f.name] = obj[f.name] if f.name in obj else f.default_value()
        if self.flexible:
            entries: dict[int, bytes] = dict(obj.get(UNKNOWN_TAGS) or {})
            for tag in self.tag_order:
                f, sc = self.tagged[tag]
                value = obj.get(f.name, None) if f.name in obj else f.default_value()
                if value != f.default_value():
                    entries[tag] = sc.build(value)
            inner["_tags"] = [{"tag": t, "data": entries[t]} for t in sorted(entries)]
        return inner

    # -- compiled path ---------------------------------------------------------------

    def _emitparse(self, code: Any) -> str:
        ensure_fast_imports(code)
        ident = code.allocateId()
        fname = f"parse_kafka_struct_{ident}"
        code.linkedinstances[id(self)] = self
        lines = [f"def {fname}(io, this):", "    r = Container()"]
        for name, sc in self.regular:
            lines.append(f"    r[{name!r}] = {sc._compileparse(code)}")
        for f in self.absent:
            lines.append(f"    r[{f.name!r}] = {_default_source(f)}")
        if self.flexible:
            for tag in self.tag_order:
                f, sc = self.tagged[tag]
                lines.append(f"    r[{f.name!r}] = {_default_source(f)}")
                tag_fn = f"parse_kafka_tag_{ident}_{tag}"
                code.append(f"def {tag_fn}(io, this):\n    return {sc._compileparse(code)}\n")
            known = ", ".join(
                f"{tag}: ({self.tagged[tag][0].name!r}, parse_kafka_tag_{ident}_{tag})"
                for tag in self.tag_order
            )
            code.append(f"known_tags_{ident} = {{{known}}}")
            lines.append(f"    read_tagged_fields(io, this, r, known_tags_{ident})")
        lines.append("    return r")
        code.append("from wire.schema import read_tagged_fields, write_tagged_fields")
        code.append("\n".join(lines) + "\n")
        return f"{fname}(io, this)"

    def _emitbuild(self, code: Any) -> str:
        ensure_fast_imports(code)
        ident = code.allocateId()
        fname = f"build_kafka_struct_{ident}"
        lines = [f"def {fname}(objdict, io, this):"]
        for f in self.fields:
            if not f.present_in(self.version) or f.tag in self.tagged:
                continue
            sc = dict(self.regular)[f.name]
            lines.append(
                f"    obj = objdict[{f.name!r}] if {f.name!r} in objdict else {_default_source(f)}"
            )
            lines.append(f"    {sc._compilebuild(code)}")
        if self.flexible:
            known = []
            for tag in self.tag_order:
                f, sc = self.tagged[tag]
                tag_fn = f"build_kafka_tag_{ident}_{tag}"
                code.append(f"def {tag_fn}(obj, io, this):\n    {sc._compilebuild(code)}\n")
                known.append(f"({tag}, {f.name!r}, {_default_source(f)}, {tag_fn})")
            code.append(f"known_build_tags_{ident} = [{', '.join(known)}]")
            lines.append(f"    write_tagged_fields(io, this, objdict, known_build_tags_{ident})")
        lines.append("    return objdict")
        code.append("from wire.schema import read_tagged_fields, write_tagged_fields")
        code.append("\n".join(lines) + "\n")
        return f"{fname}(obj, io, this)"


class KafkaNullableStruct(Adapter):  # type: ignore[misc]
    """A nullable struct (Kafka's ``nullableVersions`` on a struct field): an int8 marker,
    -1 for null and 1 for present, then the struct."""

    def __init__(self, inner: KafkaStruct) -> None:
        super().__init__(Struct("present" / Int8sb, "value" / If(this.present >= 0, inner)))
        self.inner = inner

    def _decode(self, obj: Any, context: Any, path: Any) -> Any:
        return None if obj["present"] < 0 else obj["value"]

    def _encode(self, obj: Any, context: Any, path: Any) -> dict[str, Any]:
        return {"present": -1, "value": None} if obj is None else {"present": 1, "value": obj}

    def _emitparse(self, code: Any) -> str:
        ensure_fast_imports(code)
        fname = f"parse_kafka_nullable_struct_{code.allocateId()}"
        code.append(
            f"def {fname}(io, this):\n"
            f"    marker = io.read(1)\n"
            f"    if len(marker) != 1:\n"
            f"        raise WireDecodeError('nullable struct marker missing')\n"
            f"    if marker[0] >= 0x80:\n"
            f"        return None\n"
            f"    return {self.inner._compileparse(code)}\n"
        )
        code.append("from wire.fast_primitives import WireDecodeError")
        return f"{fname}(io, this)"

    def _emitbuild(self, code: Any) -> str:
        ensure_fast_imports(code)
        fname = f"build_kafka_nullable_struct_{code.allocateId()}"
        code.append(
            f"def {fname}(obj, io, this):\n"
            f"    if obj is None:\n"
            f"        io.write(b'\\xff')\n"
            f"        return obj\n"
            f"    io.write(b'\\x01')\n"
            f"    {self.inner._compilebuild(code)}\n"
            f"    return obj\n"
        )
        return f"{fname}(obj, io, this)"


def _default_source(field: Field) -> str:
    """Python source that evaluates to a fresh default value of the field."""
    value = field.default_value()
    return _literal(value)


def _literal(value: Any) -> str:
    if isinstance(value, uuid.UUID):
        return "ZERO_UUID" if value == ZERO_UUID else f"UUID({str(value)!r})"
    if isinstance(value, dict):
        items = ", ".join(f"{k!r}: {_literal(v)}" for k, v in value.items())
        return f"Container({{{items}}})"
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    return repr(value)


def read_tagged_fields(
    io: BytesIO, this: Any, out: Container, known: dict[int, tuple[str, Any]]
) -> None:
    """Read a tagged section into ``out``: known tags by their parser, unknown kept raw."""
    count = read_uvarint(io)
    previous = -1
    unknown: dict[int, bytes] | None = None
    for _ in range(count):
        tag = read_uvarint(io)
        if tag <= previous:
            raise WireDecodeError(f"tag {tag} out of order")
        previous = tag
        size = read_uvarint(io)
        data = io.read(size)
        if len(data) != size:
            raise WireDecodeError("truncated tagged field")
        entry = known.get(tag)
        if entry is None:
            if unknown is None:
                unknown = {}
            unknown[tag] = data
        else:
            sub = BytesIO(data)
            out[entry[0]] = entry[1](sub, this)
            if sub.tell() != size:
                raise WireDecodeError(f"tagged field {tag} has trailing bytes")
    if unknown:
        out[UNKNOWN_TAGS] = unknown


def write_tagged_fields(
    io: BytesIO, this: Any, obj: Any, known: list[tuple[int, str, Any, Any]]
) -> None:
    """Write the tagged section: known fields that differ from their default, plus the
    unknown tags a decoded message carried, in tag order."""
    unknown = obj.get(UNKNOWN_TAGS)
    if not known and not unknown:
        io.write(b"\x00")
        return
    entries: dict[int, bytes] = dict(unknown) if unknown else {}
    for tag, name, default, builder in known:
        value = obj.get(name, default)
        if value != default:
            sub = BytesIO()
            builder(value, sub, this)
            entries[tag] = sub.getvalue()
    io.write(encode_uvarint(len(entries)))
    for tag in sorted(entries):
        data = entries[tag]
        io.write(encode_uvarint(tag))
        io.write(encode_uvarint(len(data)))
        io.write(data)


@cache
def message_struct(message: Message, version: int, compiled: bool = True) -> Construct:
    """The construct for ``message`` at ``version`` (compiled unless asked otherwise)."""
    if version not in message.version_range:
        raise ValueError(f"{message.name} has no version {version}")
    struct = KafkaStruct(message.fields, version, message.is_flexible(version))
    return struct.compile() if compiled else struct
