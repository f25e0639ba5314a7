"""The core's view of the group APIs names wire fields only: every key of every request and
response TypedDict (nested ones too) is a field of the API's wire schema at that place, so
the decoded message can go to the core as it is and the core's answer to the encoder."""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from typing import Any, NotRequired, Required, get_args, get_origin, get_type_hints

import pytest

import wire
from coordinator.core import messages as m
from wire.schema import Field

CASES = [
    (m.JoinGroupRequest, 11, "request"), (m.JoinGroupResponse, 11, "response"),
    (m.SyncGroupRequest, 14, "request"), (m.SyncGroupResponse, 14, "response"),
    (m.HeartbeatRequest, 12, "request"), (m.HeartbeatResponse, 12, "response"),
    (m.LeaveGroupRequest, 13, "request"), (m.LeaveGroupResponse, 13, "response"),
    (m.OffsetCommitRequest, 8, "request"), (m.OffsetCommitResponse, 8, "response"),
    (m.OffsetFetchRequest, 9, "request"), (m.OffsetFetchResponse, 9, "response"),
    (m.DescribeGroupsRequest, 15, "request"), (m.DescribeGroupsResponse, 15, "response"),
    (m.ListGroupsRequest, 16, "request"), (m.ListGroupsResponse, 16, "response"),
    (m.DeleteGroupsRequest, 42, "request"), (m.DeleteGroupsResponse, 42, "response"),
    (m.OffsetDeleteRequest, 47, "request"), (m.OffsetDeleteResponse, 47, "response"),
]


def _typed_dict(annotation: Any) -> Any:
    """The TypedDict inside ``annotation`` (through Sequence, | None, NotRequired), or None."""
    origin = get_origin(annotation)
    if origin in (NotRequired, Required):
        return _typed_dict(get_args(annotation)[0])
    if origin in (types.UnionType, typing.Union):
        inner = [_typed_dict(a) for a in get_args(annotation) if a is not type(None)]
        return next((t for t in inner if t is not None), None)
    if origin is not None and issubclass(origin, Sequence):
        return _typed_dict(get_args(annotation)[0])
    if typing.is_typeddict(annotation):
        return annotation
    return None


def _check(typed: Any, fields: tuple[Field, ...], path: str) -> int:
    by_name = {f.name: f for f in fields}
    checked = 0
    for key, annotation in get_type_hints(typed, include_extras=True).items():
        assert key in by_name, f"{path}.{key} is not a wire field"
        checked += 1
        nested = _typed_dict(annotation)
        if nested is not None:
            assert by_name[key].fields, f"{path}.{key} is not a struct array on the wire"
            checked += _check(nested, by_name[key].fields, f"{path}.{key}")
    return checked


@pytest.mark.parametrize(("typed", "api_key", "side"), CASES,
                         ids=[c[0].__name__ for c in CASES])
def test_core_message_fields_are_wire_fields(typed: Any, api_key: int, side: str) -> None:
    spec = wire.lookup(api_key)
    assert spec is not None
    message = spec.request if side == "request" else spec.response
    assert _check(typed, message.fields, typed.__name__) > 0


def test_the_checker_sees_a_misnamed_field() -> None:
    class Wrong(typing.TypedDict):
        group_id: str
        generation: int  # the wire calls it generation_id

    spec = wire.lookup(12)
    assert spec is not None
    with pytest.raises(AssertionError, match="generation is not a wire field"):
        _check(Wrong, spec.request.fields, "Wrong")
