"""CreateAcls/DescribeAcls/DeleteAcls semantics (validation, filters, records) and the
authorized-operations bitsets Kafka puts in Metadata, DescribeGroups and DescribeCluster."""

from __future__ import annotations

import itertools
import uuid

import pytest
from authorizer_support import (
    ALLOW,
    CLUSTER,
    DENY,
    GROUP,
    LITERAL,
    PREFIXED,
    READ,
    TOPIC,
    WRITE,
    Harness,
    ace,
    any_entry,
    user,
)

from coordinator.security.acl import (
    CLUSTER_NAME,
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    AclError,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
    authorization_error,
    from_code,
    supported_operations,
)
from coordinator.security.acl_store import (
    AclStore,
    binding_of,
    group_by_resource,
    record_of,
    removal_of,
)
from coordinator.security.authorizer import Action, StandardAuthorizer, host_address
from wire.constants import ErrorCode

IDS = (uuid.UUID(int=i) for i in itertools.count(1))
GOOD = AclBinding(ResourcePattern(TOPIC, "orders", LITERAL),
                  ace("User:alice", WILDCARD, READ, ALLOW))


def invalid(message: str) -> AclError:
    return AclError(ErrorCode.INVALID_REQUEST, message)


@pytest.mark.parametrize(
    ("binding", "error"),
    [
        (AclBinding(ResourcePattern(CLUSTER, "my-cluster", LITERAL), GOOD.entry),
         invalid("The only valid name for the CLUSTER resource is kafka-cluster")),
        (AclBinding(ResourcePattern(TOPIC, "", LITERAL), GOOD.entry),
         invalid("Invalid empty resource name")),
        (AclBinding(ResourcePattern(ResourceType.ANY, "x", LITERAL), GOOD.entry),
         invalid("Invalid resourceType ANY")),
        (AclBinding(ResourcePattern(ResourceType.UNKNOWN, "x", LITERAL), GOOD.entry),
         invalid("Invalid resourceType UNKNOWN")),
        (AclBinding(ResourcePattern(TOPIC, "x", PatternType.MATCH), GOOD.entry),
         invalid("Invalid patternType MATCH")),
        (AclBinding(GOOD.pattern, ace("User:alice", WILDCARD, AclOperation.ANY, ALLOW)),
         invalid("Invalid operation ANY")),
        (AclBinding(GOOD.pattern, ace("User:alice", WILDCARD, READ, AclPermissionType.ANY)),
         invalid("Invalid permissionType ANY")),
        (AclBinding(GOOD.pattern, ace("alice", WILDCARD, READ, ALLOW)),
         invalid("Could not parse principal from `alice` (no colon is present separating the "
                 "principal type from the principal name)")),
    ],
)
def test_create_acls_validation(binding: AclBinding, error: AclError) -> None:
    store = AclStore(StandardAuthorizer())
    records, results = store.create_acls([GOOD, binding], IDS.__next__)
    assert results == [None, error]
    assert [binding_of(r) for r in records] == [GOOD]  # the valid one is still created


def test_create_acls_on_the_cluster_resource() -> None:
    store = AclStore(StandardAuthorizer())
    cluster = AclBinding(ResourcePattern(CLUSTER, CLUSTER_NAME, LITERAL),
                         ace("User:admin", WILDCARD, AclOperation.ALTER, ALLOW))
    records, results = store.create_acls([cluster], IDS.__next__)
    assert results == [None] and len(records) == 1


def test_create_acls_writes_one_record_per_new_acl() -> None:
    store = AclStore(StandardAuthorizer())
    records, results = store.create_acls([GOOD, GOOD], IDS.__next__)
    assert results == [None, None] and len(records) == 1
    store.replay(records[0])
    again, results = store.create_acls([GOOD], IDS.__next__)
    assert again == [] and results == [None]  # already there: success, nothing to write


def test_record_round_trip_and_replay_errors() -> None:
    record = record_of(uuid.UUID(int=7), GOOD)
    assert binding_of(record) == GOOD
    store = AclStore(StandardAuthorizer())
    store.replay(record)
    with pytest.raises(ValueError, match="already exists"):
        store.replay(record)
    store.replay(removal_of(uuid.UUID(int=7)))
    with pytest.raises(ValueError, match="not found"):
        store.replay(removal_of(uuid.UUID(int=7)))
    assert len(store) == 0


def test_unknown_filters_are_invalid_requests() -> None:
    store = AclStore(StandardAuthorizer())
    unknown_pattern = AclBindingFilter(
        ResourcePatternFilter(ResourceType.UNKNOWN, None, PatternType.ANY), any_entry()
    )
    unknown_entry = AclBindingFilter(
        ResourcePatternFilter(TOPIC, None, PatternType.ANY),
        AccessControlEntryFilter(None, None, AclOperation.UNKNOWN, AclPermissionType.ANY),
    )
    assert store.describe_acls(unknown_pattern) == invalid("Unknown patternFilter.")
    assert store.describe_acls(unknown_entry) == invalid("Unknown entryFilter.")
    records, results = store.delete_acls([unknown_pattern, unknown_entry])
    assert records == []
    assert [r.error for r in results] == [
        invalid("Unknown patternFilter."), invalid("Unknown entryFilter.")
    ]


def test_codes_read_as_unknown_when_unrecognised() -> None:
    assert from_code(ResourceType, 99) is ResourceType.UNKNOWN
    assert from_code(PatternType, 4) is PatternType.PREFIXED
    assert from_code(AclOperation, -3) is AclOperation.UNKNOWN
    assert from_code(AclPermissionType, 3) is AclPermissionType.ALLOW


def test_match_filter_finds_literal_wildcard_and_prefixes() -> None:
    h = Harness()
    patterns = [
        ResourcePattern(TOPIC, "payments", LITERAL), ResourcePattern(TOPIC, WILDCARD, LITERAL),
        ResourcePattern(TOPIC, "pay", PREFIXED), ResourcePattern(TOPIC, "payments-eu", PREFIXED),
        ResourcePattern(TOPIC, "other", LITERAL), ResourcePattern(GROUP, "payments", LITERAL),
    ]
    for pattern in patterns:
        h.add([ace(WILDCARD_PRINCIPAL, WILDCARD, READ, ALLOW)], pattern)

    def names(rtype: ResourceType, name: str | None, ptype: PatternType) -> set[tuple[str, str]]:
        found = h.acls(AclBindingFilter(ResourcePatternFilter(rtype, name, ptype), any_entry()))
        return {(b.pattern.name, b.pattern.pattern_type.name) for b in found}

    assert names(TOPIC, "payments", PatternType.MATCH) == {
        ("payments", "LITERAL"), ("*", "LITERAL"), ("pay", "PREFIXED")
    }
    assert names(TOPIC, "payments", PatternType.ANY) == {("payments", "LITERAL")}
    assert names(TOPIC, "pay", PREFIXED) == {("pay", "PREFIXED")}
    assert names(ResourceType.ANY, "payments", PatternType.ANY) == {("payments", "LITERAL")}
    assert len(h.acls()) == 6


def test_entry_filter_matches_principal_host_operation_permission() -> None:
    h = Harness()
    pattern = ResourcePattern(TOPIC, "t", LITERAL)
    h.add([ace("User:a", "10.0.0.1", READ, ALLOW), ace("User:a", WILDCARD, WRITE, DENY),
           ace("User:b", WILDCARD, READ, ALLOW)], pattern)
    topics = ResourcePatternFilter(TOPIC, None, PatternType.ANY)

    def count(principal: str | None, host: str | None, op: AclOperation,
              permission: AclPermissionType) -> int:
        entry = AccessControlEntryFilter(principal, host, op, permission)
        return len(h.acls(AclBindingFilter(topics, entry)))

    assert count("User:a", None, AclOperation.ANY, AclPermissionType.ANY) == 2
    assert count(None, "10.0.0.1", AclOperation.ANY, AclPermissionType.ANY) == 1
    assert count(None, None, READ, AclPermissionType.ANY) == 2
    assert count(None, None, AclOperation.ANY, DENY) == 1
    assert count("User:*", None, AclOperation.ANY, AclPermissionType.ANY) == 0


def test_describe_answer_groups_by_resource() -> None:
    p1, p2 = ResourcePattern(TOPIC, "a", LITERAL), ResourcePattern(GROUP, "g", PREFIXED)
    e1, e2 = ace("User:x", WILDCARD, READ, ALLOW), ace("User:y", WILDCARD, WRITE, DENY)
    grouped = group_by_resource(
        [AclBinding(p1, e1), AclBinding(p2, e1), AclBinding(p1, e2)]
    )
    assert grouped == [(p1, [e1, e2]), (p2, [e1])]


def bits(*operations: AclOperation) -> int:
    return sum(1 << op.value for op in operations)


def test_authorized_operations_bitsets() -> None:
    h = Harness()
    alice = user("alice")
    h.add([ace("User:alice", WILDCARD, READ, ALLOW)], ResourcePattern(TOPIC, "t", LITERAL))
    # READ implies DESCRIBE; the bit of each allowed operation's code is set.
    assert h.authorizer.authorized_operations(alice, TOPIC, "t") == bits(
        READ, AclOperation.DESCRIBE
    )
    assert h.authorizer.authorized_operations(alice, TOPIC, "other") == 0
    super_user = user("superuser1")
    assert h.authorizer.authorized_operations(super_user, GROUP, "g") == bits(
        *supported_operations(GROUP)
    ) == 0b1101_0100_1000  # bits 3, 6, 8, 10, 11
    h.add([ace("User:alice", WILDCARD, AclOperation.ALL, ALLOW)],
          ResourcePattern(CLUSTER, CLUSTER_NAME, LITERAL))
    assert h.authorizer.authorized_operations(alice, CLUSTER, CLUSTER_NAME) == bits(
        *supported_operations(CLUSTER)
    )


def test_authorized_operations_with_allow_everyone() -> None:
    authorizer = StandardAuthorizer(allow_everyone_if_no_acl_found=True)
    assert authorizer.authorized_operations(user("x"), ResourceType.TRANSACTIONAL_ID, "t") == (
        bits(AclOperation.DESCRIBE, WRITE)
    )


def test_supported_operations_and_errors_of_concrete_types_only() -> None:
    assert authorization_error(TOPIC) == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    assert authorization_error(ResourceType.TRANSACTIONAL_ID) == (
        ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    )
    with pytest.raises(ValueError):
        supported_operations(ResourceType.ANY)
    with pytest.raises(ValueError):
        authorization_error(ResourceType.USER)


@pytest.mark.parametrize(
    ("address", "printed"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("::1", "0:0:0:0:0:0:0:1"),
        ("fe80::1%eth0", "fe80:0:0:0:0:0:0:1"),
        ("2001:db8::ff00:42:8329", "2001:db8:0:0:0:ff00:42:8329"),
        ("::ffff:192.168.1.1", "192.168.1.1"),
        ("not-an-ip", "not-an-ip"),
    ],
)
def test_host_address_is_printed_as_java_does(address: str, printed: str) -> None:
    assert host_address(address) == printed


def test_deny_on_another_host_does_not_apply() -> None:
    h = Harness()
    pattern = ResourcePattern(TOPIC, "t", LITERAL)
    h.add([ace("User:alice", WILDCARD, READ, ALLOW), ace("User:alice", "10.9.9.9", READ, DENY)],
          pattern)
    assert h.authorize(user("alice", "10.0.0.1"), READ, TOPIC, "t")
    assert not h.authorize(user("alice", "10.9.9.9"), READ, TOPIC, "t")


def test_check_answers_the_resource_types_authorization_error() -> None:
    h = Harness()
    h.add([ace("User:alice", WILDCARD, WRITE, ALLOW)], ResourcePattern(TOPIC, "t", LITERAL))
    alice = user("alice")
    assert h.authorizer.check(alice, Action(WRITE, TOPIC, "t")) == ErrorCode.NONE
    assert h.authorizer.check(alice, Action(READ, TOPIC, "t")) == (
        ErrorCode.TOPIC_AUTHORIZATION_FAILED
    )
    assert h.authorizer.check(alice, Action(READ, GROUP, "g")) == (
        ErrorCode.GROUP_AUTHORIZATION_FAILED
    )
    assert h.authorizer.check(alice, Action(AclOperation.ALTER, CLUSTER, CLUSTER_NAME)) == (
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    )


def test_filter_authorized_keeps_order_and_drops_the_denied() -> None:
    h = Harness()
    h.add([ace("User:alice", WILDCARD, READ, ALLOW)], ResourcePattern(TOPIC, "app-", PREFIXED))
    h.add([ace("User:alice", WILDCARD, READ, DENY)], ResourcePattern(TOPIC, "app-read", LITERAL))
    h.add([ace("User:alice", WILDCARD, AclOperation.DESCRIBE, DENY)],
          ResourcePattern(TOPIC, "app-secret", LITERAL))
    names = ["app-b", "other", "app-secret", "app-read", "app-a"]
    # A DENY READ does not deny DESCRIBE (no implication for DENY): app-read stays.
    assert h.authorizer.filter_authorized(
        user("alice"), AclOperation.DESCRIBE, TOPIC, names
    ) == ["app-b", "app-read", "app-a"]
