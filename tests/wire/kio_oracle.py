"""Shared helpers for the wire-layer oracle tests, kio side (the cases and the wire side are
in oracle.py): a Hypothesis strategy and deterministic "full" / "minimal" samples built by
walking kio's dataclasses (``metadata["kafka_type"]``), kio encode / decode, and a normalizer
kio object -> plain dict keyed by kcoord's field names.
"""

from __future__ import annotations

import dataclasses
import datetime
import io
import itertools
import uuid
from collections.abc import Iterator
from dataclasses import MISSING
from functools import cache
from typing import Any

from hypothesis import strategies as st
from kio.schema.errors import ErrorCode
from kio.serial import entity_reader, entity_writer
from kio.serial._introspect import (
    EntityField,
    EntityTupleField,
    PrimitiveTupleField,
    classify_field,
    get_field_tag,
    is_optional,
)
from kio.static.primitive import i32Timedelta, i64Timedelta
from oracle import EPOCH, INT_RANGES, ONE_MS, SMALL_BYTES, SMALL_TEXT, ZERO_UUID, present

from wire.schema import Field


def kio_encode(obj: Any) -> bytes:
    buffer = io.BytesIO()
    entity_writer(type(obj))(buffer, obj)
    return buffer.getvalue()


def kio_decode(cls: type[Any], data: bytes) -> Any:
    obj, size = entity_reader(cls)(data, 0)
    assert size == len(data), f"kio consumed {size} of {len(data)} bytes"
    return obj


_TIME_TYPES = ("timedelta_i32", "timedelta_i64", "datetime_i64")


def _kafka_type(kf: dataclasses.Field[Any]) -> str | None:
    value = kf.metadata.get("kafka_type")
    return value if isinstance(value, str) else None


@cache
def field_pairs(
    cls: type[Any], fields: tuple[Field, ...], version: int
) -> tuple[tuple[dataclasses.Field[Any], Field], ...]:
    """Pair kio's dataclass fields with wire's fields present at ``version``. kio drops the
    ``_ms`` suffix of timedelta / datetime fields; every other name must match exactly and
    both sides must have the same fields."""
    by_name = {f.name: f for f in present(fields, version)}
    pairs = []
    for kf in dataclasses.fields(cls):
        wf = by_name.get(kf.name)
        if wf is None and _kafka_type(kf) in _TIME_TYPES:
            wf = by_name.get(kf.name + "_ms")
        assert wf is not None, (
            f"{cls.__qualname__}.{kf.name} has no wire field (wire has {sorted(by_name)})"
        )
        pairs.append((kf, wf))
    matched = {wf.name for _, wf in pairs}
    extra = sorted(set(by_name) - matched)
    assert not extra, f"wire fields {extra} at v{version} are not in kio's {cls.__qualname__}"
    return tuple(pairs)


def ms_of_timedelta(value: datetime.timedelta) -> int:
    return value // ONE_MS


def _kio_scalar(kind: str | None, value: Any) -> Any:
    if value is None:
        if kind == "uuid":
            return ZERO_UUID  # kio reads the all-zero UUID as None
        if kind == "datetime_i64":
            return -1  # kio's nullable datetime: -1 on the wire
        return None
    if kind == "error_code":
        return int(value.value)
    if kind in ("timedelta_i32", "timedelta_i64"):
        return ms_of_timedelta(value)
    if kind == "datetime_i64":
        return ms_of_timedelta(value - EPOCH)
    if kind == "bool":
        return bool(value)
    if kind == "string":
        return str(value)
    if kind in ("bytes", "records"):
        return bytes(value)
    if kind == "uuid":
        return value
    if kind == "float64":
        return float(value)
    assert kind is not None and (kind.startswith("int") or kind.startswith("uint")), kind
    return int(value)


def kio_value(kf: dataclasses.Field[Any], wf: Field, value: Any, version: int) -> Any:
    """One kio field value, normalized to what wire decodes."""
    shape = classify_field(kf)
    kind = _kafka_type(kf)
    if isinstance(shape, EntityTupleField):
        if value is None:
            return None
        return [kio_to_wire(v, wf.fields, version) for v in value]
    if isinstance(shape, EntityField):
        return None if value is None else kio_to_wire(value, wf.fields, version)
    if isinstance(shape, PrimitiveTupleField):
        return None if value is None else [_kio_scalar(kind, v) for v in value]
    return _kio_scalar(kind, value)


def kio_to_wire(obj: Any, fields: tuple[Field, ...], version: int) -> dict[str, Any]:
    """A kio object as the plain dict wire decodes (kcoord names, ints for times and
    error codes, lists, zero UUID for kio's None)."""
    return {
        wf.name: kio_value(kf, wf, getattr(obj, kf.name), version)
        for kf, wf in field_pairs(type(obj), fields, version)
    }


# -- strategies and samples built from kio's dataclasses --------------------------------


def _timedelta_ok(ms: int) -> bool:
    delta = datetime.timedelta(milliseconds=ms)
    return round(delta.total_seconds() * 1000) == ms


def _kio_primitive_strategy(kind: str | None, name: str) -> st.SearchStrategy[Any]:
    if kind in INT_RANGES:
        low, high = INT_RANGES[kind]
        return st.integers(low, high)
    if kind == "bool":
        return st.booleans()
    if kind == "float64":
        return st.floats(allow_nan=False)
    if kind == "string":
        return SMALL_TEXT
    if kind in ("bytes", "records"):
        return SMALL_BYTES
    if kind == "uuid":
        # Zero is kio's None: generate None for it (covered by explicit edge tests).
        return st.uuids().filter(lambda u: u.int != 0)
    if kind == "error_code":
        return st.sampled_from(list(ErrorCode))
    if kind == "timedelta_i32":
        return st.integers(-(2**31), 2**31 - 1).map(
            lambda ms: i32Timedelta.parse(datetime.timedelta(milliseconds=ms))
        )
    if kind == "timedelta_i64":
        return (
            st.integers(-(2**45), 2**45)
            .filter(_timedelta_ok)
            .map(lambda ms: i64Timedelta.parse(datetime.timedelta(milliseconds=ms)))
        )
    if kind == "datetime_i64":
        return st.integers(0, 2**42).map(lambda ms: EPOCH + datetime.timedelta(milliseconds=ms))
    raise AssertionError(f"no strategy for kafka_type {kind!r} of {name}")


def _kio_field_strategy(kf: dataclasses.Field[Any]) -> st.SearchStrategy[Any]:
    shape = classify_field(kf)
    optional = is_optional(kf)
    kind = _kafka_type(kf)
    base: st.SearchStrategy[Any]
    if isinstance(shape, EntityTupleField):
        base = st.lists(kio_strategy(shape.type_), max_size=2).map(tuple)
    elif isinstance(shape, EntityField):
        base = kio_strategy(shape.type_)
    elif isinstance(shape, PrimitiveTupleField):
        base = st.lists(_kio_primitive_strategy(kind, kf.name), max_size=3).map(tuple)
    else:
        base = _kio_primitive_strategy(kind, kf.name)
        default = _kio_default(kf)
        if default is not MISSING and default is not None:
            # Defaults decide whether tagged fields are written: draw them often.
            base = st.one_of(st.just(default), base)
    return st.one_of(st.none(), base) if optional else base


@cache
def kio_strategy(cls: type[Any]) -> st.SearchStrategy[Any]:
    """Instances of a kio dataclass, small strings and arrays."""
    return st.builds(cls, **{kf.name: _kio_field_strategy(kf) for kf in dataclasses.fields(cls)})


def _kio_default(kf: dataclasses.Field[Any]) -> Any:
    if kf.default is not MISSING:
        return kf.default
    if kf.default_factory is not MISSING:
        return kf.default_factory()
    return MISSING


def _kio_full_scalar(kf: dataclasses.Field[Any], kind: str | None, n: int) -> Any:
    default = _kio_default(kf)
    if kind == "bool":
        return not default if default is not MISSING else True
    if kind == "string":
        return f"{kf.name[:6]}{n}\u00e9"
    if kind in ("bytes", "records"):
        return b"\x00b" + bytes([n % 256])
    if kind == "uuid":
        return uuid.UUID(int=(0xABCDEF << 64) + n + 1)
    if kind == "error_code":
        codes = [c for c in ErrorCode if c.value > 0]
        return codes[n % len(codes)]
    if kind in ("timedelta_i32", "timedelta_i64"):
        cls = i32Timedelta if kind == "timedelta_i32" else i64Timedelta
        return cls.parse(datetime.timedelta(milliseconds=5_000 + n))
    if kind == "datetime_i64":
        return EPOCH + datetime.timedelta(milliseconds=1_700_000_000_000 + n)
    if kind == "float64":
        return 1.5 + n if default is MISSING or default != 1.5 + n else 2.5 + n
    value = {"int8": 1 + n % 100, "int16": 300 + n, "uint16": 300 + n,
             "int32": 70_000 + 7 * n}.get(kind or "", 2**40 + n)
    return value + 1 if value == default else value


def kio_full_sample(cls: type[Any]) -> Any:
    """Every field non-null and non-default (distinct values), every array one element."""
    counter = itertools.count(1)

    def build(cls: type[Any]) -> Any:
        kwargs: dict[str, Any] = {}
        for kf in dataclasses.fields(cls):
            shape = classify_field(kf)
            kind = _kafka_type(kf)
            if isinstance(shape, EntityTupleField):
                kwargs[kf.name] = (build(shape.type_),)
            elif isinstance(shape, EntityField):
                kwargs[kf.name] = build(shape.type_)
            elif isinstance(shape, PrimitiveTupleField):
                kwargs[kf.name] = (_kio_full_scalar(kf, kind, next(counter)),)
            else:
                kwargs[kf.name] = _kio_full_scalar(kf, kind, next(counter))
        return cls(**kwargs)

    return build(cls)


def kio_implicit_default(kf: dataclasses.Field[Any]) -> Any:
    """Kafka's implicit default of a field without an explicit one, as kio values."""
    shape = classify_field(kf)
    kind = _kafka_type(kf)
    if isinstance(shape, EntityTupleField | PrimitiveTupleField):
        return ()
    if isinstance(shape, EntityField):
        return kio_default_entity(shape.type_)
    return {
        "bool": False,
        "string": "",
        "bytes": b"",
        "records": None,
        "uuid": None,
        "error_code": ErrorCode.none,
        "timedelta_i32": i32Timedelta.parse(datetime.timedelta(0)),
        "timedelta_i64": i64Timedelta.parse(datetime.timedelta(0)),
        "datetime_i64": None,
    }.get(kind or "", 0)


def kio_default_entity(cls: type[Any]) -> Any:
    """A struct with every field at its (explicit or implicit) default: arrays empty."""
    kwargs: dict[str, Any] = {}
    for kf in dataclasses.fields(cls):
        if kf.default is not MISSING:
            kwargs[kf.name] = kf.default
        elif kf.default_factory is not MISSING:
            kwargs[kf.name] = kf.default_factory()
        else:
            kwargs[kf.name] = kio_implicit_default(kf)
    return cls(**kwargs)


def kio_minimal_sample(cls: type[Any]) -> Any:
    """Nullable fields null, arrays of primitives empty, arrays of structs one minimal
    element (so nested defaults are exercised), everything else at its default."""
    kwargs: dict[str, Any] = {}
    for kf in dataclasses.fields(cls):
        shape = classify_field(kf)
        if _kafka_type(kf) == "datetime_i64" and get_field_tag(kf) is None:
            # kio reads a -1 timestamp as a null datetime but cannot write None back
            # (DescribeTransactions' TransactionStartTimeMs): the epoch stands in.
            kwargs[kf.name] = EPOCH
        elif is_optional(kf) and get_field_tag(kf) is None:
            kwargs[kf.name] = None
        elif isinstance(shape, EntityTupleField):
            kwargs[kf.name] = (kio_minimal_sample(shape.type_),)
        elif isinstance(shape, PrimitiveTupleField):
            kwargs[kf.name] = ()
        elif _kafka_type(kf) == "records":
            # Kafka's JSON makes ShareFetch's Records nullable but kio's class does not
            # accept None: empty records stand in.
            kwargs[kf.name] = b""
        else:
            default = _kio_default(kf)
            kwargs[kf.name] = default if default is not MISSING else kio_implicit_default(kf)
    return cls(**kwargs)


def iter_kio_fields(
    cls: type[Any], fields: tuple[Field, ...], version: int
) -> Iterator[tuple[str, dataclasses.Field[Any], Field]]:
    """(path, kio field, wire field) for every field of a kio class, recursively."""
    for kf, wf in field_pairs(cls, fields, version):
        path = f"{cls.__qualname__}.{kf.name}"
        yield path, kf, wf
        shape = classify_field(kf)
        if isinstance(shape, EntityField | EntityTupleField):
            yield from iter_kio_fields(shape.type_, wf.fields, version)
