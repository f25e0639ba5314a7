"""Hand-annotated golden bytes for the security, admin and share-group codecs (issues 29-31),
with the values the servers built on them will read and write: SASL tokens, ACL bindings
(``wire.constants`` ResourceType / PatternType / AclOperation / AclPermissionType), config
operations, float64 quota values, fenced brokers, share acknowledgements (RENEW, the
record-limit acquire mode) and share-group lag.

For each: ``wire`` encodes the body to exactly the annotated bytes (compiled and reference
constructs) and decodes them back to the body; kio 0.6.5, an independent codec, decodes the
same bytes to the same values; and the whole frame (header v1/v2 request, v0/v1 response)
built by ``wire.codec`` decodes back to the body with its correlation id.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from kio_oracle import kio_decode, kio_to_wire
from oracle import Case, all_cases, typed, wire_decode, wire_encode, wire_project

from wire.codec import decode_request, decode_response, encode_request, encode_response
from wire.constants import (
    AcknowledgeType,
    AclOperation,
    AclPermissionType,
    AlterConfigOpType,
    ConfigResourceType,
    ErrorCode,
    PatternType,
    ResourceType,
    ShareAcquireMode,
)

TOPIC_ID = uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")
TOPIC_ID_HEX = TOPIC_ID.bytes.hex()
CASES = {c.id: c for c in all_cases()}


@dataclass(frozen=True)
class Golden:
    case_id: str
    body: dict[str, Any]
    hex: str

    @property
    def case(self) -> Case:
        return CASES[self.case_id]


GOLDEN = [
    Golden(
        "SaslAuthenticate-v0-request",
        {"auth_bytes": b"\x00alice\x00secret"},
        "0000000d" "00616c69636500736563726574",  # bytes: int32 length, PLAIN's token
    ),
    Golden(
        "SaslAuthenticate-v1-response",
        {"error_code": 0, "error_message": None, "auth_bytes": b"\x01\x02",
         "session_lifetime_ms": 3_600_000},
        "0000" "ffff"  # error_code NONE, error_message null
        "00000002" "0102"  # auth_bytes
        "000000000036ee80",  # session_lifetime_ms 3600000 (KIP-368)
    ),
    Golden(
        "SaslAuthenticate-v2-response",
        {"error_code": ErrorCode.SASL_AUTHENTICATION_FAILED, "error_message": "bad",
         "auth_bytes": b"", "session_lifetime_ms": 0},
        "003a"  # error_code SASL_AUTHENTICATION_FAILED (58)
        "04" "626164"  # error_message "bad" (compact: length + 1)
        "01"  # auth_bytes empty (compact)
        "0000000000000000"  # session_lifetime_ms 0
        "00",  # no tagged fields
    ),
    Golden(
        "CreateAcls-v3-request",
        {"creations": [{"resource_type": ResourceType.TOPIC, "resource_name": "t",
                        "resource_pattern_type": PatternType.LITERAL, "principal": "User:a",
                        "host": "*", "operation": AclOperation.READ,
                        "permission_type": AclPermissionType.ALLOW}]},
        "02"  # creations: 1
        "02" "02" "74"  # resource_type TOPIC (2), resource_name "t"
        "03"  # resource_pattern_type LITERAL (3)
        "07" "557365723a61"  # principal "User:a"
        "02" "2a"  # host "*"
        "03" "03"  # operation READ (3), permission_type ALLOW (3)
        "00"  # creations[0] tags
        "00",  # tags
    ),
    Golden(
        "DescribeAcls-v1-response",
        {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
         "resources": [{"resource_type": ResourceType.GROUP, "resource_name": "g",
                        "pattern_type": PatternType.PREFIXED,
                        "acls": [{"principal": "User:b", "host": "*",
                                  "operation": AclOperation.DESCRIBE,
                                  "permission_type": AclPermissionType.DENY}]}]},
        "00000000" "0000" "ffff"  # throttle_time_ms, error_code, error_message null
        "00000001"  # resources: 1
        "03" "0001" "67"  # resource_type GROUP (3), resource_name "g"
        "04"  # pattern_type PREFIXED (4)
        "00000001"  # acls: 1
        "0006" "557365723a62" "0001" "2a"  # principal "User:b", host "*"
        "08" "02",  # operation DESCRIBE (8), permission_type DENY (2)
    ),
    Golden(
        "IncrementalAlterConfigs-v1-request",
        {"resources": [{"resource_type": ConfigResourceType.TOPIC, "resource_name": "t",
                        "configs": [{"name": "retention.ms",
                                     "config_operation": AlterConfigOpType.SET,
                                     "value": "1000"},
                                    {"name": "cleanup.policy",
                                     "config_operation": AlterConfigOpType.DELETE,
                                     "value": None}]}],
         "validate_only": True},
        "02"  # resources: 1
        "02" "02" "74"  # resource_type TOPIC (2), resource_name "t"
        "03"  # configs: 2
        "0d" "726574656e74696f6e2e6d73" "00" "05" "31303030" "00"  # SET retention.ms=1000
        "0f" "636c65616e75702e706f6c696379" "01" "00" "00"  # DELETE cleanup.policy (null)
        "00"  # resources[0] tags
        "01"  # validate_only
        "00",
    ),
    Golden(
        "DescribeCluster-v2-response",
        {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "endpoint_type": 1,
         "cluster_id": "c", "controller_id": 1,
         "brokers": [{"broker_id": 1, "host": "h", "port": 9092, "rack": None,
                      "is_fenced": True}],
         "cluster_authorized_operations": -2147483648},
        "00000000" "0000" "00"  # throttle_time_ms, error_code, error_message null
        "01"  # endpoint_type BROKER (1)
        "02" "63" "00000001"  # cluster_id "c", controller_id 1
        "02"  # brokers: 1
        "00000001" "02" "68" "00002384" "00"  # broker 1 at h:9092, rack null
        "01" "00"  # is_fenced (KIP-1073, v2), broker tags
        "80000000"  # cluster_authorized_operations: not requested
        "00",
    ),
    Golden(
        "DescribeClientQuotas-v1-response",
        {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
         "entries": [{"entity": [{"entity_type": "user", "entity_name": "alice"}],
                      "values": [{"key": "producer_byte_rate", "value": 1024.0}]}]},
        "00000000" "0000" "00"  # throttle_time_ms, error_code, error_message null
        "02"  # entries: 1
        "02" "05" "75736572" "06" "616c696365" "00"  # entity user=alice
        "02" "13" "70726f64756365725f627974655f72617465"  # values: producer_byte_rate
        "4090000000000000" "00"  # = 1024.0 (float64, big-endian IEEE 754)
        "00"  # entries[0] tags
        "00",
    ),
    Golden(
        "ShareFetch-v2-request",
        {"group_id": "g", "member_id": "m", "share_session_epoch": 0, "max_wait_ms": 500,
         "min_bytes": 1, "max_bytes": 52428800, "max_records": 500, "batch_size": 500,
         "share_acquire_mode": ShareAcquireMode.RECORD_LIMIT, "is_renew_ack": True,
         "topics": [{"topic_id": TOPIC_ID, "partitions": [
             {"partition_index": 0, "acknowledgement_batches": [
                 {"first_offset": 5, "last_offset": 6,
                  "acknowledge_types": [AcknowledgeType.ACCEPT, AcknowledgeType.RENEW]}]}]}],
         "forgotten_topics_data": []},
        "02" "67" "02" "6d"  # group_id "g", member_id "m"
        "00000000" "000001f4" "00000001"  # share_session_epoch 0, max_wait_ms 500, min_bytes
        "03200000" "000001f4" "000001f4"  # max_bytes 50 MiB, max_records, batch_size 500
        "01" "01"  # share_acquire_mode RECORD_LIMIT (1), is_renew_ack (KIP-1222)
        "02" + TOPIC_ID_HEX +  # topics: 1
        "02" "00000000"  # partitions: 1, partition_index 0
        "02" "0000000000000005" "0000000000000006"  # acknowledgement_batches: offsets 5-6
        "03" "01" "04" "00"  # acknowledge_types [ACCEPT, RENEW], batch tags
        "00" "00"  # partition tags, topic tags
        "01"  # forgotten_topics_data: none
        "00",
    ),
    Golden(
        "ShareAcknowledge-v2-response",
        {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
         "acquisition_lock_timeout_ms": 30_000,
         "responses": [{"topic_id": TOPIC_ID, "partitions": [
             {"partition_index": 0, "error_code": ErrorCode.INVALID_RECORD_STATE,
              "error_message": None, "current_leader": {"leader_id": 1, "leader_epoch": 0}}]}],
         "node_endpoints": []},
        "00000000" "0000" "00"  # throttle_time_ms, error_code, error_message null
        "00007530"  # acquisition_lock_timeout_ms 30000 (v2)
        "02" + TOPIC_ID_HEX +  # responses: 1
        "02" "00000000" "0079" "00"  # partition 0: INVALID_RECORD_STATE (121), message null
        "00000001" "00000000" "00"  # current_leader 1, epoch 0, its tags
        "00" "00"  # partition tags, topic tags
        "01"  # node_endpoints: none
        "00",
    ),
    Golden(
        "DescribeShareGroupOffsets-v1-response",
        {"throttle_time_ms": 0, "groups": [
            {"group_id": "g", "topics": [
                {"topic_name": "t", "topic_id": TOPIC_ID, "partitions": [
                    {"partition_index": 0, "start_offset": 7, "leader_epoch": 0, "lag": 3,
                     "error_code": 0, "error_message": None}]}],
             "error_code": 0, "error_message": None}]},
        "00000000"  # throttle_time_ms
        "02" "02" "67"  # groups: 1, group_id "g"
        "02" "02" "74" + TOPIC_ID_HEX +  # topics: 1, topic_name "t", topic_id
        "02" "00000000" "0000000000000007" "00000000"  # partition 0, start 7, epoch 0
        "0000000000000003"  # lag 3 (KIP-1226, v1)
        "0000" "00" "00"  # error_code, error_message null, partition tags
        "00"  # topic tags
        "0000" "00" "00"  # group error_code, error_message null, group tags
        "00",
    ),
    Golden(
        "ListConfigResources-v0-response",
        {"throttle_time_ms": 0, "error_code": 0, "config_resources": [{"resource_name": "m"}]},
        "00000000" "0000" "02" "02" "6d" "00" "00",  # v0: names only (client metrics)
    ),
    Golden(
        "ListConfigResources-v1-response",
        {"throttle_time_ms": 0, "error_code": 0,
         "config_resources": [{"resource_name": "t",
                               "resource_type": ConfigResourceType.TOPIC}]},
        "00000000" "0000" "02" "02" "74" "02" "00" "00",  # v1 adds resource_type (TOPIC)
    ),
]
IDS = [g.case_id for g in GOLDEN]


@pytest.mark.parametrize("golden", GOLDEN, ids=IDS)
@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "reference"])
def test_wire_matches_golden(golden: Golden, compiled: bool) -> None:
    case = golden.case
    data = bytes.fromhex(golden.hex)
    assert wire_encode(case, golden.body, compiled=compiled).hex() == golden.hex
    decoded = wire_decode(case, data, compiled=compiled)
    assert typed(wire_project(decoded, case.message.fields, case.version)) == typed(
        _plain(golden.body))
    assert wire_encode(case, decoded, compiled=compiled) == data


@pytest.mark.parametrize("golden", GOLDEN, ids=IDS)
def test_kio_reads_the_golden_bytes_alike(golden: Golden) -> None:
    case = golden.case
    assert case.kio_class is not None
    obj = kio_decode(case.kio_class, bytes.fromhex(golden.hex))
    expected = _plain(golden.body)
    assert typed(kio_to_wire(obj, case.message.fields, case.version)) == typed(expected)


@pytest.mark.parametrize("golden", GOLDEN, ids=IDS)
def test_whole_frames(golden: Golden) -> None:
    case = golden.case
    api_key, version = case.spec.api_key, case.version
    if case.direction == "request":
        framed = encode_request(api_key, version, 77, "client", golden.body)
        assert framed.endswith(bytes.fromhex(golden.hex))
        request = decode_request(framed[4:])
        assert (request.api_key, request.api_version) == (api_key, version)
        assert (request.correlation_id, request.client_id) == (77, "client")
        body = request.body
    else:
        framed = encode_response(api_key, version, 77, golden.body)
        assert framed.endswith(bytes.fromhex(golden.hex))
        correlation_id, body = decode_response(api_key, version, framed[4:])
        assert correlation_id == 77
    assert int.from_bytes(framed[:4], "big") == len(framed) - 4
    assert wire_project(body, case.message.fields, version) == _plain(golden.body)


def _plain(value: Any) -> Any:
    """IntEnum constants as the ints wire decodes."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    return value
