"""Records as field dicts and back: the generic mapping between the dataclasses of
:mod:`storage.records` and the messages of :mod:`storage.record_schemas`.

Field names are the same on both sides, so nothing is translated by hand: a converter per
dataclass is built once from its type hints (nested dataclasses in tuples become lists of
dicts, tuples of scalars become lists) and reused.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["from_fields", "to_fields"]

_Convert = Callable[[Any], Any]


def _identity(value: Any) -> Any:
    return value


_Converters = tuple[tuple[str, _Convert, _Convert], ...]
_CONVERTERS: dict[type, _Converters] = {}


def _converters(cls: type) -> _Converters:
    """(field name, to-dict converter, from-dict converter) per field of ``cls``."""
    found = _CONVERTERS.get(cls)
    if found is None:
        found = _CONVERTERS[cls] = _build_converters(cls)
    return found


def _build_converters(cls: type) -> _Converters:
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        to: _Convert = _identity
        back: _Convert = _identity
        if typing.get_origin(hint) is tuple:
            element = typing.get_args(hint)[0]
            if dataclasses.is_dataclass(element):
                nested: type = element  # type: ignore[assignment]
                to = _nested_to
                back = _nested_back(nested)
            else:
                to = list
                back = tuple
        elif hint is bytes:
            back = bytes
        else:
            optional = _optional_dataclass(hint)
            if optional is not None:  # a nullable struct
                to = _optional_to
                back = _optional_back(optional)
        out.append((f.name, to, back))
    return tuple(out)


def _optional_dataclass(hint: Any) -> type | None:
    """``X`` when ``hint`` is ``X | None`` for a dataclass ``X``."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if len(args) == 1 and len(typing.get_args(hint)) == 2 and dataclasses.is_dataclass(args[0]):
        found: type = args[0]  # type: ignore[assignment]
        return found
    return None


def _optional_to(item: Any) -> dict[str, Any] | None:
    return None if item is None else to_fields(item)


def _optional_back(cls: type) -> _Convert:
    def convert(item: Any) -> Any:
        return None if item is None else from_fields(cls, item)

    return convert


def _nested_to(items: Any) -> list[dict[str, Any]]:
    return [to_fields(item) for item in items]


def _nested_back(cls: type) -> _Convert:
    def convert(items: Any) -> tuple[Any, ...]:
        return tuple(from_fields(cls, item) for item in items)

    return convert


def to_fields(obj: Any) -> dict[str, Any]:
    """A record dataclass as the field dict its schema encodes."""
    return {name: to(getattr(obj, name)) for name, to, _ in _converters(type(obj))}


def from_fields(cls: type, fields: Mapping[str, Any]) -> Any:
    """The ``cls`` instance holding a decoded message's fields (unknown tags ignored)."""
    return cls(**{name: back(fields[name]) for name, _, back in _converters(cls)})
