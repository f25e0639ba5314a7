"""Kafka's ClientQuotaControlManagerTest (metadata/src/test/java/org/apache/kafka/controller)
and the describe cases of ClientQuotasRequestTest (core/src/test/scala/unit/kafka/server),
mirrored by name on ``coordinator.configs.client_quotas`` (see COVERAGE.md): planning changes
nothing, replaying the planned records does, and DescribeClientQuotas' filters match as
Kafka's ClientQuotasImage does."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from coordinator.configs.client_quotas import (
    CLIENT_ID,
    IP,
    MATCH_DEFAULT,
    MATCH_EXACT,
    MATCH_SPECIFIED,
    USER,
    ClientQuotas,
    Entity,
    FilterComponent,
    QuotaAlteration,
    QuotaError,
    entity_of,
    is_ip_literal,
)
from storage import record_codec
from storage.config_records import (
    ClientQuotaEntityData,
    ClientQuotaRecordKey,
    ClientQuotaRecordValue,
)
from storage.record_types import CLIENT_QUOTA_RECORD_KEY_VERSION, RECORD_TYPES
from storage.records import Record
from wire.constants import ErrorCode

PRODUCER, CONSUMER = "producer_byte_rate", "consumer_byte_rate"
REQUEST, MUTATION, CONNECTIONS = ("request_percentage", "controller_mutation_rate",
                                  "connection_creation_rate")


def entity(**components: str | None) -> Entity:
    return entity_of((kind.replace("_", "-"), name) for kind, name in components.items())


def alteration(of: Entity, **ops: float | None) -> QuotaAlteration:
    return QuotaAlteration(of, tuple(ops.items()))


def alter_quotas(manager: ClientQuotas, *alterations: QuotaAlteration) -> list[Record]:
    """Plan, check every entity succeeded, replay the records (Kafka's alterQuotas)."""
    records, results = manager.alter(alterations)
    assert all(error is None for error in results.values()), results
    for record in records:
        manager.apply(record)
    return records


def assert_invalid_quota(manager: ClientQuotas, of: Entity, **ops: float | None) -> str:
    records, results = manager.alter([alteration(of, **ops)])
    error = results[of]
    assert error is not None and error.code == ErrorCode.INVALID_REQUEST
    assert records == []
    return error.message


def test_invalid_entity_types() -> None:
    manager = ClientQuotas()
    for bad in (entity(foo="bar"), entity(user="user-1", foo="bar"),
                entity(foo="bar", ip="1.2.3.4"), entity(user="user-1", ip="1.2.3.4"),
                entity(client_id="user-1", ip="1.2.3.4"), ()):
        assert_invalid_quota(manager, bad, producer_byte_rate=10000.0)


def test_invalid_quota_keys() -> None:
    manager = ClientQuotas()
    user = entity(user="user-1")
    assert assert_invalid_quota(manager, user, **{"not.a.quota.key": 0.0,
                                                  REQUEST: 99.9}) == (
        "Invalid configuration key not.a.quota.key")
    assert assert_invalid_quota(manager, user, **{REQUEST: 99.9, "not.a.quota.key": 0.0}) == (
        "Invalid configuration key not.a.quota.key")


def test_alter_and_remove() -> None:
    manager = ClientQuotas()
    user = entity(user="user-1")
    alter_quotas(manager, alteration(user, producer_byte_rate=10000.0))
    assert manager.quotas[user] == {PRODUCER: 10000.0}
    alter_quotas(manager, alteration(user, producer_byte_rate=10001.0,
                                     consumer_byte_rate=20000.0))
    assert manager.quotas[user] == {PRODUCER: 10001.0, CONSUMER: 20000.0}
    alter_quotas(manager, alteration(user, producer_byte_rate=None))
    assert manager.quotas[user] == {CONSUMER: 20000.0}
    assert alter_quotas(manager, alteration(user, request_percentage=None)) == []
    assert manager.quotas[user] == {CONSUMER: 20000.0}
    alter_quotas(manager, alteration(user, consumer_byte_rate=None))
    assert user not in manager.quotas
    assert alter_quotas(manager, alteration(user, consumer_byte_rate=None)) == []
    assert user not in manager.quotas
    alter_quotas(manager, alteration(user, request_percentage=99.0,
                                     controller_mutation_rate=None,
                                     producer_byte_rate=10002.0, consumer_byte_rate=20001.0))
    assert manager.quotas[user] == {REQUEST: 99.0, PRODUCER: 10002.0, CONSUMER: 20001.0}


#: Kafka's testEntityTypes entities, which ClientQuotasRequestTest's match tests use too.
MATCH_USER_CLIENT = {
    entity(user="user-1", client_id="client-id-1"): 50.50,
    entity(user="user-2", client_id="client-id-1"): 51.51,
    entity(user="user-3", client_id="client-id-2"): 52.52,
    entity(user=None, client_id="client-id-1"): 53.53,
    entity(user="user-1", client_id=None): 54.54,
    entity(user="user-3", client_id=None): 55.55,
    entity(user="user-1"): 56.56,
    entity(user="user-2"): 57.57,
    entity(user="user-3"): 58.58,
    entity(user=None): 59.59,
    entity(client_id="client-id-2"): 60.60,
}


def test_entity_types() -> None:
    manager = ClientQuotas()
    wanted = MATCH_USER_CLIENT
    records = alter_quotas(manager, *(alteration(e, request_percentage=v)
                                      for e, v in wanted.items()))
    assert sorted(records, key=repr) == sorted((
        Record(ClientQuotaRecordKey(tuple(ClientQuotaEntityData(k, n) for k, n in e), REQUEST),
               ClientQuotaRecordValue(v)) for e, v in wanted.items()), key=repr)
    assert {e: q[REQUEST] for e, q in manager.quotas.items()} == wanted


def test_duplicate_keys_and_entities_are_refused() -> None:
    """Kafka's alterClientQuotas: a duplicate key's entity, and an entity given twice, answer
    'Ignoring duplicate entity' (the first time's records are kept, as Kafka's are)."""
    manager = ClientQuotas()
    user, other = entity(user="u"), entity(client_id="c")
    records, results = manager.alter([
        QuotaAlteration(user, ((PRODUCER, 1.0), (PRODUCER, 2.0))),
        alteration(other, producer_byte_rate=5.0), alteration(other, producer_byte_rate=6.0)])
    assert {e: (r.code, r.message) if r else None for e, r in results.items()} == {
        user: (ErrorCode.INVALID_REQUEST,
               "Ignoring duplicate entity ClientQuotaEntity(entries={user=u})"),
        other: (ErrorCode.INVALID_REQUEST,
                "Ignoring duplicate entity ClientQuotaEntity(entries={client-id=c})")}
    assert [r.value for r in records] == [ClientQuotaRecordValue(5.0)]


def test_is_valid_ip_entity_with_null() -> None:
    manager = ClientQuotas()
    records, results = manager.alter([alteration(entity(ip=None),
                                                 connection_creation_rate=5.0)])
    assert results == {entity(ip=None): None} and len(records) == 1


def test_is_valid_ip_entity_with_unresolvable_hostname() -> None:
    assert not is_ip_literal("example.invalid")
    message = assert_invalid_quota(ClientQuotas(), entity(ip="example.invalid"),
                                   connection_creation_rate=5.0)
    assert message == "example.invalid is not a valid IP or resolvable host."


def test_is_valid_ip_entity_with_localhost() -> None:
    assert is_ip_literal("127.0.0.1") and is_ip_literal("::1")
    records, _ = ClientQuotas().alter([alteration(entity(ip="localhost"),
                                                  connection_creation_rate=5.0)],
                                      resolvable=lambda name: name == "localhost")
    assert len(records) == 1


@pytest.mark.parametrize("kinds", [[USER], [CLIENT_ID], [CLIENT_ID, USER]])
def test_config_keys_for_entity_type_with_user_client_id_and_both(kinds: list[str]) -> None:
    """testConfigKeysForEntityTypeWithUser, ...WithClientId, ...WithUserAndClientId."""
    of = entity_of((kind, "foo") for kind in kinds)
    for key in (PRODUCER, CONSUMER, MUTATION, REQUEST):
        assert ClientQuotas().alter([alteration(of, **{key: 1.0})])[1] == {of: None}
    assert assert_invalid_quota(ClientQuotas(), of, connection_creation_rate=1.0) == (
        "Invalid configuration key connection_creation_rate")


def test_config_keys_for_entity_type_with_ip() -> None:
    of = entity(ip="127.0.0.1")
    assert ClientQuotas().alter([alteration(of, connection_creation_rate=1.0)])[1] == {of: None}
    assert assert_invalid_quota(ClientQuotas(), of, producer_byte_rate=1.0) == (
        "Invalid configuration key producer_byte_rate")


def test_config_keys_for_empty_entity() -> None:
    assert assert_invalid_quota(ClientQuotas(), (), producer_byte_rate=1.0) == (
        "Invalid empty client quota entity")


@pytest.mark.parametrize("other", [USER, CLIENT_ID])
def test_config_keys_for_entity_type_with_ip_and_user_or_client_id(other: str) -> None:
    of = entity_of([(IP, "127.0.0.1"), (other, "foo")])
    assert assert_invalid_quota(ClientQuotas(), of, request_percentage=1.0) == (
        "Invalid quota entity combination, IP entity shouldnot be combined with User or "
        "ClientId")


@pytest.mark.parametrize(("key", "value", "message"), [
    ("foobar", 1.0, "Invalid configuration key foobar"),  # ...ForUnknownQuota
    (PRODUCER, 0.0, "Quota producer_byte_rate must be greater than 0"),  # ...ForZeroQuota
    (CONSUMER, -2.0, "Quota consumer_byte_rate must be greater than 0"),  # ...NegativeQuota
    (CONSUMER, 1234.0, None),  # ...ForValidConsumerByteRate
    (CONSUMER, 36893488147419103232.4,  # ...ForConsumerByteRateTooLarge
     "Proposed value for consumer_byte_rate is too large for a LONG."),
    (CONSUMER, 2.245, "consumer_byte_rate cannot be a fractional value."),  # ...Fractional
    (CONSUMER, 1235.0000001, None),  # ...ForValidConsumerByteRate2
    (REQUEST, 56.62367, None),  # ...ForValidRequestPercentage
])
def test_validate_quota_key_value(key: str, value: float, message: str | None) -> None:
    of = entity(client_id="foo")
    _, results = ClientQuotas().alter([alteration(of, **{key: value})])
    error = results[of]
    assert (None if error is None else error.message) == message


def test_connection_creation_rate_is_an_int() -> None:
    of = entity(ip=None)
    assert assert_invalid_quota(ClientQuotas(), of, connection_creation_rate=2.0**31) == (
        "Proposed value for connection_creation_rate is too large for an INT.")


def test_record_key_version_and_bytes() -> None:
    """The record round-trips through storage's codec under key version 108."""
    assert RECORD_TYPES[CLIENT_QUOTA_RECORD_KEY_VERSION].key_type is ClientQuotaRecordKey
    key = ClientQuotaRecordKey((ClientQuotaEntityData("user", None),), PRODUCER)
    raw = record_codec.encode_key(key)
    assert raw.hex() == (
        "006c"  # key version 108
        "00000001"  # one entity component
        "0004" + b"user".hex() +  # its type
        "ffff"  # its name: null, the default user
        "0012" + PRODUCER.encode().hex())
    assert record_codec.decode_key(raw) == key
    value = record_codec.encode_value(ClientQuotaRecordValue(1024.5))
    assert value is not None and value.hex() == "0000" "4090020000000000" "00"
    assert record_codec.decode_value(key, value) == ClientQuotaRecordValue(1024.5)


# ------------------------------------------------------------ describe (ClientQuotasRequestTest)

MATCH_IP = {entity(ip="1.2.3.4"): 10.0, entity(ip="2.3.4.5"): 20.0}


@pytest.fixture
def matched() -> ClientQuotas:
    manager = ClientQuotas()
    alter_quotas(manager, *(alteration(e, request_percentage=v)
                            for e, v in MATCH_USER_CLIENT.items()),
                 *(alteration(e, connection_creation_rate=v) for e, v in MATCH_IP.items()))
    return manager


def of_entity(kind: str, name: str | None) -> FilterComponent:
    return FilterComponent(kind, MATCH_DEFAULT if name is None else MATCH_EXACT, name)


def of_type(kind: str) -> FilterComponent:
    return FilterComponent(kind, MATCH_SPECIFIED, None)


def found(manager: ClientQuotas, strict: bool, *components: FilterComponent) -> set[Entity]:
    return {e for e, _ in manager.describe(components, strict)}


def test_describe_client_quotas_match_exact(matched: ClientQuotas) -> None:
    for e, value in MATCH_USER_CLIENT.items():
        answer = matched.describe([of_entity(k, n) for k, n in e], strict=True)
        assert answer == [(e, {REQUEST: value})]
    for e in (entity(user="user-1", client_id="client-id-2"),
              entity(user="user-3", client_id="client-id-1"),
              entity(user="user-2", client_id=None), entity(user="user-4"),
              entity(user=None, client_id="client-id-2"), entity(client_id="client-id-1"),
              entity(client_id="client-id-3")):
        assert matched.describe([of_entity(k, n) for k, n in e], strict=True) == []


def test_describe_client_quotas_match_partial(matched: ClientQuotas) -> None:
    every = set(MATCH_USER_CLIENT) | set(MATCH_IP)

    def where(predicate: object) -> set[Entity]:
        return {e for e in every if predicate(dict(e))}  # type: ignore[operator]

    cases: list[tuple[bool, list[FilterComponent], int, object]] = [
        (False, [of_entity(USER, "user-1")], 3, lambda d: d.get(USER) == "user-1"),
        (False, [of_entity(USER, "unknown")], 0, lambda d: False),
        (False, [of_entity(CLIENT_ID, "client-id-2")], 2,
         lambda d: d.get(CLIENT_ID) == "client-id-2"),
        (False, [of_entity(USER, None)], 2, lambda d: USER in d and d[USER] is None),
        (True, [of_entity(USER, "user-2")], 1,
         lambda d: d.get(USER) == "user-2" and CLIENT_ID not in d),
        (True, [of_entity(CLIENT_ID, "client-id-1")], 0, lambda d: False),
        (True, [of_type(USER)], 4, lambda d: USER in d and CLIENT_ID not in d),
        (False, [of_type(USER)], 10, lambda d: USER in d),
        (True, [of_type(CLIENT_ID)], 1, lambda d: CLIENT_ID in d and USER not in d),
        (False, [of_type(CLIENT_ID)], 7, lambda d: CLIENT_ID in d),
        (False, [of_type(IP)], 2, lambda d: IP in d),
        (False, [], 13, lambda d: True),
        (True, [], 0, lambda d: False),
    ]
    for strict, components, size, predicate in cases:
        expected = where(predicate)
        assert len(expected) == size
        assert found(matched, strict, *components) == expected, (strict, components)
    values = dict(matched.describe([of_type(IP)], strict=False))
    assert values == {e: {CONNECTIONS: v} for e, v in MATCH_IP.items()}


def describe_error(manager: ClientQuotas, *components: FilterComponent) -> tuple[int, str]:
    with pytest.raises(QuotaError) as raised:
        manager.describe(components, strict=False)
    return raised.value.code, raised.value.message


def test_describe_client_quotas_invalid_filter_combination() -> None:
    for other in (USER, CLIENT_ID):
        code, message = describe_error(ClientQuotas(), of_type(IP), of_type(other))
        assert code == ErrorCode.INVALID_REQUEST
        assert message.startswith("Invalid entity filter component combination")


def test_client_quotas_unsupported_entity_types() -> None:
    assert describe_error(ClientQuotas(), of_entity("other", "name")) == (
        ErrorCode.UNSUPPORTED_VERSION, "Unsupported entity type other")


def test_describe_filter_errors() -> None:
    """ClientQuotasImage.describe's other checks, in its order."""
    cases: Mapping[tuple[FilterComponent, ...], str] = {
        (of_type(""),): "Invalid empty entity type.",
        (of_type(USER), of_entity(USER, "a")):
            "Entity type user cannot appear more than once in the filter.",
        (FilterComponent(USER, MATCH_EXACT, None),):
            "Request specified MATCH_TYPE_EXACT, but set match string to null.",
        (FilterComponent(USER, MATCH_DEFAULT, "a"),):
            "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.",
        (FilterComponent(USER, 9, None),): "Unknown match type 9",
    }
    for components, message in cases.items():
        assert describe_error(ClientQuotas(), *components) == (ErrorCode.INVALID_REQUEST,
                                                               message)


def test_alter_client_quotas_invalid_requests() -> None:
    for of, ops in ((entity(user=""), {REQUEST: 12.34}), (entity(client_id=""), {REQUEST: 12.34}),
                    (entity_of([("", "name")]), {REQUEST: 12.34}), ((), {PRODUCER: 10000.5}),
                    (entity(user="user"), {"bad": 1.0}),
                    (entity(user="user"), {PRODUCER: 10000.5})):
        assert_invalid_quota(ClientQuotas(), of, **ops)


def test_client_quotas_sanitized() -> None:
    manager = ClientQuotas()
    spaced = entity(user="user with spaces")
    alter_quotas(manager, alteration(spaced, producer_byte_rate=20000.0))
    assert manager.describe([of_entity(USER, "user with spaces")], strict=True) == [
        (spaced, {PRODUCER: 20000.0})]


def test_client_quotas_with_default_name() -> None:
    manager = ClientQuotas()
    named = entity(client_id="<default>")
    alter_quotas(manager, alteration(named, producer_byte_rate=20000.0))
    assert manager.describe([of_entity(CLIENT_ID, "<default>")], strict=True) == [
        (named, {PRODUCER: 20000.0})]
    assert manager.describe([of_entity(CLIENT_ID, None)], strict=True) == []
