"""The answer of a coordinator API its coordinator cannot run, as its route's ``routing``
says (``coordinator/server/route.py``): NOT_COORDINATOR on a broker that does not coordinate
the key (``routing.py``), COORDINATOR_LOAD_IN_PROGRESS while the coordinator loads
(``loading.py``, ``routing.py``). Kafka 4 answers as ``AbstractRequest.getErrorResponse``
does:

- ``OneKey``: the error at the top and in every entry the request named, with no members or
  topics otherwise -- except a route that ``answers_while_loading`` (Heartbeat: Kafka's
  GroupCoordinatorService answers NONE then, "the group is still loading, so blindly
  respond");
- ``EachKey``: one entry per key, ``{response_key: key, "error_code": error,
  **error_entry}`` (versions below ``from_version``: as its ``before`` route);
- ``ListedKeys``: the error and an empty list.
"""

from __future__ import annotations

from typing import Any

from coordinator.server.route import EachKey, ListedKeys, OneKey, Routing
from wire.codec import DecodedRequest
from wire.constants import ApiKey, ErrorCode
from wire.error_response import error_response

__all__ = ["error_answer", "key_error_entry", "listing_error", "whole_request_error"]

_OFFSET_FETCH_TOPICS_VERSION = 2


def whole_request_error(request: DecodedRequest, one: OneKey, error: ErrorCode) -> Any:
    """A ``OneKey`` request's answer carrying ``error``: every partition of an
    OffsetCommit / TxnOffsetCommit (and OffsetFetch v0-1, which has no top-level error)
    carries it, no members or topics otherwise."""
    if error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS and one.answers_while_loading:
        return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE}
    response: Any = error_response(request, error)
    if request.api_key == ApiKey.LEAVE_GROUP and "members" in response:
        response["members"] = []
    if (request.api_key == ApiKey.OFFSET_FETCH
            and request.api_version >= _OFFSET_FETCH_TOPICS_VERSION and "topics" in response):
        response["topics"] = []
    return response


def key_error_entry(multi: EachKey, key: str, error: ErrorCode) -> dict[str, Any]:
    """The entry answering one key of an ``EachKey`` request with ``error``."""
    return {multi.response_key: key, "error_code": error, **multi.error_entry}


def listing_error(listed: ListedKeys, error: ErrorCode) -> dict[str, Any]:
    """A listing's answer carrying ``error``: nothing listed."""
    return {"throttle_time_ms": 0, "error_code": error, listed.field: []}


def error_answer(request: DecodedRequest, routing: Routing, error: ErrorCode) -> Any:
    """The answer to ``request`` when its coordinator cannot run any of it."""
    if isinstance(routing, EachKey):
        if request.api_version < routing.from_version and routing.before is not None:
            return whole_request_error(request, routing.before, error)
        return {"throttle_time_ms": 0, routing.response_field: [
            key_error_entry(routing, routing.key_of(entry), error)
            for entry in request.body[routing.request_field] or ()]}
    if isinstance(routing, ListedKeys):
        return listing_error(routing, error)
    if isinstance(routing, OneKey):
        return whole_request_error(request, routing, error)
    raise ValueError(f"{request.api_key}: not a coordinator API")
