"""The authorizer tests' harness: an authorizer and its ACL store, ACLs added and removed
through records (as Kafka's MockAclMutator adds them, past the broker's request checks)."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterable

from coordinator.security.acl import (
    ANY_ACL_FILTER,
    AccessControlEntry,
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
from coordinator.security.acl_store import AclStore, record_of
from coordinator.security.authorizer import (
    Action,
    RequestIdentity,
    StandardAuthorizer,
    parse_super_users,
)
from storage.records import Record

ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = (
    AclOperation.ALL, AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE,
    AclOperation.DELETE, AclOperation.ALTER, AclOperation.DESCRIBE,
)
DESCRIBE_CONFIGS, ALTER_CONFIGS = AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
LITERAL, PREFIXED, MATCH = PatternType.LITERAL, PatternType.PREFIXED, PatternType.MATCH
TOPIC, GROUP, CLUSTER = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
LOCALHOST = "127.0.0.1"  # MockAuthorizableRequestContext's default client address
SUPER_USERS = "User:superuser1; User:superuser2"  # BaseAuthorizerTest.superUsers
REQUEST = RequestIdentity("User:alice", "192.168.0.1")  # BaseAuthorizerTest.requestContext


class Harness:
    """An authorizer and its ACL store, ACLs added and removed through records."""

    def __init__(self, super_users: str = SUPER_USERS, allow_if_no_acl: bool = False) -> None:
        self.authorizer = StandardAuthorizer(
            parse_super_users(super_users), allow_everyone_if_no_acl_found=allow_if_no_acl
        )
        self.store = AclStore(self.authorizer)
        self._ids = (uuid.UUID(int=i) for i in itertools.count(1))
        self.log: list[Record] = []

    def apply(self, record: Record) -> None:
        """Persist (here: keep) then replay, as the server will."""
        self.log.append(record)
        self.store.replay(record)

    def add(self, entries: Iterable[AccessControlEntry], pattern: ResourcePattern) -> None:
        for entry in entries:
            binding = AclBinding(pattern, entry)
            if binding not in self.acls(exact(binding)):
                self.apply(record_of(next(self._ids), binding))

    def add_acl(self, *acls: tuple[ResourceType, str, PatternType, str, str, AclOperation,
                                   AclPermissionType]) -> None:
        for rtype, name, ptype, principal, host, op, permission in acls:
            self.add([AccessControlEntry(principal, host, op, permission)],
                     ResourcePattern(rtype, name, ptype))

    def remove(self, entries: Iterable[AccessControlEntry], pattern: ResourcePattern) -> bool:
        entries = list(entries)
        filters = (
            [AclBindingFilter(pattern_filter(pattern), any_entry())]
            if not entries else [exact(AclBinding(pattern, e)) for e in entries]
        )
        records, results = self.store.delete_acls(filters)
        for record in records:
            self.apply(record)
        return all(r.error is None and r.deleted for r in results)

    def acls(self, acl_filter: AclBindingFilter = ANY_ACL_FILTER) -> set[AclBinding]:
        found = self.store.describe_acls(acl_filter)
        assert isinstance(found, list)
        return set(found)

    def entries(self, pattern: ResourcePattern) -> set[AccessControlEntry]:
        return {b.entry for b in self.acls(AclBindingFilter(pattern_filter(pattern), any_entry()))}

    def authorize(self, identity: RequestIdentity, op: AclOperation, rtype: ResourceType,
                  name: str) -> bool:
        return self.authorizer.authorize_one(identity, Action(op, rtype, name))

    def by_type(self, identity: RequestIdentity, op: AclOperation, rtype: ResourceType) -> bool:
        return self.authorizer.authorize_by_resource_type(identity, op, rtype)


def pattern_filter(pattern: ResourcePattern) -> ResourcePatternFilter:
    return ResourcePatternFilter(pattern.resource_type, pattern.name, pattern.pattern_type)


def any_entry() -> AccessControlEntryFilter:
    return AccessControlEntryFilter(None, None, AclOperation.ANY, AclPermissionType.ANY)


def exact(binding: AclBinding) -> AclBindingFilter:
    e = binding.entry
    return AclBindingFilter(
        pattern_filter(binding.pattern),
        AccessControlEntryFilter(e.principal, e.host, e.operation, e.permission_type),
    )


def user(name: str, host: str = LOCALHOST) -> RequestIdentity:
    return RequestIdentity(f"User:{name}", host)


def ace(principal: str, host: str, op: AclOperation, permission: AclPermissionType) -> (
    AccessControlEntry
):
    return AccessControlEntry(principal, host, op, permission)
