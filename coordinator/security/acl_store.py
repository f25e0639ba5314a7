"""The ACLs by id: CreateAcls/DeleteAcls/DescribeAcls semantics as Kafka's AclControlManager
and AclApis have them, answering records to persist; state changes only by ``replay``.

The records are the log's (``storage.security_records``): an ``AccessControlEntryKey`` (the
ACL's id) with its ``AccessControlEntryValue`` (the binding, Kafka's
``AccessControlEntryRecord``), or with no value, which removes it (Kafka's
``RemoveAccessControlEntryRecord``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from coordinator.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclError,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
    validate_filter,
    validate_new_acl,
)
from coordinator.security.authorizer import StandardAuthorizer
from storage.records import Record
from storage.security_records import AccessControlEntryKey, AccessControlEntryValue

__all__ = [
    "AclStore",
    "DeleteAclsResult",
    "binding_of",
    "group_by_resource",
    "record_of",
    "removal_of",
]


@dataclass(frozen=True, slots=True)
class DeleteAclsResult:
    """One filter's answer: an error, or the bindings it removed."""

    error: AclError | None
    deleted: tuple[AclBinding, ...] = ()


def record_of(acl_id: uuid.UUID, binding: AclBinding) -> Record:
    """The record that creates the ACL ``acl_id`` with ``binding``."""
    p, e = binding.pattern, binding.entry
    return Record(AccessControlEntryKey(acl_id), AccessControlEntryValue(
        p.resource_type.value, p.name, p.pattern_type.value, e.principal, e.host,
        e.operation.value, e.permission_type.value,
    ))


def removal_of(acl_id: uuid.UUID) -> Record:
    """The record that removes the ACL ``acl_id`` (a tombstone of its key)."""
    return Record(AccessControlEntryKey(acl_id), None)


def binding_of(record: Record) -> AclBinding:
    """The binding an ACL creation record carries."""
    value = record.value
    if not isinstance(value, AccessControlEntryValue):
        raise TypeError(f"not an ACL creation: {record!r}")
    return AclBinding(
        ResourcePattern(
            ResourceType(value.resource_type), value.resource_name,
            PatternType(value.pattern_type),
        ),
        AccessControlEntry(
            value.principal, value.host, AclOperation(value.operation),
            AclPermissionType(value.permission_type),
        ),
    )


def _acl_id(record: Record) -> uuid.UUID:
    key = record.key
    if not isinstance(key, AccessControlEntryKey):
        raise TypeError(f"not an ACL record: {record!r}")
    return key.id


def group_by_resource(
    bindings: Sequence[AclBinding],
) -> list[tuple[ResourcePattern, list[AccessControlEntry]]]:
    """Bindings grouped by resource pattern, first-seen order: DescribeAcls's answer shape."""
    grouped: dict[ResourcePattern, list[AccessControlEntry]] = {}
    for binding in bindings:
        grouped.setdefault(binding.pattern, []).append(binding.entry)
    return list(grouped.items())


class AclStore:
    """ACLs keyed by id, mirrored into the authorizer that decides with them."""

    __slots__ = ("_by_binding", "_by_id", "authorizer")

    def __init__(self, authorizer: StandardAuthorizer) -> None:
        self.authorizer = authorizer
        self._by_id: dict[uuid.UUID, AclBinding] = {}
        self._by_binding: dict[AclBinding, uuid.UUID] = {}

    def __len__(self) -> int:
        return len(self._by_id)

    def create_acls(
        self, bindings: Sequence[AclBinding], new_id: Callable[[], uuid.UUID]
    ) -> tuple[list[Record], list[AclError | None]]:
        """Records for the ACLs that are new, and per binding None (created, or already
        there) or the validation error. A binding given twice makes one record."""
        records: list[Record] = []
        results: list[AclError | None] = []
        seen: set[AclBinding] = set()
        for binding in bindings:
            error = validate_new_acl(binding)
            if error is None and binding not in seen:
                seen.add(binding)
                if binding not in self._by_binding:
                    records.append(record_of(new_id(), binding))
            results.append(error)
        return records, results

    def delete_acls(
        self, filters: Sequence[AclBindingFilter]
    ) -> tuple[list[Record], list[DeleteAclsResult]]:
        """Per filter the bindings it removes (or its validation error); an ACL matched by
        two filters is reported by both and removed by one record."""
        removed: dict[uuid.UUID, Record] = {}
        results = []
        for acl_filter in filters:
            error = validate_filter(acl_filter)
            if error is not None:
                results.append(DeleteAclsResult(error))
                continue
            deleted = []
            for acl_id, binding in self._by_id.items():
                if acl_filter.matches(binding):
                    deleted.append(binding)
                    removed.setdefault(acl_id, removal_of(acl_id))
            results.append(DeleteAclsResult(None, tuple(deleted)))
        return list(removed.values()), results

    def binding(self, acl_id: uuid.UUID) -> AclBinding | None:
        """The ACL with this id, if any."""
        return self._by_id.get(acl_id)

    def has(self, record: Record) -> bool:
        """Whether replaying ``record`` (a creation) would add nothing new (its id or
        binding is known)."""
        return _acl_id(record) in self._by_id or binding_of(record) in self._by_binding

    def describe_acls(self, acl_filter: AclBindingFilter) -> AclError | list[AclBinding]:
        error = validate_filter(acl_filter)
        if error is not None:
            return error
        return [b for b in self._by_id.values() if acl_filter.matches(b)]

    def replay(self, record: Record) -> None:
        """Apply one ACL record: a creation, or (no value) a removal."""
        acl_id = _acl_id(record)
        if record.value is None:
            binding = self._by_id.pop(acl_id, None)
            if binding is None:
                raise ValueError(f"ID {acl_id} not found in aclsById.")
            del self._by_binding[binding]
            self.authorizer.remove(binding)
            return
        binding = binding_of(record)
        if acl_id in self._by_id:
            raise ValueError(f"An ACL with ID {acl_id} already exists.")
        if binding in self._by_binding:
            raise ValueError(f"Unable to add the ACL with ID {acl_id} to aclsByResource")
        self._by_id[acl_id] = binding
        self._by_binding[binding] = acl_id
        self.authorizer.add(binding)
