"""The answers of the coordinator APIs while the coordinator loads.

Kafka's group and transaction coordinators answer COORDINATOR_LOAD_IN_PROGRESS while they
replay their partition of ``__consumer_offsets`` / ``__transaction_state``, and clients
retry (Java's consumer and producer, librdkafka, kafka-python all treat it as retriable);
Metadata, ApiVersions and FindCoordinator are answered meanwhile. kcoord loads its whole log
at start, so until ``Server.loaded`` every coordinator API that has waited ``LOAD_WAIT_S``
for it gets that answer here, at the connection, instead of silence: the answer Kafka 4
gives when the coordinator cannot run a request (``AbstractRequest.getErrorResponse``):
the error at the top and in every entry the request named, one entry per group or
transactional id for the APIs that name several,
an empty list for ListGroups / ListTransactions -- except Heartbeat, which Kafka's
GroupCoordinatorService answers NONE while loading ("the group is still loading, so
blindly respond").
"""

from __future__ import annotations

from typing import Any

from wire.codec import DecodedRequest
from wire.constants import ApiKey, ErrorCode
from wire.error_response import error_response

__all__ = ["COORDINATOR_APIS", "LOAD_WAIT_S", "load_in_progress"]

#: How long a coordinator request waits for the load before it is answered
#: COORDINATOR_LOAD_IN_PROGRESS: a small data directory loads within it and the request is
#: answered as if the coordinator had always been there (some clients surface error 14 to
#: the application instead of retrying: kafka-python's ``committed()``); a large one gets
#: Kafka's answer instead of silence.
LOAD_WAIT_S = 2.0

#: The APIs answered COORDINATOR_LOAD_IN_PROGRESS while the coordinator loads.
COORDINATOR_APIS = frozenset({
    ApiKey.JOIN_GROUP, ApiKey.SYNC_GROUP, ApiKey.HEARTBEAT, ApiKey.LEAVE_GROUP,
    ApiKey.OFFSET_COMMIT, ApiKey.OFFSET_FETCH, ApiKey.DESCRIBE_GROUPS, ApiKey.LIST_GROUPS,
    ApiKey.DELETE_GROUPS, ApiKey.OFFSET_DELETE, ApiKey.CONSUMER_GROUP_HEARTBEAT,
    ApiKey.CONSUMER_GROUP_DESCRIBE, ApiKey.INIT_PRODUCER_ID, ApiKey.ADD_PARTITIONS_TO_TXN,
    ApiKey.ADD_OFFSETS_TO_TXN, ApiKey.END_TXN, ApiKey.TXN_OFFSET_COMMIT,
    ApiKey.DESCRIBE_TRANSACTIONS, ApiKey.LIST_TRANSACTIONS,
})

#: APIs naming several keys: (request field of the keys, response list, its key field).
_PER_KEY: dict[int, tuple[str, str, str]] = {
    ApiKey.DESCRIBE_GROUPS: ("groups", "groups", "group_id"),
    ApiKey.DELETE_GROUPS: ("groups_names", "results", "group_id"),
    ApiKey.CONSUMER_GROUP_DESCRIBE: ("group_ids", "groups", "group_id"),
    ApiKey.DESCRIBE_TRANSACTIONS: ("transactional_ids", "transaction_states",
                                   "transactional_id"),
}
#: APIs listing what the coordinator holds: the response's list.
_LISTS: dict[int, str] = {
    ApiKey.LIST_GROUPS: "groups",
    ApiKey.LIST_TRANSACTIONS: "transaction_states",
}
_OFFSET_FETCH_GROUPS_VERSION = 8


def load_in_progress(request: DecodedRequest) -> dict[str, Any]:
    """The answer to a coordinator API (``COORDINATOR_APIS``) while the coordinator loads."""
    api_key = request.api_key
    code = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    if api_key == ApiKey.HEARTBEAT:
        return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE}
    if api_key in _LISTS:
        return {"throttle_time_ms": 0, "error_code": code, _LISTS[api_key]: []}
    body = request.body
    if api_key in _PER_KEY:
        keys_field, entries_field, key_field = _PER_KEY[api_key]
        return {"throttle_time_ms": 0, entries_field: [
            {key_field: key, "error_code": code} for key in body[keys_field] or ()]}
    if api_key == ApiKey.OFFSET_FETCH and request.api_version >= _OFFSET_FETCH_GROUPS_VERSION:
        return {"throttle_time_ms": 0, "groups": [
            {"group_id": group.group_id, "error_code": code, "topics": []}
            for group in body.groups or ()]}
    response = error_response(request, code)
    if api_key == ApiKey.LEAVE_GROUP:
        response["members"] = []
    if api_key == ApiKey.OFFSET_FETCH and request.api_version >= 2:
        response["topics"] = []
    return response
