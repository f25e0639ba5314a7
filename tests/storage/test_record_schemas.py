"""One declaration: every record dataclass field is a field of its schema and vice versa,
so the generic mapping (storage.record_mapping) never translates a name by hand."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from storage.record_types import RECORD_TYPES, RecordType
from storage.records import GroupMetadataValue, MemberMetadata, RebalanceEventValue
from wire.schema import Field, Message


def _schema_fields(fields: tuple[Field, ...]) -> dict[str, Field]:
    return {f.name: f for f in fields}


def _check(cls: type, fields: tuple[Field, ...]) -> None:
    declared = _schema_fields(fields)
    hints = typing.get_type_hints(cls)
    assert {f.name for f in dataclasses.fields(cls)} == set(declared), cls.__name__
    for name, field in declared.items():
        if field.type == "[]":  # an array of structs: the dataclass holds a tuple of them
            (element,) = {a for a in typing.get_args(hints[name]) if a is not Ellipsis}
            _check(element, field.fields)


@pytest.mark.parametrize(
    "kind", sorted(set(RECORD_TYPES.values()), key=lambda t: t.key_versions), ids=repr
)
def test_dataclass_fields_are_the_schema_fields(kind: RecordType) -> None:
    _check(kind.key_type, kind.key_schema.fields)
    _check(kind.value_type, kind.value_schema.fields)


def test_nested_and_list_fields_are_checked() -> None:
    value_schema: Message = RECORD_TYPES[2].value_schema
    members = _schema_fields(value_schema.fields)["members"]
    assert typing.get_type_hints(GroupMetadataValue)["members"] == tuple[MemberMetadata, ...]
    _check(MemberMetadata, members.fields)
    assert _schema_fields(RECORD_TYPES[100].value_schema.fields)["members"].type == "[]string"
    assert typing.get_type_hints(RebalanceEventValue)["members"] == tuple[str, ...]


def test_a_renamed_field_is_caught() -> None:
    @dataclasses.dataclass(frozen=True)
    class Renamed:
        group_name: str

    with pytest.raises(AssertionError):
        _check(Renamed, RECORD_TYPES[2].key_schema.fields)
