"""Shared helpers for the wire-layer oracle tests: the cases and the wire side (the kio side
is in kio_oracle.py).

* :class:`Case` enumerates every registered (api, version, direction).
* wire side: parse / build with the compiled or the reference construct (checking that
  every byte is consumed), a projection Container -> plain dict of the fields the version
  carries, and a Hypothesis strategy / samples driven by the wire schema itself (used where
  kio has no schema, and for compiled-vs-reference).
"""

from __future__ import annotations

import dataclasses
import datetime
import io
import itertools
import uuid
from functools import cache
from typing import Any

from hypothesis import strategies as st
from kio.index import (
    UnknownAPIKey,
    UnknownEntity,
    load_request_schema,
    load_response_schema,
)

import wire
from wire.registry import ApiSpec
from wire.schema import UNKNOWN_TAGS, Field, Message, message_struct

ZERO_UUID = uuid.UUID(int=0)
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
ONE_MS = datetime.timedelta(milliseconds=1)

# ---------------------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Case:
    """One registered (api, version, direction)."""

    spec: ApiSpec
    version: int
    direction: str  # "request" | "response"

    @property
    def message(self) -> Message:
        return self.spec.request if self.direction == "request" else self.spec.response

    @property
    def id(self) -> str:
        return f"{self.spec.name}-v{self.version}-{self.direction}"

    @property
    def flexible(self) -> bool:
        return self.message.is_flexible(self.version)

    @property
    def kio_class(self) -> type[Any] | None:
        return kio_class(self.spec.api_key, self.version, self.direction)


def all_cases() -> list[Case]:
    """Every registered (api, version, direction), in a stable order."""
    return [
        Case(spec, version, direction)
        for spec in wire.all_apis()
        for version in range(spec.min_version, spec.max_version + 1)
        for direction in ("request", "response")
    ]


@cache
def kio_class(api_key: int, version: int, direction: str) -> type[Any] | None:
    """kio's dataclass for the message, or None when kio has no such schema."""
    loader = load_request_schema if direction == "request" else load_response_schema
    try:
        return loader(api_key, version)
    except (UnknownAPIKey, UnknownEntity):
        return None


def kio_cases() -> list[Case]:
    return [c for c in all_cases() if c.kio_class is not None]


def non_kio_cases() -> list[Case]:
    return [c for c in all_cases() if c.kio_class is None]


# ---------------------------------------------------------------------------------------
# wire side
# ---------------------------------------------------------------------------------------


def wire_decode(case: Case, data: bytes, *, compiled: bool = True) -> Any:
    """Parse a message body; every byte must be consumed."""
    stream = io.BytesIO(data)
    out = message_struct(case.message, case.version, compiled).parse_stream(stream)
    assert stream.tell() == len(data), f"{len(data) - stream.tell()} trailing bytes"
    return out


def wire_encode(case: Case, obj: Any, *, compiled: bool = True) -> bytes:
    return bytes(message_struct(case.message, case.version, compiled).build(obj))


def present(fields: tuple[Field, ...], version: int) -> list[Field]:
    return [f for f in fields if f.present_in(version)]


def _is_struct_array(f: Field) -> bool:
    return f.type == "[]"


def to_plain(value: Any) -> Any:
    """Containers / dicts -> dict, lists -> list, recursively (construct-free values)."""
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items() if not str(k).startswith("_")}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    return value


def typed(value: Any) -> Any:
    """``value`` with every scalar paired with its type, so comparisons are type-strict
    (``True == 1`` and ``1 == 1.0`` do not hide a wrongly typed decode)."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [typed(v) for v in value]
    return (type(value).__name__, value)


def wire_project(obj: Any, fields: tuple[Field, ...], version: int) -> dict[str, Any]:
    """A decoded Container as a plain dict of only the fields the version carries (plus
    ``unknown_tagged_fields`` when present)."""
    out: dict[str, Any] = {}
    for f in present(fields, version):
        value = obj[f.name]
        if f.type == "struct" and value is not None:
            value = wire_project(value, f.fields, version)
        elif _is_struct_array(f) and value is not None:
            value = [wire_project(v, f.fields, version) for v in value]
        elif value is not None and f.type.startswith("[]"):
            value = list(value)
        out[f.name] = value
    if obj.get(UNKNOWN_TAGS):
        out[UNKNOWN_TAGS] = dict(obj[UNKNOWN_TAGS])
    return out


def assert_absent_at_defaults(obj: Any, fields: tuple[Field, ...], version: int) -> None:
    """Fields the version lacks are present in the Container at their defaults."""
    for f in fields:
        assert f.name in obj, f"decoded message lacks field {f.name!r}"
        value = obj[f.name]
        if not f.present_in(version):
            assert to_plain(value) == to_plain(f.default_value()), (
                f"absent field {f.name!r} is {value!r}, not its default"
            )
        elif f.type == "struct" and value is not None:
            assert_absent_at_defaults(value, f.fields, version)
        elif _is_struct_array(f) and value is not None:
            for v in value:
                assert_absent_at_defaults(v, f.fields, version)


INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "varint": (-(2**31), 2**31 - 1),
    "varlong": (-(2**63), 2**63 - 1),
    "uvarint": (0, 2**32 - 1),
}

SMALL_TEXT = st.text(max_size=4)
SMALL_BYTES = st.binary(max_size=4)


def _wire_scalar_strategy(f: Field, kind: str, nullable: bool) -> st.SearchStrategy[Any]:
    if kind in INT_RANGES:
        low, high = INT_RANGES[kind]
        base: st.SearchStrategy[Any] = st.integers(low, high)
    elif kind == "bool":
        base = st.booleans()
    elif kind == "float64":
        base = st.floats(allow_nan=False)
    elif kind == "string":
        base = SMALL_TEXT
    elif kind == "bytes":
        base = SMALL_BYTES
    elif kind == "records":
        return st.one_of(st.none(), st.binary(max_size=8))
    elif kind == "uuid":
        base = st.one_of(st.just(ZERO_UUID), st.uuids())
    else:  # pragma: no cover - a schema typo
        raise AssertionError(f"unknown wire type {kind!r} of {f.name}")
    return st.one_of(st.none(), base) if nullable else base


def wire_strategy(
    fields: tuple[Field, ...], version: int, flexible: bool, *, unknown_tags: bool = True
) -> st.SearchStrategy[dict[str, Any]]:
    """Dicts for the fields the version carries; flexible structs sometimes carry unknown
    tagged fields."""
    parts: dict[str, st.SearchStrategy[Any]] = {}
    for f in present(fields, version):
        nullable = f.nullable_in(version)
        if f.type == "struct":
            inner = wire_strategy(f.fields, version, flexible, unknown_tags=unknown_tags)
            parts[f.name] = st.one_of(st.none(), inner) if nullable else inner
        elif f.type.startswith("[]"):
            if f.type == "[]":
                element = wire_strategy(f.fields, version, flexible, unknown_tags=unknown_tags)
            else:
                element = _wire_scalar_strategy(f, f.type[2:], False)
            arr: st.SearchStrategy[Any] = st.lists(element, max_size=2)
            parts[f.name] = st.one_of(st.none(), arr) if nullable else arr
        else:
            scalar = _wire_scalar_strategy(f, f.type, nullable)
            parts[f.name] = st.one_of(st.just(f.default_value()), scalar)
    base = st.fixed_dictionaries(parts)
    if not (flexible and unknown_tags):
        return base
    known = {f.tag for f in present(fields, version) if f.is_tagged_in(version)}
    free = [t for t in (*range(8), 15, 16, 127, 128, 300) if t not in known]
    tags = st.dictionaries(st.sampled_from(free), SMALL_BYTES, max_size=2)
    return st.tuples(base, tags).map(lambda bt: {**bt[0], UNKNOWN_TAGS: bt[1]} if bt[1] else bt[0])


def _wire_full_scalar(f: Field, kind: str, n: int) -> Any:
    default = f.default_value()
    value: Any
    if kind in ("int8",):
        value = 1 + n % 100
    elif kind in ("int16", "uint16"):
        value = 300 + n
    elif kind in ("int32", "uint32", "varint", "uvarint"):
        value = 70_000 + 7 * n
    elif kind in ("int64", "varlong"):
        value = 2**40 + n
    elif kind == "bool":
        return not default
    elif kind == "float64":
        value = 1.5 + n
    elif kind == "string":
        return f"{f.name[:6]}{n}\u00e9"
    elif kind in ("bytes", "records"):
        return b"\x00b" + bytes([n % 256])
    elif kind == "uuid":
        return uuid.UUID(int=(0xABCDEF << 64) + n + 1)
    else:  # pragma: no cover
        raise AssertionError(kind)
    return value + 1 if value == default else value


def wire_full_sample(fields: tuple[Field, ...], version: int) -> dict[str, Any]:
    """Every field the version carries set to a distinct non-default, non-null value, every
    array with exactly one element."""
    counter = itertools.count(1)

    def build(fields: tuple[Field, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in present(fields, version):
            if f.type == "struct":
                out[f.name] = build(f.fields)
            elif f.type == "[]":
                out[f.name] = [build(f.fields)]
            elif f.type.startswith("[]"):
                out[f.name] = [_wire_full_scalar(f, f.type[2:], next(counter))]
            else:
                out[f.name] = _wire_full_scalar(f, f.type, next(counter))
        return out

    return build(fields)


def wire_minimal_sample(fields: tuple[Field, ...], version: int) -> dict[str, Any]:
    """Nullable fields null, arrays of primitives empty, arrays of structs one minimal
    element, every other field at its default."""
    out: dict[str, Any] = {}
    for f in present(fields, version):
        nullable = f.nullable_in(version) or f.type == "records"
        if nullable:
            out[f.name] = None
        elif f.type == "struct":
            out[f.name] = wire_minimal_sample(f.fields, version)
        elif f.type == "[]":
            out[f.name] = [wire_minimal_sample(f.fields, version)]
        elif f.type.startswith("[]"):
            out[f.name] = []
        else:
            out[f.name] = f.default_value()
    return out
