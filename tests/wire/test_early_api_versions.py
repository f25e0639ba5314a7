"""``wire.early_api_versions``: the construct-free ApiVersions path equals the codec, byte
for byte, and declines everything but the well-formed case."""

from __future__ import annotations

import struct
import subprocess
import sys

import pytest

import wire
from wire.early_api_versions import (
    EarlyApiVersionsRequest,
    decode_api_versions_request,
    encode_api_versions_response,
)

VERSIONS = wire.lookup(wire.ApiKey.API_VERSIONS).request.version_range  # type: ignore[union-attr]
KEYS = [
    {"api_key": 0, "min_version": 0, "max_version": 11},
    {"api_key": 18, "min_version": 0, "max_version": 4},
    {"api_key": 300, "min_version": 2, "max_version": 200},
]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("api_keys", [KEYS, [], KEYS * 50], ids=["three", "none", "150"])
@pytest.mark.parametrize("error_code", [0, 35, 42])
@pytest.mark.parametrize("correlation_id", [0, 7, -(2**31), 2**31 - 1])
def test_response_equals_the_codec(
    version: int, api_keys: list[dict[str, int]], error_code: int, correlation_id: int
) -> None:
    body = {"error_code": error_code, "api_keys": api_keys, "throttle_time_ms": 0}
    expected = wire.encode_response(18, version, correlation_id, body)
    assert encode_api_versions_response(version, correlation_id, error_code, api_keys) == expected


FEATURES = [
    {},
    {"supported_features": [], "finalized_features": [], "finalized_features_epoch": -1},
    {"supported_features": [{"name": "transaction.version", "min_version": 0,
                             "max_version": 2}],
     "finalized_features": [{"name": "transaction.version", "max_version_level": 2,
                             "min_version_level": 2}],
     "finalized_features_epoch": 0},
    {"supported_features": [], "finalized_features_epoch": 7,
     "finalized_features": [{"name": "a", "max_version_level": 1, "min_version_level": 0},
                            {"name": "é" * 70, "max_version_level": -1,
                             "min_version_level": 32767}]},
]


@pytest.mark.parametrize("version", [v for v in VERSIONS if v >= 3])
@pytest.mark.parametrize("features", FEATURES, ids=["none", "defaults", "tv2", "odd"])
def test_feature_fields_equal_the_codec(version: int, features: dict[str, object]) -> None:
    body = {"error_code": 0, "api_keys": KEYS, "throttle_time_ms": 0, **features}
    expected = wire.encode_response(18, version, 9, body)
    assert encode_api_versions_response(version, 9, 0, KEYS, features) == expected


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("client_id", [None, "", "kafka-python-2.0", "é"])
def test_request_decodes_as_the_codec_does(version: int, client_id: str | None) -> None:
    body = {"client_software_name": "librdkafka", "client_software_version": "2.3.0-x"}
    frame = wire.encode_request(18, version, 41, client_id, body)
    decoded = wire.decode_request(frame[4:])
    flexible = version >= 3
    assert decode_api_versions_request(frame[4:]) == EarlyApiVersionsRequest(
        version,
        41,
        decoded.body.client_software_name if flexible else "",
        decoded.body.client_software_version if flexible else "",
    )


def _v3(body: bytes, header_tags: bytes = b"\x00", version: int = 3) -> bytes:
    return struct.pack(">hhih", 18, version, 1, 1) + b"c" + header_tags + body


def test_declines_what_it_cannot_answer_exactly() -> None:
    good = b"\x03ab\x021\x00"
    assert decode_api_versions_request(_v3(good)) == EarlyApiVersionsRequest(3, 1, "ab", "1")
    heartbeat = wire.encode_request(12, 0, 1, "c", {"group_id": "g", "member_id": "m"})
    declined = [
        heartbeat[4:],  # another API
        _v3(good, version=5),  # a version wire does not serve: the server answers v0
        _v3(good, version=-1),
        _v3(good)[:5],  # shorter than a header
        _v3(good)[:-1],  # truncated body
        _v3(good) + b"\x00",  # trailing bytes
        _v3(good, header_tags=b"\x01\x05\x00"),  # a tagged field in the header
        _v3(b"\x03ab\x021\x01\x05\x00"),  # a tagged field in the body
        _v3(b"\x00\x021\x00"),  # a null software name
        _v3(b"\x03\xff\xfe\x021\x00"),  # not UTF-8
        _v3(b"\xff\xff\xff\xff\xff\x021\x00"),  # a varint too long
    ]
    for payload in declined:
        assert decode_api_versions_request(payload) is None, payload


def test_importing_it_imports_no_codec() -> None:
    code = (
        "import sys, wire.early_api_versions, wire; "
        "assert wire.all_apis(); "
        "print(sorted(m for m in sys.modules if m == 'construct' or m == 'wire.codec'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert out.strip() == "[]"
