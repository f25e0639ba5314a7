"""Kafka core's AuthorizerTest (the former AclAuthorizerTest, its KRaft cases) and
BaseAuthorizerTest, mirrored by name on the StandardAuthorizer."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator

import pytest
from authorizer_support import (
    ALL,
    ALLOW,
    ALTER,
    CLUSTER,
    DELETE,
    DENY,
    DESCRIBE,
    DESCRIBE_CONFIGS,
    GROUP,
    LITERAL,
    MATCH,
    PREFIXED,
    READ,
    REQUEST,
    TOPIC,
    WRITE,
    Harness,
    ace,
    any_entry,
    exact,
    pattern_filter,
    user,
)

from coordinator.security.acl import (
    CLUSTER_NAME,
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from coordinator.security.acl_store import AclStore
from coordinator.security.authorizer import StandardAuthorizer

RESOURCE = ResourcePattern(TOPIC, "foo-0b3f", LITERAL)  # "foo-" + a UUID in Kafka's setUp
WILDCARD_RESOURCE = ResourcePattern(TOPIC, WILDCARD, LITERAL)
PREFIXED_RESOURCE = ResourcePattern(TOPIC, "foo", PREFIXED)
CLUSTER_RESOURCE = ResourcePattern(CLUSTER, CLUSTER_NAME, LITERAL)
ALLOW_READ = ace(WILDCARD_PRINCIPAL, WILDCARD, READ, ALLOW)
ALLOW_WRITE = ace(WILDCARD_PRINCIPAL, WILDCARD, WRITE, ALLOW)
DENY_READ = ace(WILDCARD_PRINCIPAL, WILDCARD, READ, DENY)
VALID_OPERATIONS = [op for op in AclOperation if op not in (AclOperation.ANY, AclOperation.UNKNOWN)]


def test_authorize_with_empty_resource_name() -> None:
    h = Harness()
    assert not h.authorize(REQUEST, READ, GROUP, "")
    h.add([ALLOW_READ], ResourcePattern(GROUP, WILDCARD, LITERAL))
    assert h.authorize(REQUEST, READ, GROUP, "")


def test_empty_acl_throws_exception() -> None:
    store = AclStore(StandardAuthorizer())
    records, errors = store.create_acls(
        [AclBinding(ResourcePattern(GROUP, "", LITERAL), ALLOW_READ)], lambda: pytest.fail()
    )
    assert records == [] and errors[0] is not None


def test_topic_acl() -> None:
    h = Harness()
    host1, host2 = "192.168.1.1", "192.168.1.2"
    alice, rob, batman = "User:alice", "User:rob", "User:batman"
    h.add([
        ace(alice, host1, READ, ALLOW), ace(alice, host2, READ, ALLOW),
        ace(alice, host1, READ, DENY), ace(alice, host1, WRITE, ALLOW),
        ace(alice, WILDCARD, DESCRIBE, ALLOW), ace(rob, WILDCARD, READ, ALLOW),
        ace(batman, WILDCARD, WRITE, ALLOW),
    ], RESOURCE)
    on = ("foo-0b3f",)
    h1, h2 = user("alice", host1), user("alice", host2)
    assert h.authorize(h2, READ, TOPIC, *on)
    assert not h.authorize(h1, READ, TOPIC, *on)
    assert h.authorize(h1, WRITE, TOPIC, *on)
    assert not h.authorize(h2, WRITE, TOPIC, *on)
    assert h.authorize(h1, DESCRIBE, TOPIC, *on)
    assert h.authorize(h2, DESCRIBE, TOPIC, *on)
    assert not h.authorize(h1, ALTER, TOPIC, *on)
    assert not h.authorize(h2, ALTER, TOPIC, *on)
    rob_h1, batman_h1 = user("rob", host1), user("batman", host1)
    assert h.authorize(rob_h1, DESCRIBE, TOPIC, *on)
    assert h.authorize(batman_h1, DESCRIBE, TOPIC, *on)
    assert h.authorize(rob_h1, READ, TOPIC, *on)
    assert h.authorize(batman_h1, WRITE, TOPIC, *on)


def test_deny_takes_precedence() -> None:
    h = Harness()
    h.add([ace(WILDCARD_PRINCIPAL, WILDCARD, ALL, ALLOW),
           ace("User:alice", "192.168.2.1", ALL, DENY)], RESOURCE)
    assert not h.authorize(user("alice", "192.168.2.1"), READ, TOPIC, RESOURCE.name)


def test_allow_all_access() -> None:
    h = Harness()
    h.add([ace(WILDCARD_PRINCIPAL, WILDCARD, ALL, ALLOW)], RESOURCE)
    assert h.authorize(user("random", "192.0.4.4"), READ, TOPIC, RESOURCE.name)


def test_super_user_has_access() -> None:
    h = Harness()
    h.add([ace(WILDCARD_PRINCIPAL, WILDCARD, ALL, DENY)], RESOURCE)
    assert h.authorize(user("superuser1", "192.0.4.4"), READ, TOPIC, RESOURCE.name)
    assert h.authorize(user("superuser2", "192.0.4.4"), READ, TOPIC, RESOURCE.name)


def test_wild_card_acls() -> None:
    h = Harness()
    assert not h.authorize(REQUEST, READ, TOPIC, RESOURCE.name)
    host1 = user("alice", "192.168.3.1")
    h.add([ace("User:alice", "192.168.3.1", READ, ALLOW)], WILDCARD_RESOURCE)
    assert h.authorize(host1, READ, TOPIC, RESOURCE.name)
    h.add([ace("User:alice", "192.168.3.1", WRITE, ALLOW)], RESOURCE)
    h.add([ace("User:alice", "192.168.3.1", WRITE, DENY)], WILDCARD_RESOURCE)
    assert not h.authorize(host1, WRITE, TOPIC, RESOURCE.name)


def test_no_acl_found() -> None:
    assert not Harness().authorize(REQUEST, READ, TOPIC, RESOURCE.name)


def test_no_acl_found_override() -> None:
    assert Harness(allow_if_no_acl=True).authorize(REQUEST, READ, TOPIC, RESOURCE.name)


def test_acl_config_with_whitespace() -> None:
    authorizer = StandardAuthorizer.from_config(
        {"allow.everyone.if.no.acl.found": "  true ", "super.users": " User:superuser1 "}
    )
    assert authorizer.allow_if_no_acl and authorizer.super_users == {"User:superuser1"}


def by_principal(h: Harness, principal: str) -> set[AclBinding]:
    return h.acls(AclBindingFilter(
        ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY),
        AccessControlEntryFilter(principal, None, AclOperation.ANY, AclPermissionType.ANY),
    ))


def test_acl_management_apis() -> None:
    h = Harness()
    acl1, acl2 = ace("User:alice", "host1", READ, ALLOW), ace("User:alice", "host1", WRITE, ALLOW)
    acl3, acl4 = ace("User:bob", "host2", READ, ALLOW), ace("User:bob", "host2", WRITE, ALLOW)
    h.add([acl1, acl2, acl3, acl4], RESOURCE)
    acl5 = ace("User:bob", WILDCARD, READ, ALLOW)
    h.add([acl5], RESOURCE)  # additive
    assert by_principal(h, "User:alice") == {AclBinding(RESOURCE, a) for a in (acl1, acl2)}
    assert by_principal(h, "User:bob") == {AclBinding(RESOURCE, a) for a in (acl3, acl4, acl5)}
    every = {acl1, acl2, acl3, acl4, acl5}
    resource_to_acls = {
        ResourcePattern(TOPIC, WILDCARD, LITERAL): {ace("User:bob", WILDCARD, READ, ALLOW)},
        ResourcePattern(CLUSTER, WILDCARD, LITERAL): {ace("User:bob", "host1", READ, ALLOW)},
        ResourcePattern(GROUP, WILDCARD, LITERAL): every,
        ResourcePattern(GROUP, "test-ConsumerGroup", LITERAL): every,
    }
    for pattern, entries in resource_to_acls.items():
        h.add(entries, pattern)
    expected = {AclBinding(p, e) for p, es in {**resource_to_acls, RESOURCE: every}.items()
                for e in es}
    assert h.acls() == expected
    h.remove([acl1, acl5], RESOURCE)
    assert h.entries(RESOURCE) == {acl2, acl3, acl4}
    h.remove([], RESOURCE)
    assert h.entries(RESOURCE) == set()
    h.add([acl1], RESOURCE)
    h.remove([acl1], RESOURCE)
    assert h.entries(RESOURCE) == set()


def test_load_cache() -> None:
    # Kafka reloads ACLs from ZooKeeper; kcoord replays its records into a new store.
    h = Harness()
    h.add([ace("User:alice", "host-1", READ, ALLOW)], RESOURCE)
    resource1 = ResourcePattern(TOPIC, "test-2", LITERAL)
    h.add([ace("User:bob", "host3", READ, DENY)], resource1)
    records, _ = h.store.create_acls(sorted(h.acls(), key=repr), iter_ids().__next__)
    assert records == []  # both exist: creating them again writes nothing
    reloaded = Harness()
    for record in h.log:
        reloaded.store.replay(record)
    assert reloaded.entries(RESOURCE) == h.entries(RESOURCE)
    assert reloaded.entries(resource1) == h.entries(resource1)
    assert not reloaded.authorize(user("bob", "host3"), READ, TOPIC, "test-2")


def iter_ids() -> Iterator[uuid.UUID]:
    return (uuid.UUID(int=1000 + i) for i in itertools.count())


def test_local_concurrent_modification_of_resource_acls() -> None:
    h = Harness()
    common = ResourcePattern(TOPIC, "test", LITERAL)
    acl1, acl2 = ace("User:alice", WILDCARD, READ, ALLOW), ace("User:bob", WILDCARD, READ, DENY)
    h.add([acl1], common)
    h.add([acl2], common)
    assert h.entries(common) == {acl1, acl2}


def implications_of_allow(h: Harness, parent: AclOperation, allowed: set[AclOperation]) -> None:
    entry = ace("User:alice", WILDCARD, parent, ALLOW)
    h.add([entry], CLUSTER_RESOURCE)
    context = user("alice", "192.168.3.1")
    for op in VALID_OPERATIONS:
        authorized = h.authorize(context, op, CLUSTER, CLUSTER_NAME)
        assert authorized == (op in allowed or op is parent), (parent, op)
    h.remove([entry], CLUSTER_RESOURCE)


def implications_of_deny(h: Harness, parent: AclOperation, denied: set[AclOperation]) -> None:
    entries = [ace("User:alice", WILDCARD, parent, DENY), ace("User:alice", WILDCARD, ALL, ALLOW)]
    h.add(entries, CLUSTER_RESOURCE)
    context = user("alice", "192.168.3.1")
    for op in VALID_OPERATIONS:
        authorized = h.authorize(context, op, CLUSTER, CLUSTER_NAME)
        assert authorized == (op not in denied and op is not parent), (parent, op)
    h.remove(entries, CLUSTER_RESOURCE)


def test_acl_inheritance() -> None:
    h = Harness()
    everything = set(VALID_OPERATIONS) - {ALL}
    implications_of_allow(h, ALL, everything)
    implications_of_deny(h, ALL, everything)
    for op in (READ, WRITE, DELETE, ALTER):
        implications_of_allow(h, op, {DESCRIBE})
    implications_of_deny(h, DESCRIBE, set())
    implications_of_allow(h, AclOperation.ALTER_CONFIGS, {DESCRIBE_CONFIGS})
    implications_of_deny(h, DESCRIBE_CONFIGS, set())


def test_access_allowed_if_allow_acl_exists_on_wildcard_resource() -> None:
    h = Harness()
    h.add([ALLOW_READ], WILDCARD_RESOURCE)
    assert h.authorize(REQUEST, READ, TOPIC, RESOURCE.name)


def test_delete_acl_on_wildcard_resource() -> None:
    h = Harness()
    h.add([ALLOW_READ, ALLOW_WRITE], WILDCARD_RESOURCE)
    h.remove([ALLOW_READ], WILDCARD_RESOURCE)
    assert h.entries(WILDCARD_RESOURCE) == {ALLOW_WRITE}


def test_delete_all_acl_on_wildcard_resource() -> None:
    h = Harness()
    h.add([ALLOW_READ], WILDCARD_RESOURCE)
    h.remove([], WILDCARD_RESOURCE)
    assert h.acls() == set()


def test_access_allowed_if_allow_acl_exists_on_prefixed_resource() -> None:
    h = Harness()
    h.add([ALLOW_READ], PREFIXED_RESOURCE)
    assert h.authorize(REQUEST, READ, TOPIC, RESOURCE.name)


def test_delete_acl_on_prefixed_resource() -> None:
    h = Harness()
    h.add([ALLOW_READ, ALLOW_WRITE], PREFIXED_RESOURCE)
    h.remove([ALLOW_READ], PREFIXED_RESOURCE)
    assert h.entries(PREFIXED_RESOURCE) == {ALLOW_WRITE}


def test_delete_all_acl_on_prefixed_resource() -> None:
    h = Harness()
    h.add([ALLOW_READ, ALLOW_WRITE], PREFIXED_RESOURCE)
    h.remove([], PREFIXED_RESOURCE)
    assert h.acls() == set()


@pytest.mark.parametrize(
    ("target", "others"),
    [
        (RESOURCE, (WILDCARD_RESOURCE, PREFIXED_RESOURCE)),  # testAddAclsOnLiteralResource
        (WILDCARD_RESOURCE, (RESOURCE, PREFIXED_RESOURCE)),  # testAddAclsOnWildcardResource
        (PREFIXED_RESOURCE, (WILDCARD_RESOURCE, RESOURCE)),  # testAddAclsOnPrefixedResource
    ],
    ids=["literal", "wildcard", "prefixed"],
)
def test_add_acls_on_resource(target: ResourcePattern, others: tuple[ResourcePattern, ...]) -> None:
    h = Harness()
    h.add([ALLOW_READ, ALLOW_WRITE], target)
    h.add([ALLOW_WRITE, DENY_READ], target)
    assert h.entries(target) == {ALLOW_READ, ALLOW_WRITE, DENY_READ}
    for other in others:
        assert h.entries(other) == set()


def test_authorize_with_prefixed_resource() -> None:
    h = Harness()
    for name, ptype in [
        ("a_other", LITERAL), ("a_other", PREFIXED), ("foo-1a2b", PREFIXED),
        ("foo-3c4d", PREFIXED), ("foo-5e6f-zzz", PREFIXED), ("fooo-7a8b", PREFIXED),
        ("fo-9c0d", PREFIXED), ("fop-1e2f", PREFIXED), ("fon-3a4b", PREFIXED), ("fon-", PREFIXED),
        ("z_other", PREFIXED), ("z_other", LITERAL),
    ]:
        h.add([DENY_READ], ResourcePattern(TOPIC, name, ptype))
    h.add([ALLOW_READ], PREFIXED_RESOURCE)
    assert h.authorize(REQUEST, READ, TOPIC, RESOURCE.name)


def test_single_character_resource_acls() -> None:
    h = Harness()
    h.add([ALLOW_READ], ResourcePattern(TOPIC, "f", LITERAL))
    assert h.authorize(REQUEST, READ, TOPIC, "f")
    assert not h.authorize(REQUEST, READ, TOPIC, "foo")
    h.add([ALLOW_READ], ResourcePattern(TOPIC, "_", PREFIXED))
    assert h.authorize(REQUEST, READ, TOPIC, "_foo")
    assert h.authorize(REQUEST, READ, TOPIC, "_")
    assert not h.authorize(REQUEST, READ, TOPIC, "foo_")


def test_get_acls_principal() -> None:
    h = Harness()
    h.add([ace("User:alice", WILDCARD, WRITE, ALLOW)], RESOURCE)
    assert len(by_principal(h, WILDCARD_PRINCIPAL)) == 0
    assert len(by_principal(h, "User:alice")) == 1
    h.remove([], RESOURCE)
    h.add([ace(WILDCARD_PRINCIPAL, WILDCARD, WRITE, ALLOW)], RESOURCE)
    assert len(by_principal(h, WILDCARD_PRINCIPAL)) == 1
    assert len(by_principal(h, "User:alice")) == 0


def test_acls_filter() -> None:
    h = Harness()
    resource1 = ResourcePattern(TOPIC, "foo-5d1c", LITERAL)
    resource2 = ResourcePattern(TOPIC, "bar-8e2a", LITERAL)
    prefixed = ResourcePattern(TOPIC, "bar-", PREFIXED)
    acl1 = AclBinding(resource1, ace("User:alice", WILDCARD, READ, ALLOW))
    acl2 = AclBinding(resource1, ace("User:alice", "192.168.0.1", WRITE, ALLOW))
    acl3 = AclBinding(resource2, ace("User:alice", WILDCARD, DESCRIBE, ALLOW))
    acl4 = AclBinding(prefixed, ace(WILDCARD_PRINCIPAL, WILDCARD, READ, ALLOW))
    records, errors = h.store.create_acls([acl1, acl2, acl3, acl4], iter_ids().__next__)
    assert errors == [None] * 4
    for record in records:
        h.apply(record)
    assert h.acls() == {acl1, acl2, acl3, acl4}
    assert h.acls(AclBindingFilter(pattern_filter(resource1), any_entry())) == {acl1, acl2}
    assert h.acls(AclBindingFilter(pattern_filter(prefixed), any_entry())) == {acl4}
    matching = AclBindingFilter(
        ResourcePatternFilter(ResourceType.ANY, resource2.name, MATCH), any_entry()
    )
    assert h.acls(matching) == {acl3, acl4}
    filters = [
        matching, exact(acl1), AclBindingFilter(pattern_filter(resource2), any_entry()),
        AclBindingFilter(ResourcePatternFilter(TOPIC, "baz", PatternType.ANY), any_entry()),
    ]
    removals, results = h.store.delete_acls(filters)
    assert [r.error for r in results] == [None] * 4
    # StandardAuthorizer finds every filter's matches first, then deletes: filters[2] also
    # reports acl3, and one removal record is written for it.
    assert [set(r.deleted) for r in results] == [{acl3, acl4}, {acl1}, {acl3}, set()]
    assert len(removals) == 3
