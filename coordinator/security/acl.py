"""ACL vocabulary: the bindings and filters CreateAcls/DescribeAcls/DeleteAcls carry, over
Kafka's resource types, pattern types, operations and permissions (``wire.constants``).

Matching and validation are Kafka's (``org.apache.kafka.common.acl``/``resource``,
AclControlManager, AclApis): an unrecognised code reads as UNKNOWN (``from_code``), never
as an error here; validation says what is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from wire.constants import AclOperation, AclPermissionType, ErrorCode, PatternType, ResourceType

__all__ = [
    "ANY_ACL_FILTER",
    "CLUSTER_NAME",
    "WILDCARD",
    "WILDCARD_PRINCIPAL",
    "AccessControlEntry",
    "AccessControlEntryFilter",
    "AclBinding",
    "AclBindingFilter",
    "AclError",
    "AclOperation",
    "AclPermissionType",
    "PatternType",
    "ResourcePattern",
    "ResourcePatternFilter",
    "ResourceType",
    "authorization_error",
    "from_code",
    "supported_operations",
    "validate_filter",
    "validate_new_acl",
]

WILDCARD = "*"
"""The resource name or host of an ACL that matches any resource name or host."""
WILDCARD_PRINCIPAL = "User:*"
CLUSTER_NAME = "kafka-cluster"
"""The one name a CLUSTER resource has (Kafka's ``Resource.CLUSTER_NAME``)."""


CodedEnum = TypeVar("CodedEnum", ResourceType, PatternType, AclOperation, AclPermissionType)


def from_code(kind: type[CodedEnum], code: int) -> CodedEnum:
    """A wire code as its member, or UNKNOWN for a code this version does not know (as
    Kafka's ``fromCode``): validation, not decoding, says what is wrong with it."""
    try:
        return kind(code)
    except ValueError:
        return kind(0)


@dataclass(frozen=True, slots=True)
class AclError:
    """A per-binding or per-filter failure: Kafka's error code and message."""

    error_code: ErrorCode
    message: str


@dataclass(frozen=True, slots=True)
class ResourcePattern:
    resource_type: ResourceType
    name: str
    pattern_type: PatternType


@dataclass(frozen=True, slots=True)
class AccessControlEntry:
    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType


@dataclass(frozen=True, slots=True)
class AclBinding:
    pattern: ResourcePattern
    entry: AccessControlEntry


@dataclass(frozen=True, slots=True)
class ResourcePatternFilter:
    """``None`` as name matches any name."""

    resource_type: ResourceType
    name: str | None
    pattern_type: PatternType

    def is_unknown(self) -> bool:
        return self.resource_type is ResourceType.UNKNOWN or (
            self.pattern_type is PatternType.UNKNOWN
        )

    def matches(self, pattern: ResourcePattern) -> bool:
        """Kafka's ResourcePatternFilter.matches: MATCH also finds the wildcard and prefixes."""
        if self.resource_type is not ResourceType.ANY and (
            self.resource_type is not pattern.resource_type
        ):
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH) and (
            self.pattern_type is not pattern.pattern_type
        ):
            return False
        if self.name is None:
            return True
        if self.pattern_type in (PatternType.ANY, pattern.pattern_type):
            return self.name == pattern.name
        if pattern.pattern_type is PatternType.LITERAL:
            return self.name == pattern.name or pattern.name == WILDCARD
        if pattern.pattern_type is PatternType.PREFIXED:
            return self.name.startswith(pattern.name)
        return False


@dataclass(frozen=True, slots=True)
class AccessControlEntryFilter:
    """``None`` as principal or host matches any."""

    principal: str | None
    host: str | None
    operation: AclOperation
    permission_type: AclPermissionType

    def is_unknown(self) -> bool:
        return self.operation is AclOperation.UNKNOWN or (
            self.permission_type is AclPermissionType.UNKNOWN
        )

    def matches(self, entry: AccessControlEntry) -> bool:
        if self.principal is not None and self.principal != entry.principal:
            return False
        if self.host is not None and self.host != entry.host:
            return False
        if self.operation is not AclOperation.ANY and self.operation is not entry.operation:
            return False
        return self.permission_type is AclPermissionType.ANY or (
            self.permission_type is entry.permission_type
        )


@dataclass(frozen=True, slots=True)
class AclBindingFilter:
    pattern: ResourcePatternFilter
    entry: AccessControlEntryFilter

    def is_unknown(self) -> bool:
        return self.pattern.is_unknown() or self.entry.is_unknown()

    def matches(self, binding: AclBinding) -> bool:
        return self.pattern.matches(binding.pattern) and self.entry.matches(binding.entry)


ANY_ACL_FILTER = AclBindingFilter(
    ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY),
    AccessControlEntryFilter(None, None, AclOperation.ANY, AclPermissionType.ANY),
)
"""Matches every binding (Kafka's ``AclBindingFilter.ANY``)."""


def validate_new_acl(binding: AclBinding) -> AclError | None:
    """Kafka's checks before an ACL is created (AclControlManager.validateNewAcl, and the
    broker's CLUSTER-name and empty-name checks in AclApis), in Kafka's order."""
    pattern, entry = binding.pattern, binding.entry
    if pattern.resource_type is ResourceType.CLUSTER and pattern.name != CLUSTER_NAME:
        return _invalid(f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}")
    if pattern.name == "":
        return _invalid("Invalid empty resource name")
    if pattern.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        return _invalid(f"Invalid resourceType {pattern.resource_type.name}")
    if pattern.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        return _invalid(f"Invalid patternType {pattern.pattern_type.name}")
    if entry.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        return _invalid(f"Invalid operation {entry.operation.name}")
    if entry.permission_type not in (AclPermissionType.DENY, AclPermissionType.ALLOW):
        return _invalid(f"Invalid permissionType {entry.permission_type.name}")
    if ":" not in entry.principal:
        return _invalid(
            f"Could not parse principal from `{entry.principal}` (no colon is present "
            "separating the principal type from the principal name)"
        )
    return None


def validate_filter(acl_filter: AclBindingFilter) -> AclError | None:
    """Kafka's check on a DescribeAcls/DeleteAcls filter (AclControlManager.validateFilter)."""
    if acl_filter.pattern.is_unknown():
        return _invalid("Unknown patternFilter.")
    if acl_filter.entry.is_unknown():
        return _invalid("Unknown entryFilter.")
    return None


def _invalid(message: str) -> AclError:
    return AclError(ErrorCode.INVALID_REQUEST, message)


_SUPPORTED_OPERATIONS: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (
        AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DESCRIBE,
        AclOperation.DELETE, AclOperation.ALTER, AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS,
    ),
    ResourceType.GROUP: (
        AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE,
        AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS,
    ),
    ResourceType.CLUSTER: (
        AclOperation.CREATE, AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE, AclOperation.ALTER,
        AclOperation.DESCRIBE,
    ),
    ResourceType.TRANSACTIONAL_ID: (AclOperation.DESCRIBE, AclOperation.WRITE),
    ResourceType.DELEGATION_TOKEN: (AclOperation.DESCRIBE,),
    ResourceType.USER: (AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS),
}

_AUTHORIZATION_ERRORS: dict[ResourceType, ErrorCode] = {
    ResourceType.TOPIC: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    ResourceType.GROUP: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    ResourceType.CLUSTER: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    ResourceType.TRANSACTIONAL_ID: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    ResourceType.DELEGATION_TOKEN: ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
}


def supported_operations(resource_type: ResourceType) -> tuple[AclOperation, ...]:
    """The operations a resource type has (Kafka's ``AclEntry.supportedOperations``)."""
    try:
        return _SUPPORTED_OPERATIONS[resource_type]
    except KeyError:
        raise ValueError("Not a concrete resource type") from None


def authorization_error(resource_type: ResourceType) -> ErrorCode:
    """The error a denied action on this resource type answers (``AclEntry.authorizationError``)."""
    try:
        return _AUTHORIZATION_ERRORS[resource_type]
    except KeyError:
        raise ValueError("Authorization error type not known") from None
