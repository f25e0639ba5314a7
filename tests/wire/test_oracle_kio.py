"""kio as an oracle for the wire layer.

For every registered (api, version, direction) that kio 0.6.5 has a schema for:

* Hypothesis draws kio objects; kio's bytes decode with ``wire`` to the same values
  (field by field, after normalizing kio's types and names), and ``wire`` encoding those
  values gives byte-for-byte kio's bytes, which kio decodes back to the same object;
* the same for a deterministic "full" sample (every field non-null and non-default, every
  array one element) and a "minimal" one (nulls, empty arrays, defaults), also framed with
  headers through ``wire.codec`` against kio's header schemas;
* ``wire``'s field defaults equal kio's (i.e. Kafka's JSON ``default``).

Then explicit edge cases: null vs empty strings / arrays / records, the zero UUID, tagged
fields present and absent, and unknown tags preserved from decode to encode.

``KCOORD_ORACLE_EXAMPLES`` overrides the number of Hypothesis examples per case (12 in
the default run, to keep it under ten minutes; CI runs 60 in a step of its own).
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import uuid
from dataclasses import MISSING
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from kio.index import load_request_schema, load_response_schema
from kio.schema.errors import ErrorCode
from kio.schema.index import api_key_map, schema_name_map
from kio.serial._introspect import classify_field
from kio.static.constants import EntityType
from kio.static.primitive import i32Timedelta
from kio_oracle import (
    iter_kio_fields,
    kio_decode,
    kio_encode,
    kio_full_sample,
    kio_implicit_default,
    kio_minimal_sample,
    kio_strategy,
    kio_to_wire,
    kio_value,
)
from oracle import (
    ZERO_UUID,
    Case,
    assert_absent_at_defaults,
    kio_cases,
    to_plain,
    typed,
    wire_decode,
    wire_encode,
    wire_project,
)

import wire
from wire.codec import decode_request, decode_response, encode_request, encode_response
from wire.framing import frame
from wire.header import request_header_version, response_header_version
from wire.schema import UNKNOWN_TAGS

KIO_CASES = kio_cases()
IDS = [c.id for c in KIO_CASES]
EXAMPLES = int(os.environ.get("KCOORD_ORACLE_EXAMPLES", "12"))


def check_against_kio(case: Case, obj: Any) -> None:
    """kio bytes -> wire values == kio values; wire bytes == kio bytes; kio reads them."""
    cls = type(obj)
    fields, version = case.message.fields, case.version
    kio_bytes = kio_encode(obj)
    expected = kio_to_wire(obj, fields, version)

    decoded = wire_decode(case, kio_bytes)
    assert typed(wire_project(decoded, fields, version)) == typed(expected)
    assert_absent_at_defaults(decoded, fields, version)

    wire_bytes = wire_encode(case, expected)
    assert wire_bytes.hex() == kio_bytes.hex()
    assert kio_decode(cls, wire_bytes) == obj
    # what wire decoded re-encodes to the same bytes
    assert wire_encode(case, decoded) == kio_bytes


# ---------------------------------------------------------------------------------------
# coverage
# ---------------------------------------------------------------------------------------


def test_covers_every_version_kio_has() -> None:
    """The parametrization is exactly wire's registered versions intersected with kio's
    schemas (computed here from kio's index, independently of the oracle helpers)."""
    expected = set()
    for spec in wire.all_apis():
        kio_versions = schema_name_map.get(api_key_map.get(spec.api_key, ""), {})
        for version in range(spec.min_version, spec.max_version + 1):
            entities = kio_versions.get(version, {})
            for direction, entity in (
                ("request", EntityType.request),
                ("response", EntityType.response),
            ):
                if entity in entities:
                    expected.add(f"{spec.name}-v{version}-{direction}")
    assert expected, "kio has none of the registered APIs?"
    missing = sorted(expected - set(IDS))
    assert not missing, f"kio schemas not covered: {missing}"
    assert set(IDS) == expected


# ---------------------------------------------------------------------------------------
# Hypothesis: random kio objects, both directions
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", KIO_CASES, ids=IDS)
def test_wire_agrees_with_kio(case: Case) -> None:
    """kio-encoded bytes decode with wire to kio's values, and wire encodes those values to
    kio's bytes exactly (which kio decodes back to an equal object)."""
    assert case.kio_class is not None

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(kio_strategy(case.kio_class))
    def run(obj: Any) -> None:
        check_against_kio(case, obj)

    run()


# ---------------------------------------------------------------------------------------
# deterministic samples
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", KIO_CASES, ids=IDS)
def test_full_sample(case: Case) -> None:
    """Every field set (non-null, non-default, distinct), every array one element."""
    assert case.kio_class is not None
    obj = kio_full_sample(case.kio_class)
    check_against_kio(case, obj)
    # The sample really sets every field: nothing null, empty or at wire's default.
    assert_non_default(wire_decode(case, kio_encode(obj)), case)


def assert_non_default(decoded: Any, case: Case) -> None:
    def walk(obj: Any, fields: Any, where: str) -> None:
        for f in fields:
            if not f.present_in(case.version):
                continue
            value = obj[f.name]
            assert value is not None, f"{where}.{f.name} is null in the full sample"
            if f.type == "struct":
                walk(value, f.fields, f"{where}.{f.name}")
            elif f.type.startswith("[]"):
                assert len(value) == 1, f"{where}.{f.name} has {len(value)} elements"
                if f.type == "[]":
                    walk(value[0], f.fields, f"{where}.{f.name}[0]")
            else:
                assert to_plain(value) != to_plain(f.default_value()), (
                    f"{where}.{f.name} is at its default in the full sample"
                )

    walk(decoded, case.message.fields, case.id)


@pytest.mark.parametrize("case", KIO_CASES, ids=IDS)
def test_minimal_sample(case: Case) -> None:
    """Nullable fields null, arrays empty, scalars at their defaults (tags absent)."""
    assert case.kio_class is not None
    check_against_kio(case, kio_minimal_sample(case.kio_class))


@pytest.mark.parametrize("case", KIO_CASES, ids=IDS)
def test_framed_with_headers(case: Case) -> None:
    """wire.codec frames (header + body) equal kio's header + body, and decode back."""
    assert case.kio_class is not None
    obj = kio_full_sample(case.kio_class)
    body = kio_to_wire(obj, case.message.fields, case.version)
    spec, version = case.spec, case.version
    header_schema = case.kio_class.__header_schema__
    if case.direction == "request":
        assert header_schema.__version__ == request_header_version(spec, version)
        header = header_schema(
            request_api_key=spec.api_key,
            request_api_version=version,
            correlation_id=0x01020304,
            client_id="client-\u00e9",
        )
        expected = frame(kio_encode(header) + kio_encode(obj))
        framed = encode_request(spec.api_key, version, 0x01020304, "client-\u00e9", body)
        assert framed.hex() == expected.hex()
        decoded = decode_request(framed[4:])
        assert (decoded.api_key, decoded.api_version, decoded.correlation_id) == (
            spec.api_key,
            version,
            0x01020304,
        )
        assert decoded.client_id == "client-\u00e9"
        assert wire_project(decoded.body, case.message.fields, version) == body
    else:
        assert header_schema.__version__ == response_header_version(spec, version)
        header = header_schema(correlation_id=-7)
        expected = frame(kio_encode(header) + kio_encode(obj))
        framed = encode_response(spec.api_key, version, -7, body)
        assert framed.hex() == expected.hex()
        correlation_id, decoded_body = decode_response(spec.api_key, version, framed[4:])
        assert correlation_id == -7
        assert wire_project(decoded_body, case.message.fields, version) == body


@pytest.mark.parametrize("case", KIO_CASES, ids=IDS)
def test_defaults_match_kio(case: Case) -> None:
    """wire's defaults (what absent and tagged fields take) are Kafka's, as kio has them."""
    assert case.kio_class is not None
    for path, kf, wf in iter_kio_fields(case.kio_class, case.message.fields, case.version):
        default = kf.default
        if default is MISSING and kf.default_factory is not MISSING:
            default = kf.default_factory()
        if default is MISSING and wf.default == "null" and wf.nullable_in(case.version):
            # Kafka's explicit "default": "null" on a nullable array or struct: kio's
            # generated class has no default for it at all.
            assert wf.default_value() is None, path
            continue
        if default is MISSING:
            default = kio_implicit_default(kf)
        expected = kio_value(kf, wf, default, case.version)
        assert to_plain(wf.default_value()) == expected, path


# ---------------------------------------------------------------------------------------
# explicit edge cases, each checked against kio too
# ---------------------------------------------------------------------------------------


def _case(name: str, version: int, direction: str) -> Case:
    for case in KIO_CASES:
        if (case.spec.name, case.version, case.direction) == (name, version, direction):
            return case
    raise LookupError(name)


def _kio(api_key: int, version: int, direction: str, /, **kwargs: Any) -> Any:
    loader = load_request_schema if direction == "request" else load_response_schema
    cls = loader(api_key, version)
    return cls(**kwargs)


def _both_ways(case: Case, body: dict[str, Any], hex_: str, kio_obj: Any) -> None:
    """wire encodes ``body`` to ``hex_``, decodes ``hex_`` to ``body``; kio agrees."""
    data = bytes.fromhex(hex_)
    for compiled in (True, False):
        assert wire_encode(case, body, compiled=compiled).hex() == hex_
        decoded = wire_decode(case, data, compiled=compiled)
        assert wire_project(decoded, case.message.fields, case.version) == body
    assert kio_encode(kio_obj).hex() == hex_
    assert kio_decode(type(kio_obj), data) == kio_obj


@pytest.mark.parametrize(
    ("version", "topics", "kio_topics", "hex_"),
    [
        (1, None, None, "ffffffff"),
        (1, [], (), "00000000"),
        # flexible: compact array (0 = null, n + 1 otherwise), then the v4+ / v8+ bools
        (9, None, None, "00" "01" "00" "00" "00"),
        (9, [], (), "01" "01" "00" "00" "00"),
    ],
    ids=["legacy-null", "legacy-empty", "compact-null", "compact-empty"],
)
def test_null_vs_empty_array(
    version: int, topics: list[Any] | None, kio_topics: tuple[Any, ...] | None, hex_: str
) -> None:
    case = _case("Metadata", version, "request")
    body: dict[str, Any] = {"topics": topics}
    kio_kwargs: dict[str, Any] = {"topics": kio_topics}
    if version >= 4:
        body["allow_auto_topic_creation"] = True
        kio_kwargs["allow_auto_topic_creation"] = True
    if version >= 8:
        body |= {
            "include_cluster_authorized_operations": False,
            "include_topic_authorized_operations": False,
        }
        kio_kwargs |= {
            "include_cluster_authorized_operations": False,
            "include_topic_authorized_operations": False,
        }
    _both_ways(case, body, hex_, _kio(3, version, "request", **kio_kwargs))


@pytest.mark.parametrize(
    ("version", "instance_id", "hex_"),
    [
        (3, None, "0001" "67" "00000001" "0001" "6d" "ffff"),
        (3, "", "0001" "67" "00000001" "0001" "6d" "0000"),
        (4, None, "02" "67" "00000001" "02" "6d" "00" "00"),
        (4, "", "02" "67" "00000001" "02" "6d" "01" "00"),
    ],
    ids=["legacy-null", "legacy-empty", "compact-null", "compact-empty"],
)
def test_null_vs_empty_string(version: int, instance_id: str | None, hex_: str) -> None:
    case = _case("Heartbeat", version, "request")
    body = {
        "group_id": "g",
        "generation_id": 1,
        "member_id": "m",
        "group_instance_id": instance_id,
    }
    _both_ways(case, body, hex_, _kio(12, version, "request", **body))


@pytest.mark.parametrize(
    ("version", "records", "records_hex"),
    [
        (3, None, "ffffffff"),
        (3, b"", "00000000"),
        (3, b"\x01\x02", "00000002" "0102"),
        (9, None, "00"),
        (9, b"", "01"),
        (9, b"\x01\x02", "03" "0102"),
    ],
    ids=["legacy-null", "legacy-empty", "legacy-2", "compact-null", "compact-empty", "compact-2"],
)
def test_records_null_vs_empty(version: int, records: bytes | None, records_hex: str) -> None:
    case = _case("Produce", version, "request")
    body = {
        "transactional_id": None,
        "acks": -1,
        "timeout_ms": 1000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": records}]}],
    }
    if version < 9:
        hex_ = "ffff" "ffff" "000003e8" "00000001" "0001" "74" "00000001" "00000000" + records_hex
    else:
        hex_ = "00" "ffff" "000003e8" "02" "02" "74" "02" "00000000" + records_hex + "00" "00" "00"
    kio_obj = _kio(0, version, "request", transactional_id=None, acks=-1, timeout=_ms(1000),
                   topic_data=(_kio_nested(0, version, "request", "topic_data", name="t",
                               partition_data=(_kio_nested(0, version, "request",
                                               "topic_data.partition_data", index=0,
                                               records=records),)),))
    _both_ways(case, body, hex_, kio_obj)


def _ms(ms: int) -> Any:
    return i32Timedelta.parse(datetime.timedelta(milliseconds=ms))


def _kio_nested(api_key: int, version: int, direction: str, path: str, /, **kwargs: Any) -> Any:
    """An instance of the kio dataclass at ``path`` (dotted field names) of a message."""
    loader = load_request_schema if direction == "request" else load_response_schema
    cls: Any = loader(api_key, version)
    for name in path.split("."):
        field = next(f for f in dataclasses.fields(cls) if f.name == name)
        cls = classify_field(field).type_
    return cls(**kwargs)


@pytest.mark.parametrize(
    "topic_id",
    [ZERO_UUID, uuid.UUID("00112233-4455-6677-8899-aabbccddeeff")],
    ids=["zero", "nonzero"],
)
def test_uuid(topic_id: uuid.UUID) -> None:
    """The all-zero UUID is 16 zero bytes (kio reads it as None), others are their bytes."""
    case = _case("Metadata", 10, "request")
    kio_topic_id = None if topic_id == ZERO_UUID else topic_id
    body = {
        "topics": [{"topic_id": topic_id, "name": None}],
        "allow_auto_topic_creation": False,
        "include_cluster_authorized_operations": False,
        "include_topic_authorized_operations": True,
    }
    hex_ = "02" + topic_id.bytes.hex() + "00" "00" "00" "00" "01" "00"
    kio_obj = _kio(
        3, 10, "request",
        topics=(_kio_nested(3, 10, "request", "topics", topic_id=kio_topic_id, name=None),),
        allow_auto_topic_creation=False,
        include_cluster_authorized_operations=False,
        include_topic_authorized_operations=True,
    )
    _both_ways(case, body, hex_, kio_obj)
    assert wire_decode(case, bytes.fromhex(hex_)).topics[0].topic_id == topic_id


@pytest.mark.parametrize(
    ("cluster_id", "tags_hex"),
    [(None, "00"), ("", "01" "00" "01" "01"), ("c", "01" "00" "02" "0263")],
    ids=["absent", "empty-string", "present"],
)
def test_tagged_string_present_and_absent(cluster_id: str | None, tags_hex: str) -> None:
    """Fetch v12's tagged ClusterId (default null): written only when not null."""
    case = _case("Fetch", 12, "request")
    body = {
        "cluster_id": cluster_id,
        "replica_id": -1,
        "max_wait_ms": 500,
        "min_bytes": 1,
        "max_bytes": 1024,
        "isolation_level": 1,
        "session_id": 0,
        "session_epoch": -1,
        "topics": [],
        "forgotten_topics_data": [],
        "rack_id": "",
    }
    hex_ = (
        "ffffffff" "000001f4" "00000001" "00000400" "01" "00000000" "ffffffff"
        "01" "01" "01" + tags_hex
    )
    kio_obj = _kio(
        1, 12, "request", cluster_id=cluster_id, replica_id=-1, max_wait=_ms(500),
        min_bytes=1, max_bytes=1024, isolation_level=1, session_id=0, session_epoch=-1,
        topics=(), forgotten_topics_data=(), rack_id="",
    )
    _both_ways(case, body, hex_, kio_obj)


@pytest.mark.parametrize(
    ("epoch", "ready", "tags_hex"),
    [
        (-1, False, "00"),
        (0, False, "01" "01" "08" "0000000000000000"),
        (-1, True, "01" "03" "01" "01"),
        (5, True, "02" "01" "08" "0000000000000005" "03" "01" "01"),
    ],
    ids=["both-absent", "epoch-zero-present", "bool-present", "both-present"],
)
def test_tagged_scalars_present_and_absent(epoch: int, ready: bool, tags_hex: str) -> None:
    """ApiVersions v3 response: FinalizedFeaturesEpoch (tag 1, default -1) and
    ZkMigrationReady (tag 3, default false) are written iff they differ from the default,
    in tag order."""
    case = _case("ApiVersions", 3, "response")
    body = {
        "error_code": 0,
        "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 4}],
        "throttle_time_ms": 0,
        "supported_features": [],
        "finalized_features_epoch": epoch,
        "finalized_features": [],
        "zk_migration_ready": ready,
    }
    hex_ = "0000" "02" "0012" "0000" "0004" "00" "00000000" + tags_hex
    kio_obj = _kio(
        18, 3, "response", error_code=_error(0),
        api_keys=(_kio_nested(18, 3, "response", "api_keys", api_key=18, min_version=0,
                              max_version=4),),
        throttle_time=_ms(0), supported_features=(), finalized_features_epoch=epoch,
        finalized_features=(), zk_migration_ready=ready,
    )
    _both_ways(case, body, hex_, kio_obj)


def _error(code: int) -> Any:
    return ErrorCode(code)


@pytest.mark.parametrize(
    ("leader", "tags_hex"),
    [((-1, -1), "00"), ((3, -1), "01" "00" "09" "00000003" "ffffffff" "00")],
    ids=["struct-absent", "struct-present"],
)
def test_tagged_struct_present_and_absent(leader: tuple[int, int], tags_hex: str) -> None:
    """Produce v10 response: the tagged CurrentLeader struct is written only when it differs
    from its default (-1, -1); its own tag section follows its fields."""
    case = _case("Produce", 10, "response")
    partition = {
        "index": 0, "error_code": 0, "base_offset": 7, "log_append_time_ms": -1,
        "log_start_offset": 0, "record_errors": [], "error_message": None,
        "current_leader": {"leader_id": leader[0], "leader_epoch": leader[1]},
    }
    body = {
        "responses": [{"name": "t", "partition_responses": [partition]}],
        "throttle_time_ms": 0,
        "node_endpoints": [],
    }
    hex_ = (
        "02" "02" "74" "02" "00000000" "0000" "0000000000000007" "ffffffffffffffff"
        "0000000000000000" "01" "00" + tags_hex + "00" "00000000" "00"
    )
    kio_partition = _kio_nested(
        0, 10, "response", "responses.partition_responses", index=0, error_code=_error(0),
        base_offset=7, log_append_time=None, log_start_offset=0, record_errors=(),
        error_message=None,
        current_leader=_kio_nested(0, 10, "response",
                                   "responses.partition_responses.current_leader",
                                   leader_id=leader[0], leader_epoch=leader[1]),
    )
    kio_obj = _kio(
        0, 10, "response",
        responses=(_kio_nested(0, 10, "response", "responses", name="t",
                               partition_responses=(kio_partition,)),),
        throttle_time=_ms(0), node_endpoints=(),
    )
    _both_ways(case, body, hex_, kio_obj)


# -- unknown tagged fields ---------------------------------------------------------------

HEARTBEAT_V4 = "02" "67" "00000001" "02" "6d" "00"


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "reference"])
def test_unknown_tags_preserved(compiled: bool) -> None:
    """Unknown tags (top level and nested) are kept raw and written back in tag order,
    merged with known ones. (kio rejects unknown tags, so it only reads the message once
    they are dropped.)"""
    # Heartbeat v4 request, top-level tags 5 -> 0102 and 9 -> (empty)
    case = _case("Heartbeat", 4, "request")
    data = bytes.fromhex(HEARTBEAT_V4 + "02" "05" "02" "0102" "09" "00")
    decoded = wire_decode(case, data, compiled=compiled)
    assert decoded[UNKNOWN_TAGS] == {5: b"\x01\x02", 9: b""}
    assert wire_encode(case, decoded, compiled=compiled) == data
    # without the key nothing extra is written, and kio (which rejects unknown tags) reads
    # what is left
    del decoded[UNKNOWN_TAGS]
    stripped = wire_encode(case, decoded, compiled=compiled)
    assert stripped == bytes.fromhex(HEARTBEAT_V4 + "00")
    assert kio_decode(load_request_schema(12, 4), stripped) == _kio(
        12, 4, "request", group_id="g", generation_id=1, member_id="m", group_instance_id=None
    )

    # Fetch v12 request: known tag 0 (cluster_id) and unknown tag 3 interleave in order;
    # a nested unknown tag in a topic element is kept on that element.
    fetch = _case("Fetch", 12, "request")
    data = bytes.fromhex(
        "ffffffff" "000001f4" "00000001" "00000400" "00" "00000000" "ffffffff"
        "02" "02" "74"  # topics: [{topic: "t",
        "01"  # partitions: [],
        "01" "07" "01" "ff"  # tags: {7: ff}}]
        "01" "01"  # forgotten_topics_data: [], rack_id: ""
        "02" "00" "02" "0263" "03" "01" "aa"  # tags: {0: cluster_id "c", 3: aa}
    )
    decoded = wire_decode(fetch, data, compiled=compiled)
    assert decoded.cluster_id == "c"
    assert decoded[UNKNOWN_TAGS] == {3: b"\xaa"}
    assert decoded.topics[0][UNKNOWN_TAGS] == {7: b"\xff"}
    assert wire_encode(fetch, decoded, compiled=compiled) == data
    del decoded[UNKNOWN_TAGS]
    del decoded.topics[0][UNKNOWN_TAGS]
    kio_obj = kio_decode(load_request_schema(1, 12), wire_encode(fetch, decoded))
    assert kio_obj.cluster_id == "c"
    assert kio_obj.topics[0].topic == "t"


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "reference"])
def test_tags_out_of_order_rejected(compiled: bool) -> None:
    case = _case("Heartbeat", 4, "request")
    data = bytes.fromhex(HEARTBEAT_V4 + "02" "09" "00" "05" "00")
    with pytest.raises(Exception, match="out of order"):
        wire_decode(case, data, compiled=compiled)
