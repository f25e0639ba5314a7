"""Kafka's authorizer tests, mirrored by name: StandardAuthorizerTest (metadata module) and
AuthorizerTest/BaseAuthorizerTest (core; the former AclAuthorizerTest). COVERAGE.md lists
every Kafka test and whether it is mirrored. ACLs are added as Kafka's MockAclMutator adds
them: straight into the authorizer's data, here by replaying ACL records."""

from __future__ import annotations

import pytest
from authorizer_support import (
    ALL,
    ALLOW,
    ALTER,
    ALTER_CONFIGS,
    CREATE,
    DELETE,
    DENY,
    DESCRIBE,
    DESCRIBE_CONFIGS,
    GROUP,
    LITERAL,
    LOCALHOST,
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
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
)
from coordinator.security.authorizer import (
    Action,
    StandardAuthorizer,
    find_result,
    parse_super_users,
)

# ====================================================================== StandardAuthorizerTest


def test_get_configured_super_users() -> None:
    assert parse_super_users(None) == frozenset()
    assert parse_super_users(" ") == frozenset()
    assert parse_super_users("User:bob;User:alice ") == {"User:bob", "User:alice"}
    assert parse_super_users(";  User:bob  ;  User:alice ") == {"User:bob", "User:alice"}
    with pytest.raises(ValueError) as error:
        parse_super_users("bob;:alice")
    assert str(error.value) == (
        "expected a string in format principalType:principalName but got bob"
    )


def test_get_default_result() -> None:
    assert not StandardAuthorizer.from_config({}).allow_if_no_acl
    allow = StandardAuthorizer.from_config({"allow.everyone.if.no.acl.found": "true"})
    assert allow.allow_if_no_acl
    assert not StandardAuthorizer.from_config(
        {"allow.everyone.if.no.acl.found": "false"}
    ).allow_if_no_acl


@pytest.mark.parametrize("enabled", [True, False])
def test_allow_everyone_if_no_acl_found_config(enabled: bool) -> None:
    # testAllowEveryoneIfNoAclFoundConfigEnabled / ...Disabled
    h = Harness("User:alice;User:chris", allow_if_no_acl=enabled)
    h.add_acl((TOPIC, "topic1", LITERAL, "User:Alice", WILDCARD, READ, ALLOW))
    assert not h.authorize(user("Bob"), READ, TOPIC, "topic1")
    assert h.authorize(user("Bob"), READ, TOPIC, "topic2") is enabled


def test_configure() -> None:
    authorizer = StandardAuthorizer.from_config(
        {"super.users": "User:alice;User:chris", "allow.everyone.if.no.acl.found": "true"}
    )
    assert authorizer.super_users == {"User:alice", "User:chris"}
    assert authorizer.allow_if_no_acl


def foo_acl(op: AclOperation, permission: AclPermissionType) -> AccessControlEntry:
    # newFooAcl: TOPIC foo_ PREFIXED User:bob * op permission (the resource part is implied)
    return ace("User:bob", WILDCARD, op, permission)


def test_find_result_implication() -> None:
    bob = user("bob")
    describe = Action(DESCRIBE, TOPIC, "foo_bar")
    for op in (DESCRIBE, READ, WRITE, DELETE, ALTER):
        assert find_result(describe, bob, foo_acl(op, ALLOW)) is True
    assert find_result(describe, bob, foo_acl(CREATE, ALLOW)) is None
    for op in (READ, WRITE, DELETE, ALTER):
        assert find_result(describe, bob, foo_acl(op, DENY)) is None
    assert find_result(describe, bob, foo_acl(DESCRIBE, DENY)) is False
    describe_configs = Action(DESCRIBE_CONFIGS, TOPIC, "foo_bar")
    for op in (DESCRIBE_CONFIGS, ALTER_CONFIGS):
        assert find_result(describe_configs, bob, foo_acl(op, ALLOW)) is True
    assert find_result(describe_configs, bob, foo_acl(ALTER_CONFIGS, DENY)) is None
    assert find_result(
        Action(ALTER_CONFIGS, TOPIC, "foo_bar"), bob, foo_acl(ALTER_CONFIGS, DENY)
    ) is False


def test_find_result_principal_matching() -> None:
    read = Action(READ, TOPIC, "foo_bar")
    assert find_result(read, user("bob"), foo_acl(READ, ALLOW)) is True
    assert find_result(read, user("alice"), foo_acl(READ, ALLOW)) is None
    bar_acl = ace(WILDCARD_PRINCIPAL, WILDCARD, READ, DENY)  # newBarAcl: GROUP bar User:*
    assert find_result(Action(READ, GROUP, "bar"), user("alice"), bar_acl) is False


FOO = ResourcePattern(TOPIC, "foo_", PREFIXED)
BAR = ResourcePattern(GROUP, "bar", LITERAL)


def test_list_acls() -> None:
    h = Harness("User:superman")
    h.add([foo_acl(READ, ALLOW), foo_acl(WRITE, ALLOW)], FOO)
    bar = [ace(WILDCARD_PRINCIPAL, WILDCARD, DESCRIBE_CONFIGS, DENY),
           ace(WILDCARD_PRINCIPAL, WILDCARD, ALTER_CONFIGS, DENY)]
    h.add(bar, BAR)
    every = {AclBinding(FOO, foo_acl(READ, ALLOW)), AclBinding(FOO, foo_acl(WRITE, ALLOW)),
             *(AclBinding(BAR, e) for e in bar)}
    assert h.acls() == every
    h.remove([foo_acl(WRITE, ALLOW)], FOO)
    assert h.acls() == every - {AclBinding(FOO, foo_acl(WRITE, ALLOW))}
    topics = AclBindingFilter(ResourcePatternFilter(TOPIC, None, PatternType.ANY), any_entry())
    assert h.acls(topics) == {AclBinding(FOO, foo_acl(READ, ALLOW))}


def test_simple_authorizations() -> None:
    h = Harness("User:superman")
    h.add([foo_acl(READ, ALLOW), foo_acl(WRITE, ALLOW)], FOO)
    h.add([ace(WILDCARD_PRINCIPAL, WILDCARD, DESCRIBE_CONFIGS, ALLOW),
           ace(WILDCARD_PRINCIPAL, WILDCARD, ALTER_CONFIGS, ALLOW)], BAR)
    assert h.authorize(user("bob"), READ, TOPIC, "foo_")
    assert h.authorize(user("fred"), ALTER_CONFIGS, GROUP, "bar")


def test_deny_precedence_with_operation_all() -> None:
    h = Harness("User:superman")
    h.add_acl(
        (TOPIC, "foo", LITERAL, "User:alice", "*", ALL, DENY),
        (TOPIC, "foo", PREFIXED, "User:alice", "*", READ, ALLOW),
        (TOPIC, "foo", LITERAL, "User:*", "*", ALL, DENY),
        (TOPIC, "foo", PREFIXED, "User:*", "*", DESCRIBE, ALLOW),
    )
    alice = user("alice")
    assert [h.authorize(alice, op, TOPIC, name) for op, name in
            [(WRITE, "foo"), (READ, "foo"), (DESCRIBE, "foo"), (READ, "foobar")]] == (
        [False, False, False, True]
    )
    bob = user("bob")
    assert [h.authorize(bob, op, TOPIC, name) for op, name in
            [(DESCRIBE, "foo"), (READ, "foo"), (WRITE, "foo"), (DESCRIBE, "foobaz"),
             (READ, "foobaz")]] == [False, False, False, True, False]


def test_topic_acl_with_operation_all() -> None:
    h = Harness("User:superman")
    h.add_acl(
        (TOPIC, "foo", LITERAL, "User:*", "*", ALL, ALLOW),
        (TOPIC, "bar", PREFIXED, "User:alice", "*", ALL, ALLOW),
        (TOPIC, "baz", LITERAL, "User:bob", "*", ALL, ALLOW),
    )
    checks = {
        "alice": ([(WRITE, "foo"), (DESCRIBE_CONFIGS, "bar"), (DESCRIBE, "baz")], [1, 1, 0]),
        "bob": ([(WRITE, "foo"), (READ, "bar"), (DESCRIBE, "baz")], [1, 0, 1]),
        "malory": ([(DESCRIBE, "foo"), (WRITE, "bar"), (READ, "baz")], [1, 0, 0]),
    }
    for name, (actions, expected) in checks.items():
        results = [h.authorize(user(name), op, TOPIC, topic) for op, topic in actions]
        assert results == [bool(e) for e in expected], name


def test_host_address_acl_validation() -> None:
    host1, host2 = "192.168.1.1", "192.168.1.2"
    h = Harness("User:superman")
    h.add_acl(
        (TOPIC, "foo", LITERAL, "User:alice", host1, READ, DENY),
        (TOPIC, "foo", LITERAL, "User:alice", "*", READ, ALLOW),
        (TOPIC, "bar", LITERAL, "User:bob", host2, READ, ALLOW),
        (TOPIC, "bar", LITERAL, "User:*", LOCALHOST, DESCRIBE, ALLOW),
    )
    actions = [(READ, "foo"), (READ, "bar"), (DESCRIBE, "bar")]

    def results(name: str, host: str) -> list[bool]:
        return [h.authorize(user(name, host), op, TOPIC, topic) for op, topic in actions]

    assert results("alice", LOCALHOST) == [True, False, True]
    assert results("alice", host1) == [False, False, False]
    assert results("alice", host2) == [True, False, False]
    assert results("bob", LOCALHOST) == [False, False, True]
    assert results("bob", host1) == [False, False, False]
    assert results("bob", host2) == [False, True, True]


def add_many_acls(h: Harness) -> None:
    h.add_acl(
        (TOPIC, "green2", LITERAL, "User:*", "*", READ, ALLOW),
        (TOPIC, "green", PREFIXED, "User:bob", "*", READ, ALLOW),
        (TOPIC, "betamax4", LITERAL, "User:bob", "*", READ, ALLOW),
        (TOPIC, "betamax", LITERAL, "User:bob", "*", READ, ALLOW),
        (TOPIC, "beta", PREFIXED, "User:*", "*", READ, ALLOW),
        (TOPIC, "alpha", PREFIXED, "User:*", "*", READ, ALLOW),
        (TOPIC, "alp", PREFIXED, "User:bob", "*", READ, DENY),
        (GROUP, "*", LITERAL, "User:bob", "*", WRITE, ALLOW),
        (GROUP, "wheel", LITERAL, "User:*", "*", WRITE, DENY),
    )


def test_authorization_with_many_acls() -> None:
    h = Harness("User:superman")
    add_many_acls(h)
    bob = user("bob")
    assert h.authorize(bob, READ, TOPIC, "green1")
    assert not h.authorize(bob, WRITE, GROUP, "wheel")
    assert not h.authorize(bob, READ, TOPIC, "alpha")
    assert h.authorize(bob, WRITE, GROUP, "arbitrary")
    assert not h.authorize(bob, READ, TOPIC, "ala")


def test_prefix_acls() -> None:
    h = Harness("User:superman")
    h.add_acl(
        (TOPIC, "fooa", PREFIXED, "User:alice", "*", ALL, ALLOW),
        (TOPIC, "foobar", LITERAL, "User:bob", "*", ALL, ALLOW),
        (TOPIC, "f", PREFIXED, "User:bob", "*", ALL, ALLOW),
    )
    bob, alice = user("bob"), user("alice")
    assert [h.authorize(bob, WRITE, TOPIC, "foobarr"), h.authorize(bob, READ, TOPIC, "goobar"),
            h.authorize(bob, READ, TOPIC, "fooa")] == [True, False, True]
    assert [h.authorize(alice, DESCRIBE, TOPIC, "fooa"), h.authorize(alice, WRITE, TOPIC, "bar"),
            h.authorize(alice, READ, TOPIC, "baz")] == [True, False, False]


def test_super_users_bypass_all_acls() -> None:
    # testAuthorizationPriorToCompleteInitialLoad's super-user half: always allowed.
    h = Harness("User:superman")
    add_many_acls(h)
    superman = user("superman")
    assert h.authorize(superman, READ, TOPIC, "green1")
    assert h.authorize(superman, WRITE, GROUP, "wheel")
