"""Golden bytes for the registered versions kio has no schema for, cross-checked with
kafka-python 3.0.12's own protocol classes.

Kafka 4.0 dropped these versions from its JSON schemas (and so did kio and kafka-python's
schema-driven ``ApiMessage`` classes); kafka-python still has hand-written structs for them
in ``kafka.protocol.old``. For each: ``wire`` encodes the body to exactly the golden bytes
and decodes them back to the body; kafka-python encodes the same values to the same bytes
and decodes the golden bytes to the same values; and whole frames (header v1 / v0) built
by ``wire.codec`` equal kafka-python's.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import pytest
from oracle import (
    Case,
    assert_absent_at_defaults,
    non_kio_cases,
    typed,
    wire_decode,
    wire_encode,
    wire_project,
)

from wire.codec import decode_request, decode_response, encode_request, encode_response

# Importing kafka loads its JSON schemas with importlib.resources.read_text, deprecated in
# 3.11 (and warnings are errors here).
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.protocol.old import admin, commit, list_offsets
    from kafka.protocol.old.types import Array, Schema


@dataclass(frozen=True)
class Golden:
    case_id: str
    kafka_python: type[Any]
    body: dict[str, Any]
    hex: str


GOLDEN = [
    Golden(
        "OffsetCommit-v0-request",
        commit.OffsetCommitRequest_v0,
        {
            "group_id": "grp",
            "topics": [
                {
                    "name": "t1",
                    "partitions": [
                        {"partition_index": 3, "committed_offset": 42, "committed_metadata": "m"},
                        {"partition_index": 4, "committed_offset": -1, "committed_metadata": None},
                    ],
                }
            ],
        },
        "0003" "677270"  # group_id "grp"
        "00000001"  # topics: 1
        "0002" "7431"  # topics[0].name "t1"
        "00000002"  # topics[0].partitions: 2
        "00000003"  # partitions[0].partition_index 3
        "000000000000002a"  # partitions[0].committed_offset 42
        "0001" "6d"  # partitions[0].committed_metadata "m"
        "00000004"  # partitions[1].partition_index 4
        "ffffffffffffffff"  # partitions[1].committed_offset -1
        "ffff",  # partitions[1].committed_metadata null
    ),
    Golden(
        "OffsetCommit-v1-request",
        commit.OffsetCommitRequest_v1,
        {
            "group_id": "grp",
            "generation_id_or_member_epoch": 7,
            "member_id": "mem",
            "topics": [
                {
                    "name": "t1",
                    "partitions": [
                        {
                            "partition_index": 0,
                            "committed_offset": 100,
                            "commit_timestamp": 1_700_000_000_000,
                            "committed_metadata": "",
                        }
                    ],
                }
            ],
        },
        "0003" "677270"  # group_id "grp"
        "00000007"  # generation_id_or_member_epoch 7
        "0003" "6d656d"  # member_id "mem"
        "00000001"  # topics: 1
        "0002" "7431"  # topics[0].name "t1"
        "00000001"  # topics[0].partitions: 1
        "00000000"  # partitions[0].partition_index 0
        "0000000000000064"  # partitions[0].committed_offset 100
        "0000018bcfe56800"  # partitions[0].commit_timestamp 1700000000000
        "0000",  # partitions[0].committed_metadata ""
    ),
    Golden(
        "OffsetCommit-v0-response",
        commit.OffsetCommitResponse_v0,
        {
            "topics": [
                {
                    "name": "t1",
                    "partitions": [
                        {"partition_index": 3, "error_code": 0},
                        {"partition_index": 4, "error_code": 16},
                    ],
                }
            ]
        },
        "00000001"  # topics: 1
        "0002" "7431"  # topics[0].name "t1"
        "00000002"  # topics[0].partitions: 2
        "00000003"  # partitions[0].partition_index 3
        "0000"  # partitions[0].error_code NONE
        "00000004"  # partitions[1].partition_index 4
        "0010",  # partitions[1].error_code NOT_COORDINATOR (16)
    ),
    Golden(
        "OffsetCommit-v1-response",
        commit.OffsetCommitResponse_v1,
        {"topics": [{"name": "t1", "partitions": [{"partition_index": 0, "error_code": 22}]}]},
        "00000001"  # topics: 1
        "0002" "7431"  # topics[0].name "t1"
        "00000001"  # topics[0].partitions: 1
        "00000000"  # partitions[0].partition_index 0
        "0016",  # partitions[0].error_code ILLEGAL_GENERATION (22)
    ),
    Golden(
        "OffsetFetch-v0-request",
        commit.OffsetFetchRequest_v0,
        {"group_id": "grp", "topics": [{"name": "t1", "partition_indexes": [0, 5]}]},
        "0003" "677270"  # group_id "grp"
        "00000001"  # topics: 1
        "0002" "7431"  # topics[0].name "t1"
        "00000002"  # topics[0].partition_indexes: 2
        "00000000"  # partition_indexes[0] 0
        "00000005",  # partition_indexes[1] 5
    ),
    Golden(
        "OffsetFetch-v0-response",
        commit.OffsetFetchResponse_v0,
        {
            "topics": [
                {
                    "name": "t1",
                    "partitions": [
                        {
                            "partition_index": 0,
                            "committed_offset": 42,
                            "metadata": "",
                            "error_code": 0,
                        },
                        {
                            "partition_index": 5,
                            "committed_offset": -1,
                            "metadata": None,
                            "error_code": 3,
                        },
                    ],
                }
            ]
        },
        "00000001"  # topics: 1
        "0002" "7431"  # topics[0].name "t1"
        "00000002"  # topics[0].partitions: 2
        "00000000"  # partitions[0].partition_index 0
        "000000000000002a"  # partitions[0].committed_offset 42
        "0000"  # partitions[0].metadata ""
        "0000"  # partitions[0].error_code NONE
        "00000005"  # partitions[1].partition_index 5
        "ffffffffffffffff"  # partitions[1].committed_offset -1
        "ffff"  # partitions[1].metadata null
        "0003",  # partitions[1].error_code UNKNOWN_TOPIC_OR_PARTITION (3)
    ),
    Golden(
        "ListOffsets-v0-request",
        list_offsets.ListOffsetsRequest_v0,
        {
            "replica_id": -1,
            "topics": [
                {
                    "name": "t1",
                    "partitions": [
                        {"partition_index": 2, "timestamp": -2, "max_num_offsets": 1}
                    ],
                }
            ],
        },
        "ffffffff"  # replica_id -1
        "00000001"  # topics: 1
        "0002" "7431"  # topics[0].name "t1"
        "00000001"  # topics[0].partitions: 1
        "00000002"  # partitions[0].partition_index 2
        "fffffffffffffffe"  # partitions[0].timestamp -2 (earliest)
        "00000001",  # partitions[0].max_num_offsets 1
    ),
    Golden(
        "ListOffsets-v0-response",
        list_offsets.ListOffsetsResponse_v0,
        {
            "topics": [
                {
                    "name": "t1",
                    "partitions": [
                        {"partition_index": 2, "error_code": 0, "old_style_offsets": [0, 1234]}
                    ],
                }
            ]
        },
        "00000001"  # topics: 1
        "0002" "7431"  # topics[0].name "t1"
        "00000001"  # topics[0].partitions: 1
        "00000002"  # partitions[0].partition_index 2
        "0000"  # partitions[0].error_code NONE
        "00000002"  # partitions[0].old_style_offsets: 2
        "0000000000000000"  # old_style_offsets[0] 0
        "00000000000004d2",  # old_style_offsets[1] 1234
    ),
    Golden(
        "CreateTopics-v0-request",
        admin.CreateTopicsRequest_v0,
        {
            "topics": [
                {
                    "name": "new",
                    "num_partitions": -1,
                    "replication_factor": -1,
                    "assignments": [{"partition_index": 0, "broker_ids": [1, 2]}],
                    "configs": [
                        {"name": "retention.ms", "value": "1000"},
                        {"name": "x", "value": None},
                    ],
                }
            ],
            "timeout_ms": 30_000,
        },
        "00000001"  # topics: 1
        "0003" "6e6577"  # topics[0].name "new"
        "ffffffff"  # topics[0].num_partitions -1
        "ffff"  # topics[0].replication_factor -1
        "00000001"  # topics[0].assignments: 1
        "00000000"  # assignments[0].partition_index 0
        "00000002"  # assignments[0].broker_ids: 2
        "00000001"  # broker_ids[0] 1
        "00000002"  # broker_ids[1] 2
        "00000002"  # topics[0].configs: 2
        "000c" "726574656e74696f6e2e6d73"  # configs[0].name "retention.ms"
        "0004" "31303030"  # configs[0].value "1000"
        "0001" "78"  # configs[1].name "x"
        "ffff"  # configs[1].value null
        "00007530",  # timeout_ms 30000
    ),
    Golden(
        "CreateTopics-v1-request",
        admin.CreateTopicsRequest_v1,
        {
            "topics": [
                {
                    "name": "t",
                    "num_partitions": 6,
                    "replication_factor": 3,
                    "assignments": [],
                    "configs": [],
                }
            ],
            "timeout_ms": 5_000,
            "validate_only": True,
        },
        "00000001"  # topics: 1
        "0001" "74"  # topics[0].name "t"
        "00000006"  # topics[0].num_partitions 6
        "0003"  # topics[0].replication_factor 3
        "00000000"  # topics[0].assignments: 0
        "00000000"  # topics[0].configs: 0
        "00001388"  # timeout_ms 5000
        "01",  # validate_only true
    ),
    Golden(
        "CreateTopics-v0-response",
        admin.CreateTopicsResponse_v0,
        {"topics": [{"name": "new", "error_code": 36}]},
        "00000001"  # topics: 1
        "0003" "6e6577"  # topics[0].name "new"
        "0024",  # topics[0].error_code TOPIC_ALREADY_EXISTS (36)
    ),
    Golden(
        "CreateTopics-v1-response",
        admin.CreateTopicsResponse_v1,
        {
            "topics": [
                {"name": "new", "error_code": 37, "error_message": "bad"},
                {"name": "ok", "error_code": 0, "error_message": None},
            ]
        },
        "00000002"  # topics: 2
        "0003" "6e6577"  # topics[0].name "new"
        "0025"  # topics[0].error_code INVALID_PARTITIONS (37)
        "0003" "626164"  # topics[0].error_message "bad"
        "0002" "6f6b"  # topics[1].name "ok"
        "0000"  # topics[1].error_code NONE
        "ffff",  # topics[1].error_message null
    ),
    Golden(
        "DescribeConfigs-v0-request",
        admin.DescribeConfigsRequest_v0,
        {"resources": [{"resource_type": 2, "resource_name": "t",
                        "configuration_keys": ["retention.ms"]}]},
        "00000001"  # resources: 1
        "02"  # resources[0].resource_type TOPIC (2)
        "0001" "74"  # resources[0].resource_name "t"
        "00000001"  # resources[0].configuration_keys: 1
        "000c" "726574656e74696f6e2e6d73",  # "retention.ms"
    ),
    Golden(
        "DescribeConfigs-v0-response",
        admin.DescribeConfigsResponse_v0,
        {
            "throttle_time_ms": 0,
            "results": [{
                "error_code": 0, "error_message": None, "resource_type": 2,
                "resource_name": "t",
                "configs": [{"name": "retention.ms", "value": "1000", "read_only": False,
                             "is_default": False, "is_sensitive": False}],
            }],
        },
        "00000000"  # throttle_time_ms 0
        "00000001"  # results: 1
        "0000"  # results[0].error_code NONE
        "ffff"  # results[0].error_message null
        "02"  # results[0].resource_type TOPIC (2)
        "0001" "74"  # results[0].resource_name "t"
        "00000001"  # results[0].configs: 1
        "000c" "726574656e74696f6e2e6d73"  # configs[0].name "retention.ms"
        "0004" "31303030"  # configs[0].value "1000"
        "00"  # configs[0].read_only false
        "00"  # configs[0].is_default false
        "00",  # configs[0].is_sensitive false
    ),
    Golden(
        "DeleteTopics-v0-request",
        admin.DeleteTopicsRequest_v0,
        {"topic_names": ["a", "bc"], "timeout_ms": 15_000},
        "00000002"  # topic_names: 2
        "0001" "61"  # topic_names[0] "a"
        "0002" "6263"  # topic_names[1] "bc"
        "00003a98",  # timeout_ms 15000
    ),
    Golden(
        "DeleteTopics-v0-response",
        admin.DeleteTopicsResponse_v0,
        {"responses": [{"name": "a", "error_code": 0}, {"name": "bc", "error_code": 3}]},
        "00000002"  # responses: 2
        "0001" "61"  # responses[0].name "a"
        "0000"  # responses[0].error_code NONE
        "0002" "6263"  # responses[1].name "bc"
        "0003",  # responses[1].error_code UNKNOWN_TOPIC_OR_PARTITION (3)
    ),
]

CASES = {c.id: c for c in non_kio_cases()}
IDS = [g.case_id for g in GOLDEN]


def test_every_version_kio_lacks_has_a_golden() -> None:
    assert sorted(CASES) == sorted(IDS)


def _positional(schema: Any, value: Any) -> Any:
    """A dict body as kafka-python's positional tuples, following its Schema."""
    if isinstance(schema, Schema):
        pairs = zip(schema.names, schema.fields, strict=True)
        return tuple(_positional(t, value[n]) for n, t in pairs)
    if isinstance(schema, Array):
        return None if value is None else [_positional(schema.array_of, v) for v in value]
    return value


def _kafka_python(golden: Golden) -> Any:
    cls = golden.kafka_python
    assert list(cls.SCHEMA.names) == list(golden.body), "kafka-python names the fields alike"
    return cls(*_positional(cls.SCHEMA, golden.body))


@pytest.mark.parametrize("golden", GOLDEN, ids=IDS)
@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "reference"])
def test_wire_matches_golden(golden: Golden, compiled: bool) -> None:
    case = CASES[golden.case_id]
    data = bytes.fromhex(golden.hex)
    assert wire_encode(case, golden.body, compiled=compiled).hex() == golden.hex
    decoded = wire_decode(case, data, compiled=compiled)
    assert typed(wire_project(decoded, case.message.fields, case.version)) == typed(golden.body)
    assert_absent_at_defaults(decoded, case.message.fields, case.version)
    assert wire_encode(case, decoded, compiled=compiled) == data


@pytest.mark.parametrize("golden", GOLDEN, ids=IDS)
def test_kafka_python_matches_golden(golden: Golden) -> None:
    cls = golden.kafka_python
    case = CASES[golden.case_id]
    assert (case.spec.api_key, case.version) == (cls.API_KEY, cls.API_VERSION)
    assert cls.is_request() == (case.direction == "request")
    assert _kafka_python(golden).encode().hex() == golden.hex
    assert cls.decode(bytes.fromhex(golden.hex)).to_object() == golden.body


@pytest.mark.parametrize("golden", GOLDEN, ids=IDS)
def test_frames_match_kafka_python(golden: Golden) -> None:
    """Whole frames: request header v1 (client_id a legacy string), response header v0."""
    case: Case = CASES[golden.case_id]
    api_key, version = case.spec.api_key, case.version
    message = _kafka_python(golden)
    if case.direction == "request":
        message.with_header(correlation_id=123456, client_id="kafka-python-\u00e9")
        expected = message.encode(header=True, framed=True)
        framed = encode_request(api_key, version, 123456, "kafka-python-\u00e9", golden.body)
        assert framed.hex() == expected.hex()
        decoded = decode_request(framed[4:])
        assert (decoded.api_key, decoded.api_version) == (api_key, version)
        assert (decoded.correlation_id, decoded.client_id) == (123456, "kafka-python-\u00e9")
        assert wire_project(decoded.body, case.message.fields, version) == golden.body
    else:
        message.with_header(correlation_id=-5)
        expected = message.encode(header=True, framed=True)
        framed = encode_response(api_key, version, -5, golden.body)
        assert framed.hex() == expected.hex()
        correlation_id, body = decode_response(api_key, version, framed[4:])
        assert correlation_id == -5
        assert wire_project(body, case.message.fields, version) == golden.body
