"""An error answer to any request: Kafka's ``AbstractRequest.getErrorResponse``.

The answer is built from the API's response schema, shaped after the request: the top-level
``error_code`` and every per-topic / per-partition / per-group ``error_code`` (AddPartitionsToTxn's
``partition_error_code`` too) of arrays the request carried (OffsetCommit's partitions,
OffsetFetch's groups, ...), with the request's names, ids and indexes echoed. A response
array named otherwise than the request's (Produce's ``responses`` for its ``topic_data``,
FindCoordinator's ``coordinators`` for its ``coordinator_keys``, ...) is shaped after the
request array ``_SOURCES`` names; a request array of bare names or indexes (DeleteTopics'
``topic_names``) gives entries holding them. JoinGroup-style generation fields are -1, and so
is a share partition's ``start_offset`` (DescribeShareGroupOffsets).
"""

from __future__ import annotations

from typing import Any

from wire.codec import DecodedRequest
from wire.schema import Field

__all__ = ["error_response"]

_ECHOED = (
    "name",
    "topic",
    "topic_name",
    "topic_id",
    "partition_index",
    "group_id",
    "member_id",
    "group_instance_id",
    "key",
    "index",
    "resource_type",
    "resource_name",
    "transactional_id",
    "entity_type",  # AlterClientQuotas' entities
    "entity_name",
)
#: An echoed field the request names otherwise (Fetch's partitions carry ``partition``).
_ECHOED_AS = {"partition_index": "partition"}
#: Response arrays named otherwise than the request arrays they answer, entry for entry.
_SOURCES = {
    # Produce, Fetch, DeleteTopics; AlterConfigs and IncrementalAlterConfigs
    "responses": ("topic_data", "topics", "topic_names", "resources"),
    "partition_responses": ("partition_data",),  # Produce
    "results": ("resources", "topics", "groups_names", "creations"),  # DescribeConfigs, ...
    "filter_results": ("filters",),  # DeleteAcls
    "coordinators": ("coordinator_keys",),  # FindCoordinator v4+
    "transaction_states": ("transactional_ids",),  # DescribeTransactions
    "results_by_topic_v3_and_below": ("v3_and_below_topics",),  # AddPartitionsToTxn v0-3
    "results_by_partition": ("partitions",),
}
#: What a bare entry of a request array (a name, an index) is called in the answer's entry.
#: Responses whose error answer holds a null list (DescribeClientQuotas' entries:
#: ``DescribeClientQuotasRequest.getErrorResponse`` sets them null).
_NULL_LISTS = {48: "entries"}
_BARE = {"topic_names": "name", "groups_names": "group_id", "coordinator_keys": "key",
         "transactional_ids": "transactional_id", "partitions": "partition_index"}


def error_response(request: DecodedRequest, error_code: int) -> dict[str, Any]:
    """A response to ``request`` that carries ``error_code`` wherever the API has one, and a
    null ``error_message`` wherever that is nullable (``ApiError.fromThrowable`` keeps no
    message that is the error's own)."""
    out = _shape(request.spec.response.fields, request.body, error_code, request.api_version)
    if request.api_key in _NULL_LISTS:  # (getErrorResponse's explicit null list)
        out[_NULL_LISTS[request.api_key]] = None
    return out


def _items(name: str, source: dict[str, Any]) -> list[Any] | None:
    """The request entries the response array ``name`` answers, as dicts."""
    items = source.get(name)
    source_name = name
    if items is None:
        for candidate in _SOURCES.get(name, ()):  # (a version's unused array is empty)
            if isinstance(source.get(candidate), list) and (items is None or source[candidate]):
                items, source_name = source[candidate], candidate
    if items is None and name == "partitions":
        indexes = source.get("partition_indexes") or ()
        return [{"partition_index": i} for i in indexes]
    if not isinstance(items, list):
        return None
    bare = _BARE.get(source_name)
    return [item if isinstance(item, dict) else {bare: item} if bare else {} for item in items]


def _shape(fields: tuple[Field, ...], source: Any, code: int, version: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field in fields:
        name = field.name
        if name == "error_code" or name == "partition_error_code":
            out[name] = code
        elif name == "error_message" and field.nullable_in(version):
            out[name] = None
        elif name in ("generation_id", "generation", "start_offset"):
            out[name] = -1  # (start_offset: a share partition's, unknown: Kafka's -1)
        elif name in _ECHOED and isinstance(source, dict) and (
                name in source or _ECHOED_AS.get(name) in source):
            out[name] = source[name] if name in source else source[_ECHOED_AS[name]]
        elif field.type == "[]" and isinstance(source, dict):
            items = _items(name, source)
            if items is not None:
                out[name] = [_shape(field.fields, item, code, version) for item in items]
    return out
