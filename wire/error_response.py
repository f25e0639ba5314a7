"""An error answer to any request: Kafka's ``AbstractRequest.getErrorResponse``.

The answer is built from the API's response schema, shaped after the request: the top-level
``error_code`` and every per-topic / per-partition / per-group ``error_code`` of arrays the
request carried (OffsetCommit's partitions, OffsetFetch's groups, ...), with the request's
names, ids and indexes echoed. JoinGroup-style generation fields are -1.
"""

from __future__ import annotations

from typing import Any

from wire.codec import DecodedRequest
from wire.schema import Field

__all__ = ["error_response"]

_ECHOED = (
    "name",
    "topic",
    "topic_id",
    "partition_index",
    "group_id",
    "member_id",
    "group_instance_id",
    "key",
)


def error_response(request: DecodedRequest, error_code: int) -> dict[str, Any]:
    """A response to ``request`` that carries ``error_code`` wherever the API has one."""
    return _shape(request.spec.response.fields, request.body, error_code)


def _shape(fields: tuple[Field, ...], source: Any, code: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field in fields:
        name = field.name
        if name == "error_code":
            out[name] = code
        elif name in ("generation_id", "generation"):
            out[name] = -1
        elif name in _ECHOED and isinstance(source, dict) and name in source:
            out[name] = source[name]
        elif field.type == "[]" and isinstance(source, dict):
            items = source.get(name)
            if items is None and name == "partitions":
                indexes = source.get("partition_indexes") or ()
                items = [{"partition_index": i} for i in indexes]
            if isinstance(items, list):
                out[name] = [
                    _shape(field.fields, item if isinstance(item, dict) else {}, code)
                    for item in items
                ]
    return out
