"""The authorizer's indexed lookup against a linear scan of every ACL (the rules as
StandardAuthorizerData states them), over random ACL sets on a small alphabet."""

from __future__ import annotations

from authorizer_support import Harness
from hypothesis import given, settings
from hypothesis import strategies as st

from coordinator.security.acl import (
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from coordinator.security.authorizer import Action, RequestIdentity, find_result

NAMES = st.text(alphabet="ab*", min_size=1, max_size=3)
OPERATIONS = st.sampled_from([
    AclOperation.ALL, AclOperation.READ, AclOperation.WRITE, AclOperation.DESCRIBE,
    AclOperation.ALTER_CONFIGS, AclOperation.DESCRIBE_CONFIGS,
])
BINDINGS = st.builds(
    lambda rtype, name, ptype, principal, host, op, permission: AclBinding(
        ResourcePattern(rtype, name, ptype), AccessControlEntry(principal, host, op, permission)
    ),
    st.sampled_from([ResourceType.TOPIC, ResourceType.GROUP]),
    NAMES,
    st.sampled_from([PatternType.LITERAL, PatternType.PREFIXED]),
    st.sampled_from(["User:a", "User:b", WILDCARD_PRINCIPAL]),
    st.sampled_from(["1.1.1.1", "2.2.2.2", WILDCARD]),
    OPERATIONS,
    st.sampled_from([AclPermissionType.ALLOW, AclPermissionType.DENY]),
)


def covers(pattern: ResourcePattern, action: Action) -> bool:
    if pattern.resource_type is not action.resource_type:
        return False
    if pattern.pattern_type is PatternType.PREFIXED:
        return action.name.startswith(pattern.name)
    return pattern.name in (action.name, WILDCARD)


def linear_scan(
    bindings: list[AclBinding], identity: RequestIdentity, action: Action, allow_if_none: bool
) -> bool:
    relevant = [b for b in bindings if covers(b.pattern, action)]
    results = [find_result(action, identity, b.entry) for b in relevant]
    if False in results:
        return False
    if True in results:
        return True
    return allow_if_none and not relevant


@settings(max_examples=400, deadline=None)
@given(
    bindings=st.lists(BINDINGS, max_size=12, unique=True),
    allow_if_none=st.booleans(),
    principal=st.sampled_from(["User:a", "User:b", "User:c"]),
    host=st.sampled_from(["1.1.1.1", "2.2.2.2"]),
    rtype=st.sampled_from([ResourceType.TOPIC, ResourceType.GROUP]),
    name=NAMES,
    operation=OPERATIONS.filter(lambda op: op is not AclOperation.ALL),
)
def test_indexed_lookup_matches_a_linear_scan(
    bindings: list[AclBinding], allow_if_none: bool, principal: str, host: str,
    rtype: ResourceType, name: str, operation: AclOperation,
) -> None:
    h = Harness(super_users="", allow_if_no_acl=allow_if_none)
    for binding in bindings:
        h.add([binding.entry], binding.pattern)
    identity = RequestIdentity(principal, host)
    action = Action(operation, rtype, name)
    assert h.authorizer.authorize_one(identity, action) == linear_scan(
        bindings, identity, action, allow_if_none
    )
