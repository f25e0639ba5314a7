"""``wire.error_response`` answers a request entry for entry where the response's array is
named otherwise than the request's (Kafka's getErrorResponse per API), so an error answered
for a whole request (an ACL denial, a fault, NOT_COORDINATOR) reaches every entry the client
asked about -- and the answer encodes."""

from __future__ import annotations

from typing import Any

import pytest

import wire
from wire.error_response import error_response
from wire.fast_codec import decode_request

FETCH_PARTITION = {"partition": 3, "current_leader_epoch": -1, "fetch_offset": 0,
                   "last_fetched_epoch": -1, "log_start_offset": -1, "partition_max_bytes": 1}

CASES: list[tuple[int, int, dict[str, Any], dict[str, Any]]] = [
    (0, 9, {"transactional_id": None, "acks": 1, "timeout_ms": 1, "topic_data": [
        {"name": "t", "partition_data": [{"index": 2, "records": None}]}]},
     {"responses": [{"name": "t", "partition_responses": [{"index": 2, "error_code": 29}]}]}),
    (1, 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1,
             "isolation_level": 0, "session_id": 0, "session_epoch": -1, "topics": [
                 {"topic": "t", "partitions": [FETCH_PARTITION]}],
             "forgotten_topics_data": [], "rack_id": ""},
     {"error_code": 29, "responses": [
         {"topic": "t", "partitions": [{"partition_index": 3, "error_code": 29}]}]}),
    (20, 4, {"topic_names": ["t", "u"], "timeout_ms": 1},
     {"responses": [{"name": "t", "error_code": 29}, {"name": "u", "error_code": 29}]}),
    (32, 4, {"resources": [{"resource_type": 2, "resource_name": "t",
                            "configuration_keys": None}],
             "include_synonyms": False, "include_documentation": False},
     {"results": [{"error_code": 29, "resource_type": 2, "resource_name": "t"}]}),
    (10, 4, {"key": "", "key_type": 0, "coordinator_keys": ["g"]},
     {"error_code": 29, "coordinators": [{"key": "g", "error_code": 29}]}),
    (24, 3, {"v3_and_below_transactional_id": "x", "v3_and_below_producer_id": 1,
             "v3_and_below_producer_epoch": 0,
             "v3_and_below_topics": [{"name": "t", "partitions": [0]}]},
     {"error_code": 29, "results_by_topic_v3_and_below": [
         {"name": "t", "results_by_partition": [
             {"partition_index": 0, "partition_error_code": 29}]}]}),
    (42, 2, {"groups_names": ["a"]}, {"results": [{"group_id": "a", "error_code": 29}]}),
    # getErrorResponse's ApiError keeps no message of the error's own: a null error_message
    (29, 3, {"filters": [{"resource_type_filter": 1, "resource_name_filter": None,
                          "pattern_type_filter": 3, "principal_filter": None,
                          "host_filter": None, "operation": 1, "permission_type": 1}]},
     {"error_code": 29, "error_message": None}),
    # DescribeClientQuotasRequest.getErrorResponse: null entries too
    (48, 1, {"components": [], "strict": False},
     {"error_code": 29, "error_message": None, "entries": None}),
]


@pytest.mark.parametrize(("api_key", "version", "body", "expected"), CASES,
                         ids=[wire.ApiKey(case[0]).name for case in CASES])
def test_an_error_answers_every_entry_the_request_named(
    api_key: int, version: int, body: dict[str, Any], expected: dict[str, Any]
) -> None:
    frame = wire.encode_request(api_key, version, 7, "c", body)
    request = decode_request(bytes(frame[4:]))
    answer = error_response(request, 29)
    for name, value in expected.items():
        got = answer[name]
        if isinstance(value, list):  # (echoed ids the expectation leaves out are fine)
            got = [{k: v for k, v in entry.items() if k in _keys(value)} for entry in got]
            got = _trim(got, value)
        assert got == value
    wire.encode_response(api_key, version, 7, answer)  # a whole, encodable answer


def _keys(entries: list[dict[str, Any]]) -> set[str]:
    return {k for entry in entries for k in entry}


def _trim(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for g, w in zip(got, want, strict=True):
        out.append({k: _trim(v, w[k]) if isinstance(v, list) else v for k, v in g.items()
                    if k in w})
    return out
