"""ApiVersions, Metadata, FindCoordinator, CreateTopics, DeleteTopics and InitProducerId
handlers, every version each serves, through the real codec (and kio where it knows the
version)."""

from __future__ import annotations

import uuid

import pytest
from broker_support import BROKER_HANDLERS, IDENTITY, VERSIONS, FakeState, call

import wire
from coordinator.server.apis import SERVED_API_KEYS
from coordinator.server.apis.api_versions import advertised_api_versions
from wire import ErrorCode

ZERO = uuid.UUID(int=0)
ALL_TOPIC_OPS = 3576
NOT_REQUESTED = -(2**31)


def test_every_handler_is_registered_with_its_api_key() -> None:
    assert sorted(BROKER_HANDLERS) == [0, 1, 2, 3, 10, 17, 18, 19, 20, 21, 22, 23, 32, 34, 35,
                                       36, 37, 43, 45, 46, 48, 49, 55, 60, 61, 74, 75, 78, 79]
    for key in BROKER_HANDLERS:
        assert wire.lookup(key) is not None


# -- ApiVersions -------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS[18])
async def test_api_versions(state: FakeState, version: int) -> None:
    body = {"client_software_name": "kafka-python", "client_software_version": "3.0.12"}
    got = await call(state, 18, version, body)
    assert got is not None and got.error_code == 0
    listed = {k.api_key: (k.min_version, k.max_version) for k in got.api_keys}
    expected = {
        k["api_key"]: (k["min_version"], k["max_version"])
        for k in wire.api_versions_keys()
        if k["api_key"] in SERVED_API_KEYS
    }
    assert listed[0] == (0, expected[0][1])  # Produce from v0 (KAFKA-18659)
    del listed[0], expected[0]
    assert listed == expected
    assert got.throttle_time_ms == 0


def test_advertised_versions_do_not_change_the_registry() -> None:
    advertised_api_versions(SERVED_API_KEYS)
    produce = wire.lookup(0)
    assert produce is not None and produce.min_version == 3


@pytest.mark.parametrize("version", [3, 4])
@pytest.mark.parametrize("name", ["", "kafka python", "-x", "x-"])
async def test_api_versions_refuses_bad_software_names(
    state: FakeState, version: int, name: str
) -> None:
    body = {"client_software_name": name, "client_software_version": "1.0"}
    got = await call(state, 18, version, body)
    assert got is not None and got.error_code == ErrorCode.INVALID_REQUEST
    assert got.api_keys == []


# -- Metadata ----------------------------------------------------------------------------


def _metadata_request(version: int, names: list[str] | None, **extra: object) -> dict[str, object]:
    topics = None if names is None else [{"name": n} for n in names]
    return {"topics": topics, **extra}


@pytest.mark.parametrize("version", VERSIONS[3])
async def test_metadata_describes_the_broker_and_topics(state: FakeState, version: int) -> None:
    topic = state.topics.create_topic("orders", 3)
    got = await call(state, 3, version, _metadata_request(version, ["orders"]))
    assert got is not None
    assert [(b.node_id, b.host, b.port) for b in got.brokers] == [(0, "127.0.0.1", 19092)]
    if version >= 1:
        assert got.controller_id == 0
    if version >= 2:
        assert got.cluster_id == IDENTITY.cluster_id
    [entry] = got.topics
    assert (entry.name, entry.error_code, entry.is_internal) == ("orders", 0, False)
    assert entry.topic_id == (topic.topic_id if version >= 10 else ZERO)
    assert [p.partition_index for p in entry.partitions] == [0, 1, 2]
    for p in entry.partitions:
        assert (p.error_code, p.leader_id, list(p.replica_nodes), list(p.isr_nodes)) == (
            0,
            0,
            [0],
            [0],
        )
        assert p.leader_epoch == (0 if version >= 7 else -1)  # the field is v7+


@pytest.mark.parametrize("version", VERSIONS[3])
async def test_metadata_all_and_none(state: FakeState, version: int) -> None:
    state.topics.create_topic("b", 1)
    state.topics.create_topic("a", 2)
    got = await call(state, 3, version, {"topics": None if version >= 1 else []})
    assert got is not None
    assert [t.name for t in got.topics] == ["a", "b", "__consumer_offsets", "__transaction_state"]
    if version >= 1:  # v0 has no is_internal
        assert [t.is_internal for t in got.topics] == [False, False, True, True]
    if version >= 1:
        got = await call(state, 3, version, {"topics": []})
        assert got is not None and got.topics == []


@pytest.mark.parametrize("version", VERSIONS[3])
async def test_metadata_auto_creates_requested_topics(state: FakeState, version: int) -> None:
    state.config["num.partitions"] = "4"
    got = await call(state, 3, version, _metadata_request(version, ["new", "new"]))
    assert got is not None
    [entry] = got.topics
    assert entry.error_code == 0 and len(entry.partitions) == 4
    assert "new" in state.topics


@pytest.mark.parametrize("version", VERSIONS[3])
async def test_metadata_without_auto_creation(state: FakeState, version: int) -> None:
    state.config["auto.create.topics.enable"] = "false"
    got = await call(state, 3, version, _metadata_request(version, ["nope", "bad name"]))
    assert got is not None
    assert [(t.name, t.error_code) for t in got.topics] == [
        ("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        ("bad name", ErrorCode.INVALID_TOPIC_EXCEPTION),
    ]
    assert len(state.topics) == 0


@pytest.mark.parametrize("version", [v for v in VERSIONS[3] if v >= 4])
async def test_metadata_honours_allow_auto_topic_creation(state: FakeState, version: int) -> None:
    request = _metadata_request(version, ["nope"], allow_auto_topic_creation=False)
    got = await call(state, 3, version, request)
    assert got is not None and got.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert len(state.topics) == 0


async def test_metadata_auto_creation_refuses_illegal_names(state: FakeState) -> None:
    got = await call(state, 3, 13, _metadata_request(13, ["a/b"]))
    assert got is not None and got.topics[0].error_code == ErrorCode.INVALID_TOPIC_EXCEPTION


@pytest.mark.parametrize("version", [12, 13])
async def test_metadata_by_topic_id(state: FakeState, version: int) -> None:
    topic = state.topics.create_topic("t", 2)
    unknown = uuid.uuid4()
    request = {"topics": [{"topic_id": topic.topic_id, "name": None}, {"topic_id": unknown}]}
    got = await call(state, 3, version, request)
    assert got is not None
    assert [(t.name, t.topic_id, t.error_code) for t in got.topics] == [
        ("t", topic.topic_id, 0),
        (None, unknown, ErrorCode.UNKNOWN_TOPIC_ID),
    ]
    if version >= 13:
        assert got.error_code == 0


@pytest.mark.parametrize("version", [10, 11])
async def test_metadata_refuses_topic_ids_before_v12(state: FakeState, version: int) -> None:
    topic = state.topics.create_topic("t", 1)
    got = await call(state, 3, version, {"topics": [{"topic_id": topic.topic_id, "name": "t"}]})
    assert got is not None
    assert [(t.name, t.error_code) for t in got.topics] == [("t", ErrorCode.INVALID_REQUEST)]


@pytest.mark.parametrize("version", [v for v in VERSIONS[3] if v >= 8])
async def test_metadata_authorized_operations(state: FakeState, version: int) -> None:
    state.topics.create_topic("t", 1)
    request = {
        "topics": [{"name": "t"}],
        "include_topic_authorized_operations": True,
        "include_cluster_authorized_operations": True,
    }
    got = await call(state, 3, version, request)
    assert got is not None and got.topics[0].topic_authorized_operations == ALL_TOPIC_OPS
    if version <= 10:
        assert got.cluster_authorized_operations == 8096
    got = await call(state, 3, version, {"topics": [{"name": "t"}]})
    assert got is not None and got.topics[0].topic_authorized_operations == NOT_REQUESTED


# -- FindCoordinator ---------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS[10])
async def test_find_coordinator_for_groups(state: FakeState, version: int) -> None:
    if version >= 4:
        got = await call(state, 10, version, {"key_type": 0, "coordinator_keys": ["g1", "g2"]})
        assert got is not None
        assert [(c.key, c.node_id, c.host, c.port, c.error_code) for c in got.coordinators] == [
            ("g1", 0, "127.0.0.1", 19092, 0),
            ("g2", 0, "127.0.0.1", 19092, 0),
        ]
    else:
        got = await call(state, 10, version, {"key": "g1", "key_type": 0})
        assert got is not None
        assert (got.error_code, got.node_id, got.host, got.port) == (0, 0, "127.0.0.1", 19092)
        if version >= 1:
            assert got.error_message == "NONE"


@pytest.mark.parametrize("version", [v for v in VERSIONS[10] if v >= 1])
@pytest.mark.parametrize(
    ("key_type", "code"),
    [
        (1, ErrorCode.COORDINATOR_NOT_AVAILABLE),
        (2, ErrorCode.INVALID_REQUEST),
        (9, ErrorCode.INVALID_REQUEST),
    ],
)
async def test_find_coordinator_refuses_other_key_types(
    state: FakeState, version: int, key_type: int, code: int
) -> None:
    if version >= 4:
        got = await call(state, 10, version, {"key_type": key_type, "coordinator_keys": ["tx"]})
        assert got is not None
        [entry] = got.coordinators
        assert (entry.key, entry.error_code, entry.node_id, entry.port) == ("tx", code, -1, -1)
        assert entry.error_message
    else:
        got = await call(state, 10, version, {"key": "tx", "key_type": key_type})
        assert got is not None
        assert (got.error_code, got.node_id, got.host, got.port) == (code, -1, "", -1)


# -- CreateTopics ------------------------------------------------------------------------


def _creatable(
    name: str, partitions: int = 1, factor: int = 1, **extra: object
) -> dict[str, object]:
    return {"name": name, "num_partitions": partitions, "replication_factor": factor, **extra}


@pytest.mark.parametrize("version", VERSIONS[19])
async def test_create_topics(state: FakeState, version: int) -> None:
    state.config["num.partitions"] = "5"
    state.topics.create_topic("exists", 1)
    request = {
        "topics": [
            _creatable("a", 3, configs=[{"name": "retention.ms", "value": "1000"}]),
            _creatable("b", -1, -1),
            _creatable("exists"),
            _creatable("zero", 0),
            _creatable("bad/name"),
            _creatable("rf3", 1, 3),
            _creatable("rf0", 1, 0),
            _creatable("nullcfg", 1, configs=[{"name": "x", "value": None}]),
            _creatable("dup"),
            _creatable("dup"),
        ],
        "timeout_ms": 1000,
    }
    got = await call(state, 19, version, request)
    assert got is not None
    results = {t.name: t for t in got.topics}
    assert [t.name for t in got.topics][-1] == "dup" and len(got.topics) == 9
    codes = {name: t.error_code for name, t in results.items()}
    assert codes == {
        "a": 0,
        "b": 0,
        "exists": ErrorCode.TOPIC_ALREADY_EXISTS,
        "zero": ErrorCode.INVALID_PARTITIONS,
        "bad/name": ErrorCode.INVALID_TOPIC_EXCEPTION,
        "rf3": ErrorCode.INVALID_REPLICATION_FACTOR,
        "rf0": ErrorCode.INVALID_REPLICATION_FACTOR,
        "nullcfg": ErrorCode.INVALID_CONFIG,
        "dup": ErrorCode.INVALID_REQUEST,
    }
    a, b = state.topics.get("a"), state.topics.get("b")
    assert a is not None and b is not None and state.topics.get("dup") is None
    assert (len(a.partitions), len(b.partitions)) == (3, 5)
    assert a.configs == {"retention.ms": "1000"}
    if version >= 1:
        assert results["a"].error_message is None and results["exists"].error_message
    if version >= 5:
        assert (results["a"].num_partitions, results["a"].replication_factor) == (3, 1)
        assert (results["b"].num_partitions, results["zero"].num_partitions) == (5, -1)
        assert [(c.name, c.value, c.config_source) for c in results["a"].configs] == [
            ("retention.ms", "1000", 1)
        ]
    if version >= 7:
        assert results["a"].topic_id == a.topic_id and results["exists"].topic_id == ZERO


@pytest.mark.parametrize("version", VERSIONS[19])
async def test_create_topics_validate_only(state: FakeState, version: int) -> None:
    request = {"topics": [_creatable("a", 2), _creatable("b", -2)], "validate_only": True}
    got = await call(state, 19, version, request)
    assert got is not None
    assert [t.error_code for t in got.topics] == [0, ErrorCode.INVALID_PARTITIONS]
    if version >= 1:
        assert len(state.topics) == 0  # validate_only exists from v1
    else:
        assert "a" in state.topics  # v0 has no validate_only: the topic is created


async def test_create_topics_with_manual_assignments(state: FakeState) -> None:
    def assigned(name: str, assignments: list[tuple[int, list[int]]], **extra: object) -> object:
        rows = [{"partition_index": i, "broker_ids": b} for i, b in assignments]
        return {
            "name": name,
            "num_partitions": -1,
            "replication_factor": -1,
            "assignments": rows,
            **extra,
        }

    request = {
        "topics": [
            assigned("ok", [(1, [0]), (0, [0])]),
            assigned("gap", [(0, [0]), (2, [0])]),
            assigned("twice", [(0, [0]), (0, [0])]),
            assigned("other", [(0, [1])]),
            assigned("empty", [(0, [])]),
            assigned("dupbroker", [(0, [0, 0])]),
            assigned("counts", [(0, [0])], num_partitions=1),
        ]
    }
    got = await call(state, 19, 7, request)
    assert got is not None
    assert {t.name: t.error_code for t in got.topics} == {
        "ok": 0,
        "gap": ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        "twice": ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        "other": ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        "empty": ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        "dupbroker": ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        "counts": ErrorCode.INVALID_REQUEST,
    }
    ok = state.topics.get("ok")
    assert ok is not None and len(ok.partitions) == 2


# -- DeleteTopics ------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS[20])
async def test_delete_topics_by_name(state: FakeState, version: int) -> None:
    topic = state.topics.create_topic("a", 1)
    state.topics.create_topic("dup", 1)
    names = ["a", "missing", "dup", "dup"]
    if version >= 6:
        request: dict[str, object] = {"topics": [{"name": n} for n in names]}
    else:
        request = {"topic_names": names}
    got = await call(state, 20, version, {**request, "timeout_ms": 1000})
    assert got is not None
    assert [(r.name, r.error_code) for r in got.responses] == [
        ("a", 0),
        ("missing", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        ("dup", ErrorCode.INVALID_REQUEST),
    ]
    assert "a" not in state.topics and "dup" in state.topics
    if version >= 6:
        assert got.responses[0].topic_id == topic.topic_id


async def test_delete_topics_by_id(state: FakeState) -> None:
    a = state.topics.create_topic("a", 1)
    b = state.topics.create_topic("b", 1)
    c = state.topics.create_topic("c", 1)
    unknown = uuid.uuid4()
    request = {
        "topics": [
            {"topic_id": a.topic_id},
            {"topic_id": unknown},
            {"name": "b", "topic_id": b.topic_id},
            {"name": None},
            {"topic_id": c.topic_id},
            {"name": "c"},
        ],
        "timeout_ms": 1000,
    }
    got = await call(state, 20, 6, request)
    assert got is not None
    assert [(r.name, r.topic_id, r.error_code) for r in got.responses] == [
        ("a", a.topic_id, 0),
        (None, unknown, ErrorCode.UNKNOWN_TOPIC_ID),
        ("b", b.topic_id, ErrorCode.INVALID_REQUEST),
        (None, ZERO, ErrorCode.INVALID_REQUEST),
        ("c", c.topic_id, ErrorCode.INVALID_REQUEST),
    ]
    assert state.topics.names() == ["b", "c"]


# -- InitProducerId ----------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS[22])
async def test_init_producer_id_for_idempotent_producers(state: FakeState, version: int) -> None:
    body = {"transactional_id": None, "transaction_timeout_ms": 60000}
    first = await call(state, 22, version, body)
    second = await call(state, 22, version, body)
    assert first is not None and second is not None
    assert (first.error_code, first.producer_epoch) == (0, 0)
    assert second.producer_id == first.producer_id + 1


@pytest.mark.parametrize("version", VERSIONS[22])
@pytest.mark.parametrize(
    ("transactional_id", "code"),
    [("tx-1", ErrorCode.COORDINATOR_NOT_AVAILABLE), ("", ErrorCode.INVALID_REQUEST)],
)
async def test_init_producer_id_without_a_transaction_coordinator(
    state: FakeState, version: int, transactional_id: str, code: int
) -> None:
    body = {"transactional_id": transactional_id, "transaction_timeout_ms": 60000}
    got = await call(state, 22, version, body)
    assert got is not None
    assert (got.error_code, got.producer_id, got.producer_epoch) == (code, -1, -1)


@pytest.mark.parametrize("version", [v for v in VERSIONS[22] if v >= 3])
async def test_init_producer_id_checks_the_given_id_and_epoch(
    state: FakeState, version: int
) -> None:
    body = {"transactional_id": None, "transaction_timeout_ms": 1, "producer_id": 5}
    got = await call(state, 22, version, body)
    assert got is not None and got.error_code == ErrorCode.INVALID_REQUEST
    body["producer_epoch"] = 3
    got = await call(state, 22, version, body)
    assert got is not None and (got.error_code, got.producer_epoch) == (0, 0)


async def test_create_topics_refuses_a_huge_partition_count_at_once(state: FakeState) -> None:
    """Issue 15 item 1: 2^31-1 partitions in one 47-byte request is refused without building
    anything (it used to block the event loop for 29 s and take 4 GiB). As Kafka's controller
    does, the count is checked for the whole request first (issue 32 item 5)."""
    for name, count, code in [("huge", 2**31 - 1, ErrorCode.POLICY_VIOLATION),
                              ("over", 10_001, ErrorCode.POLICY_VIOLATION), ("edge", 10_000, 0)]:
        got = await call(state, 19, 7, {"topics": [_creatable(name, count)], "timeout_ms": 1000})
        assert got is not None
        assert [t.error_code for t in got.topics] == [code]
    assert state.topics.get("huge") is None and state.topics.get("over") is None


@pytest.mark.parametrize("version", [0, 1])
async def test_sasl_handshake_on_a_plaintext_listener_is_illegal_sasl_state(
    state: FakeState, version: int
) -> None:
    """Issue 15 item 15: answered as a Kafka PLAINTEXT listener answers it, not dropped."""
    got = await call(state, 17, version, {"mechanism": "PLAIN"})
    assert got is not None
    assert (got.error_code, list(got.mechanisms)) == (ErrorCode.ILLEGAL_SASL_STATE, [])


@pytest.mark.parametrize("version", [0, 1, 2])
async def test_sasl_authenticate_on_a_plaintext_listener_is_illegal_sasl_state(
    state: FakeState, version: int
) -> None:
    """As KafkaApis.handleSaslAuthenticateRequest: only a SASL listener's gate authenticates."""
    got = await call(state, 36, version, {"auth_bytes": b"\0alice\0secret"})
    assert got is not None
    assert got.error_code == ErrorCode.ILLEGAL_SASL_STATE
    assert got.error_message == "Request is not valid given the current SASL state."
