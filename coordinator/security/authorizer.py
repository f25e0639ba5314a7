"""Kafka's StandardAuthorizer, sans-I/O: which principal, from which host, may do what.

The rules are StandardAuthorizerData's: super users may do anything; otherwise the ACLs on
the resource (LITERAL on its name, LITERAL ``*``, PREFIXED on any prefix of its name) decide:
a matching DENY wins over any ALLOW; ALLOW READ, WRITE, DELETE or ALTER also allows DESCRIBE
and ALLOW ALTER_CONFIGS also allows DESCRIBE_CONFIGS (never for DENY); ALL matches every
operation. With no ACL on the resource at all the configured default answers
(``allow.everyone.if.no.acl.found``); with ACLs on it but none matching, the answer is DENY.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from coordinator.security.acl import (
    CLUSTER_NAME,
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
    authorization_error,
    supported_operations,
)
from wire.constants import ErrorCode

__all__ = [
    "AUTHORIZED_OPERATIONS_OMITTED",
    "Action",
    "RequestIdentity",
    "StandardAuthorizer",
    "find_result",
    "host_address",
    "parse_super_users",
]

AUTHORIZED_OPERATIONS_OMITTED = -(2**31)
"""The authorized-operations field when the request did not ask for it (Int.MinValue)."""

_IMPLIES_DESCRIBE = frozenset(
    {AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE,
     AclOperation.ALTER}
)
_IMPLIES_DESCRIBE_CONFIGS = frozenset({AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS})


@dataclass(frozen=True, slots=True)
class RequestIdentity:
    """Who asks: the principal (``User:alice``) and the client's address as Kafka prints it."""

    principal: str
    host: str


@dataclass(frozen=True, slots=True)
class Action:
    """One operation on one named resource (a LITERAL pattern, as Kafka's actions are)."""

    operation: AclOperation
    resource_type: ResourceType
    name: str


def host_address(ip: str) -> str:
    """An address as Java's ``InetAddress.getHostAddress`` prints it, the form ACL hosts use:
    IPv6 uncompressed without leading zeros, an IPv4-mapped IPv6 address as IPv4."""
    try:
        address = ipaddress.ip_address(ip.split("%", 1)[0])
    except ValueError:
        return ip
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        groups = address.exploded.split(":")
        return ":".join(format(int(group, 16), "x") for group in groups)
    return str(address)


def parse_super_users(value: str | None) -> frozenset[str]:
    """``super.users``: principals separated by ``;`` (StandardAuthorizer.getConfiguredSuperUsers).

    Raises ValueError with Kafka's message for an entry without ``type:name``.
    """
    users = set()
    for part in (value or "").split(";"):
        principal = part.strip()
        if not principal:
            continue
        principal_type, sep, name = principal.partition(":")
        if not sep or not principal_type or not name:
            raise ValueError(
                f"expected a string in format principalType:principalName but got {principal}"
            )
        users.add(principal)
    return frozenset(users)


def find_result(
    action: Action, identity: RequestIdentity, entry: AccessControlEntry
) -> bool | None:
    """What one ACL entry says of an action whose resource it covers: True for ALLOW, False for
    DENY, None when the entry does not apply (StandardAuthorizerData.findResult)."""
    if entry.principal not in (identity.principal, WILDCARD_PRINCIPAL):
        return None
    if entry.host not in (WILDCARD, identity.host):
        return None
    allow = entry.permission_type is AclPermissionType.ALLOW
    if entry.operation is not AclOperation.ALL:
        if allow and action.operation is AclOperation.DESCRIBE:
            if entry.operation not in _IMPLIES_DESCRIBE:
                return None
        elif allow and action.operation is AclOperation.DESCRIBE_CONFIGS:
            if entry.operation not in _IMPLIES_DESCRIBE_CONFIGS:
                return None
        elif action.operation is not entry.operation:
            return None
    return allow


class StandardAuthorizer:
    """The ACLs in force and the configured rules; changed by the ACL store's replay only."""

    __slots__ = ("_by_resource", "_prefix_lengths", "allow_if_no_acl", "super_users")

    def __init__(
        self, super_users: Iterable[str] = (), *, allow_everyone_if_no_acl_found: bool = False
    ) -> None:
        self.super_users = frozenset(super_users)
        self.allow_if_no_acl = allow_everyone_if_no_acl_found
        # (resource type, pattern type, name) -> the entries on exactly that pattern
        self._by_resource: dict[tuple[ResourceType, PatternType, str], list[AccessControlEntry]]
        self._by_resource = {}
        # resource type -> {length of a PREFIXED ACL's name: how many such ACL patterns}: a
        # name is looked up only at the prefix lengths some ACL has, not at every length.
        self._prefix_lengths: dict[ResourceType, dict[int, int]] = {}

    @classmethod
    def from_config(cls, configs: Mapping[str, str]) -> StandardAuthorizer:
        """From ``super.users`` and ``allow.everyone.if.no.acl.found`` (trimmed; anything
        but ``true`` is false, as Boolean.parseBoolean). Raises ValueError for a super user
        without ``type:name``."""
        allow = configs.get("allow.everyone.if.no.acl.found")
        return cls(
            parse_super_users(configs.get("super.users")),
            allow_everyone_if_no_acl_found=allow is not None and allow.strip().lower() == "true",
        )

    # ------------------------------------------------------------------ the ACLs in force

    def add(self, binding: AclBinding) -> None:
        p = binding.pattern
        key = (p.resource_type, p.pattern_type, p.name)
        if key not in self._by_resource and p.pattern_type is PatternType.PREFIXED:
            lengths = self._prefix_lengths.setdefault(p.resource_type, {})
            lengths[len(p.name)] = lengths.get(len(p.name), 0) + 1
        self._by_resource.setdefault(key, []).append(binding.entry)

    def remove(self, binding: AclBinding) -> None:
        p = binding.pattern
        key = (p.resource_type, p.pattern_type, p.name)
        entries = self._by_resource[key]
        entries.remove(binding.entry)
        if not entries:
            del self._by_resource[key]
            if p.pattern_type is PatternType.PREFIXED:
                lengths = self._prefix_lengths[p.resource_type]
                lengths[len(p.name)] -= 1
                if not lengths[len(p.name)]:
                    del lengths[len(p.name)]

    # ------------------------------------------------------------------ decisions

    def authorize(self, identity: RequestIdentity, actions: Sequence[Action]) -> list[bool]:
        """Allowed or not, for each action, in order."""
        return [self.authorize_one(identity, action) for action in actions]

    def authorize_one(self, identity: RequestIdentity, action: Action) -> bool:
        if identity.principal in self.super_users:
            return True
        allowed = False
        has_resource_acls = False
        for entries in self._entries_covering(action.resource_type, action.name):
            has_resource_acls = True
            for entry in entries:
                result = find_result(action, identity, entry)
                if result is False:
                    return False
                if result:
                    allowed = True
        if allowed:
            return True
        return self.allow_if_no_acl and not has_resource_acls

    def allows(self, identity: RequestIdentity, operation: AclOperation,
               resource_type: ResourceType, name: str = CLUSTER_NAME) -> bool:
        """``authorize_one`` of ``operation`` on one resource (the cluster by default)."""
        return self.authorize_one(identity, Action(operation, resource_type, name))

    def check(self, identity: RequestIdentity, action: Action) -> ErrorCode:
        """NONE, or the error a denied action answers (TOPIC_AUTHORIZATION_FAILED, ...)."""
        if self.authorize_one(identity, action):
            return ErrorCode.NONE
        return authorization_error(action.resource_type)

    def filter_authorized(
        self,
        identity: RequestIdentity,
        operation: AclOperation,
        resource_type: ResourceType,
        names: Iterable[str],
    ) -> list[str]:
        """The names the principal may act on, in order: how Metadata, ListGroups and
        DescribeGroups leave out what it may not DESCRIBE (AuthHelper.filterByAuthorized)."""
        return [
            name for name in names
            if self.authorize_one(identity, Action(operation, resource_type, name))
        ]

    def _entries_covering(
        self, resource_type: ResourceType, name: str
    ) -> Iterable[list[AccessControlEntry]]:
        by_resource = self._by_resource
        if not by_resource:
            return
        entries = by_resource.get((resource_type, PatternType.LITERAL, name))
        if entries:
            yield entries
        if name != WILDCARD:
            entries = by_resource.get((resource_type, PatternType.LITERAL, WILDCARD))
            if entries:
                yield entries
        for end in self._prefix_lengths.get(resource_type, ()):
            if end <= len(name):
                entries = by_resource.get((resource_type, PatternType.PREFIXED, name[:end]))
                if entries:
                    yield entries

    def authorized_operations(
        self, identity: RequestIdentity, resource_type: ResourceType, name: str = CLUSTER_NAME
    ) -> int:
        """The bitset of allowed operations Kafka puts in Metadata, DescribeGroups and
        DescribeCluster answers (AuthHelper.authorizedOperations: bit ``code`` set)."""
        bits = 0
        for operation in supported_operations(resource_type):
            if self.authorize_one(identity, Action(operation, resource_type, name)):
                bits |= 1 << operation.value
        return bits

    def authorize_by_resource_type(
        self, identity: RequestIdentity, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        """Whether the principal may do ``operation`` on some resource of the type (Kafka's
        Authorizer.authorizeByResourceType default: used for idempotent producers)."""
        if resource_type is ResourceType.ANY:
            raise ValueError("Must specify a non-filter resource type for authorizeByResourceType")
        if resource_type is ResourceType.UNKNOWN:
            raise ValueError("Unknown resource type")
        if operation is AclOperation.ANY:
            raise ValueError("Must specify a non-filter operation type for authorizeByResourceType")
        if operation is AclOperation.UNKNOWN:
            raise ValueError("Unknown operation type")
        # A hard-coded name lets super users (and the no-ACL default) through whatever DENYs say.
        if self.authorize_one(identity, Action(operation, resource_type, "hardcode")):
            return True
        deny: dict[PatternType, set[str]] = {
            PatternType.LITERAL: set(), PatternType.PREFIXED: set()
        }
        allow: dict[PatternType, set[str]] = {
            PatternType.LITERAL: set(), PatternType.PREFIXED: set()
        }
        wildcard_allow = False
        for (rtype, pattern_type, name), entries in self._by_resource.items():
            if rtype is not resource_type:
                continue
            for entry in entries:
                if entry.host not in (identity.host, WILDCARD):
                    continue
                if entry.principal not in (identity.principal, WILDCARD_PRINCIPAL):
                    continue
                if entry.operation not in (operation, AclOperation.ALL):
                    continue
                if entry.permission_type is AclPermissionType.DENY:
                    if pattern_type is PatternType.LITERAL and name == WILDCARD:
                        return False
                    deny[pattern_type].add(name)
                elif pattern_type is PatternType.LITERAL and name == WILDCARD:
                    wildcard_allow = True
                else:
                    allow[pattern_type].add(name)
        if wildcard_allow:
            return True
        for pattern_type, names in allow.items():
            for name in names:
                if pattern_type is PatternType.LITERAL and name in deny[PatternType.LITERAL]:
                    continue
                denied_prefixes = deny[PatternType.PREFIXED]
                if not any(name[:end] in denied_prefixes for end in range(1, len(name) + 1)):
                    return True
        return False
