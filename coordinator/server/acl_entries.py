"""Per-entry authorization: the entries of a request an ``Acl``'s ``Entries`` names, and the
answer to a request some of whose entries are denied (``coordinator.server.authorization``
decides which; this module only finds entries and assembles answers).

A denied entry is taken out of the request the handler serves and answered with its
error in the answer's list, shaped by ``wire.error_response`` as Kafka's per-entry error
answers are (DescribeConfigs' result, FindCoordinator v4's coordinator, OffsetFetch's
partitions); an entry of a nested list (OffsetFetch v8+'s topics of a group) is answered
inside its parent's answer. When every entry of a list is denied the handler is not called,
as Kafka answers only the errors.
"""

from __future__ import annotations

import copy
import dataclasses
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from coordinator.security.acl import CLUSTER_NAME
from coordinator.server.api_support import TopicView
from wire.constants import ErrorCode, ResourceType
from wire.error_response import error_response

if TYPE_CHECKING:
    from coordinator.server.context import RequestContext
    from coordinator.server.route import Entries
    from wire import DecodedRequest

__all__ = ["Denied", "Found", "entries_of", "hide_answer_entries", "serve_allowed"]


class Found(NamedTuple):
    """One request entry an ``Entries`` names: its place and its resource's name."""

    entries: Entries
    parent: int  # its index in ``entries.within``'s list (-1: a top-level list)
    position: int
    name: str


class Denied(NamedTuple):
    """A denied entry and the error it is answered with."""

    found: Found
    error: ErrorCode


def _name(entries: Entries, item: Any, kind: ResourceType, ctx: RequestContext) -> str | None:
    if kind is ResourceType.CLUSTER:  # (a broker's configs: the cluster's ACLs)
        return CLUSTER_NAME
    if not isinstance(item, dict):
        return None if item is None else str(item)
    name = item.get(entries.name) if entries.name else None
    if name:
        return str(name)
    topic_id = item.get("topic_id")
    if kind is ResourceType.TOPIC and isinstance(topic_id, uuid.UUID):
        return TopicView(ctx.state.topics).name_of(topic_id)
    return None


def _selected(entries: Entries, item: Any) -> bool:
    if entries.only is None:
        return True
    field, values = entries.only
    return isinstance(item, dict) and item.get(field) in values


def _list(holder: Any, field: str) -> list[Any]:
    items = holder.get(field) if isinstance(holder, dict) else None
    return items if isinstance(items, list) else []


def entries_of(entries: Entries, body: Any, kind: ResourceType, ctx: RequestContext,
               denied_parents: set[tuple[str, int]]) -> Iterator[Found]:
    """The request entries ``entries`` names (a nested list's only under parents not in
    ``denied_parents``, as (list, index) pairs), with their names; an entry whose name is
    unknown (an unknown topic id) is the handler's to answer."""
    within = entries.within
    parents = [(-1, body)] if within is None else [
        (i, parent) for i, parent in enumerate(_list(body, within.field))
        if (within.field, i) not in denied_parents]
    for parent_index, holder in parents:
        for index, item in enumerate(_list(holder, entries.field)):
            if not _selected(entries, item):
                continue
            name = _name(entries, item, kind, ctx)
            if name is not None:
                yield Found(entries, parent_index, index, name)


def _without(items: list[Any], indexes: set[int]) -> list[Any]:
    return [item for i, item in enumerate(items) if i not in indexes]


def _only(body: Any, field: str, items: list[Any]) -> Any:
    """``body`` with ``items`` as ``field``'s list and every other list empty (what
    ``error_response`` shapes the denied entries' answer from)."""
    out = copy.copy(body)
    for key, value in body.items():
        if isinstance(value, list):
            out[key] = []
    out[field] = items
    return out


def _appended(entry: Any, part: Any) -> dict[str, Any]:
    """``entry`` (an answer or an answer's entry) with ``part``'s non-empty lists added, an
    added entry that has an error of its own without entries of its own (a denied group's
    topics, a denied resource's configs), as Kafka answers them; one without (a topic in a
    Produce, a ListOffsets) keeps its partitions, where its errors are."""
    merged = dict(entry)
    for key, value in part.items():
        if isinstance(value, list) and value and isinstance(merged.get(key), list):
            merged[key] = [*merged[key], *(_bare(item) for item in value)]
    return merged


def _bare(item: Any) -> Any:
    if not (isinstance(item, dict) and "error_code" in item):
        return item
    return {key: [] if isinstance(value, list) else value for key, value in item.items()}


Handler = Callable[["RequestContext", "DecodedRequest"], Awaitable[Any]]


async def serve_allowed(handler: Handler, ctx: RequestContext, request: DecodedRequest,
                        denied: list[Denied]) -> Any:
    """Serve ``request`` without its denied entries, and answer those with their errors."""
    body = request.body
    top: dict[str, set[int]] = {}
    nested: dict[tuple[str, int, str], set[int]] = {}
    for d in denied:
        f = d.found
        if f.entries.within is None:
            top.setdefault(f.entries.field, set()).add(f.position)
        else:
            nested.setdefault((f.entries.within.field, f.parent, f.entries.field),
                              set()).add(f.position)
    served = copy.copy(body)
    for (parents_field, parent, field), indexes in nested.items():  # (before any parent goes)
        parents = list(served[parents_field])
        parent_entry = copy.copy(parents[parent])
        parent_entry[field] = _without(parent_entry[field], indexes)
        parents[parent] = parent_entry
        served[parents_field] = parents
    for field, indexes in top.items():
        served[field] = _without(served[field], indexes)
    rest_error = next((d.found.entries.rest_error for d in denied
                       if d.found.entries.rest_error), 0)
    served_request = dataclasses.replace(request, body=served)
    if rest_error:
        answer: Any = error_response(served_request, rest_error)
    elif any(not served[field] for field in top):
        answer = error_response(served_request, ErrorCode.NONE)  # (nothing left to serve)
    else:
        answer = await handler(ctx, served_request)
        if answer is None:
            return None
    return _with_denied(answer, request, denied)


def _with_denied(answer: Any, request: DecodedRequest, denied: list[Denied]) -> Any:
    """``answer`` with the denied entries' error entries added (a new dict: the handler's
    answer may be a shared constant)."""
    body = request.body
    groups: dict[tuple[Entries, int, ErrorCode], list[int]] = {}
    for d in denied:
        groups.setdefault((d.found.entries, d.found.parent, d.error), []).append(d.found.position)
    answer = dict(answer)
    for (entries, parent, error), indexes in groups.items():
        within = entries.within
        if within is None:
            items = [body[entries.field][i] for i in indexes]
            answer = _appended(answer, error_response(dataclasses.replace(
                request, body=_only(body, entries.field, items)), error))
            continue
        parent_entry = copy.copy(body[within.field][parent])
        parent_entry[entries.field] = [parent_entry[entries.field][i] for i in indexes]
        part = error_response(dataclasses.replace(
            request, body=_only(body, within.field, [parent_entry])), error)
        key = parent_entry.get(within.name)
        for list_name, part_entries in part.items():
            if not (isinstance(part_entries, list) and part_entries
                    and isinstance(answer.get(list_name), list)):
                continue
            answer[list_name] = [
                _appended(entry, part_entries[0])
                if entry.get(within.name) == key and not entry.get("error_code") else entry
                for entry in answer[list_name]]
    return answer


def hide_answer_entries(answer: Any, entries: Entries,
                        allowed: Callable[[str], bool]) -> Any:
    """``answer`` without the entries of ``entries``' answer list (inside each entry of
    ``entries.within``'s, if nested) whose name ``allowed`` refuses."""

    def kept(items: list[Any]) -> list[Any]:
        return [item for item in items if allowed(str(item.get(entries.name)))]

    answer = dict(answer)
    within = entries.within
    if within is None:
        answer[entries.field] = kept(_list(answer, entries.field))
    else:
        answer[within.field] = [{**parent, entries.field: kept(_list(parent, entries.field))}
                                for parent in _list(answer, within.field)]
    return answer
