"""Kafka core's BaseAuthorizerTest (and AuthorizerTest's by-resource-type case), mirrored by
name: Authorizer.authorizeByResourceType, which idempotent producers without IDEMPOTENT_WRITE
on the cluster go through."""

from __future__ import annotations

import pytest
from authorizer_support import (
    ALL,
    ALLOW,
    CLUSTER,
    DENY,
    GROUP,
    LITERAL,
    PREFIXED,
    READ,
    REQUEST,
    TOPIC,
    WRITE,
    Harness,
    ace,
    user,
)

from coordinator.security.acl import (
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AclOperation,
    ResourcePattern,
    ResourceType,
)


def test_authorize_by_resource_type_no_acl_found_override() -> None:
    h = Harness(allow_if_no_acl=True)
    assert h.by_type(REQUEST, READ, TOPIC)
    assert h.by_type(REQUEST, WRITE, TOPIC)


U1H1 = user("user1", "192.168.1.1")


def test_authorize_by_resource_type_multiple_add_and_remove() -> None:
    h = Harness()
    resource1 = ResourcePattern(TOPIC, "sb1-a", LITERAL)
    deny_read = ace("User:user1", "192.168.1.1", READ, DENY)
    allow_read = ace("User:user1", "192.168.1.1", READ, ALLOW)
    for _ in range(3):
        assert not h.by_type(U1H1, READ, TOPIC)
        h.add([allow_read], resource1)
        assert h.by_type(U1H1, READ, TOPIC)
        for _ in range(3):
            h.add([deny_read], resource1)
            assert not h.by_type(U1H1, READ, TOPIC)
            h.remove([deny_read], resource1)
            h.add([allow_read], resource1)
            assert h.by_type(U1H1, READ, TOPIC)
        h.remove([allow_read], resource1)
        assert not h.by_type(U1H1, READ, TOPIC)


def test_authorize_by_resource_type_isolation_unrelated_deny_wont_dominate_allow() -> None:
    h = Harness()
    h1, h2 = "192.168.1.1", "192.168.1.2"
    u1, u2 = "User:user1", "User:user2"
    h.add([ace(u1, h1, READ, DENY), ace(u2, h1, READ, DENY), ace(u1, h2, WRITE, DENY),
           ace(u2, h2, READ, DENY), ace(u1, h2, READ, ALLOW)],
          ResourcePattern(TOPIC, "sb1-a", LITERAL))
    h.add([ace(u1, h2, READ, DENY)], ResourcePattern(TOPIC, "sb2-b", LITERAL))
    h.add([ace(u1, h2, READ, DENY)], ResourcePattern(GROUP, "s", PREFIXED))
    assert not h.by_type(U1H1, READ, TOPIC)
    assert not h.by_type(U1H1, READ, GROUP)
    assert not h.by_type(U1H1, READ, ResourceType.TRANSACTIONAL_ID)
    assert not h.by_type(U1H1, READ, CLUSTER)
    assert h.by_type(user("user1", h2), READ, TOPIC)


def test_authorize_by_resource_type_deny_takes_precedence() -> None:
    h = Harness()
    resource1 = ResourcePattern(TOPIC, "sb1-a", LITERAL)
    h.add([ace("User:user1", "192.168.1.1", WRITE, ALLOW)], resource1)
    assert h.by_type(U1H1, WRITE, TOPIC)
    h.add([ace("User:user1", "192.168.1.1", WRITE, DENY)], resource1)
    assert not h.by_type(U1H1, WRITE, TOPIC)


def test_authorize_by_resource_type_prefixed_resource_deny_dominate() -> None:
    h = Harness()
    allow = ace("User:user1", "192.168.1.1", READ, ALLOW)
    deny = ace("User:user1", "192.168.1.1", READ, DENY)

    def group(name: str) -> ResourcePattern:
        return ResourcePattern(GROUP, name, PREFIXED)

    h.add([allow], group("abcde"))
    assert h.by_type(U1H1, READ, GROUP)
    h.add([deny], group("abcd"))
    assert not h.by_type(U1H1, READ, GROUP)
    h.add([allow], group("abc"))
    assert h.by_type(U1H1, READ, GROUP)
    h.add([deny], group("a"))
    assert not h.by_type(U1H1, READ, GROUP)
    h.add([allow], group("ab"))
    assert not h.by_type(U1H1, READ, GROUP)


def test_authorize_by_resource_type_wildcard_resource_deny_dominate() -> None:
    h = Harness()
    allow = ace("User:user1", "192.168.1.1", WRITE, ALLOW)
    deny = ace("User:user1", "192.168.1.1", WRITE, DENY)
    h.add([allow], ResourcePattern(GROUP, "hello", PREFIXED))
    assert h.by_type(U1H1, WRITE, GROUP)
    h.add([deny], ResourcePattern(GROUP, WILDCARD, LITERAL))
    assert not h.by_type(U1H1, WRITE, GROUP)
    h.add([allow], ResourcePattern(GROUP, WILDCARD, LITERAL))
    assert not h.by_type(U1H1, WRITE, GROUP)
    h.add([allow], ResourcePattern(GROUP, "aloha", LITERAL))
    assert not h.by_type(U1H1, WRITE, GROUP)


def test_authorize_by_resource_type_with_all_operation_ace() -> None:
    h = Harness()
    resource1 = ResourcePattern(TOPIC, "sb1-a", LITERAL)
    assert not h.by_type(U1H1, READ, TOPIC)
    h.add([ace("User:user1", "192.168.1.1", WRITE, DENY),
           ace("User:user1", "192.168.1.1", ALL, ALLOW)], resource1)
    assert h.by_type(U1H1, READ, TOPIC)
    h.add([ace("User:user1", "192.168.1.1", ALL, DENY)], resource1)
    assert not h.by_type(U1H1, READ, TOPIC)


def test_authorize_by_resource_type_with_all_host_ace() -> None:
    h = Harness()
    r1, r2 = ResourcePattern(TOPIC, "sb1-a", LITERAL), ResourcePattern(TOPIC, "sb2-b", LITERAL)
    u1h2 = user("user1", "192.168.1.2")
    assert not h.by_type(U1H1, READ, TOPIC)
    h.add([ace("User:user1", "192.168.1.1", READ, ALLOW)], r1)
    assert h.by_type(U1H1, READ, TOPIC)
    h.add([ace("User:user1", WILDCARD, READ, DENY)], r1)
    assert not h.by_type(U1H1, READ, TOPIC)
    h.add([ace("User:user1", "192.168.1.1", READ, DENY)], r2)
    assert not h.by_type(U1H1, READ, TOPIC)
    assert not h.by_type(u1h2, READ, TOPIC)
    h.add([ace("User:user1", WILDCARD, READ, ALLOW)], r2)
    assert h.by_type(u1h2, READ, TOPIC)
    h.add([ace("User:user1", WILDCARD, READ, DENY)], r2)
    assert not h.by_type(u1h2, READ, TOPIC)


def test_authorize_by_resource_type_with_all_principal_ace() -> None:
    h = Harness()
    r1, r2 = ResourcePattern(TOPIC, "sb1-a", LITERAL), ResourcePattern(TOPIC, "sb2-b", LITERAL)
    u2h1 = user("user2", "192.168.1.1")
    host = "192.168.1.1"
    assert not h.by_type(U1H1, READ, TOPIC)
    h.add([ace("User:user1", host, READ, ALLOW)], r1)
    assert h.by_type(U1H1, READ, TOPIC)
    h.add([ace(WILDCARD_PRINCIPAL, host, READ, DENY)], r1)
    assert not h.by_type(U1H1, READ, TOPIC)
    h.add([ace("User:user1", host, READ, DENY)], r2)
    assert not h.by_type(U1H1, READ, TOPIC)
    assert not h.by_type(u2h1, READ, TOPIC)
    h.add([ace(WILDCARD_PRINCIPAL, host, READ, ALLOW)], r2)
    assert h.by_type(u2h1, READ, TOPIC)
    h.add([ace(WILDCARD_PRINCIPAL, host, READ, DENY)], r2)
    assert not h.by_type(u2h1, READ, TOPIC)


def test_authorze_by_resource_type_super_user_has_access() -> None:
    h = Harness()
    deny_all = ace(WILDCARD_PRINCIPAL, WILDCARD, ALL, DENY)
    for rtype in (TOPIC, CLUSTER, GROUP, ResourceType.TRANSACTIONAL_ID):
        h.add([deny_all], ResourcePattern(rtype, WILDCARD, LITERAL))
    superuser = user("superuser1", "192.0.4.4")
    for rtype in (TOPIC, CLUSTER, GROUP, ResourceType.TRANSACTIONAL_ID):
        assert h.by_type(superuser, READ, rtype)


def test_authorize_by_resource_type_rejects_filter_values() -> None:
    # SecurityUtils.authorizeByResourceTypeCheckArgs
    h = Harness()
    for op, rtype, message in [
        (READ, ResourceType.ANY, "Must specify a non-filter resource type"),
        (READ, ResourceType.UNKNOWN, "Unknown resource type"),
        (AclOperation.ANY, TOPIC, "Must specify a non-filter operation type"),
        (AclOperation.UNKNOWN, TOPIC, "Unknown operation type"),
    ]:
        with pytest.raises(ValueError, match=message):
            h.by_type(REQUEST, op, rtype)
