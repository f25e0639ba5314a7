"""The security records (issue 29): ACLs and SCRAM credentials, kept in the coordinator's log.

They carry the fields of Kafka's metadata records ``AccessControlEntryRecord`` /
``RemoveAccessControlEntryRecord`` and ``UserScramCredentialRecord`` /
``RemoveUserScramCredentialRecord`` (``metadata/src/main/resources/common/metadata/``).
Kafka keeps them in its ``__cluster_metadata`` log; kcoord's log is keyed and compacted, so
each is a key and a value, and the Remove records are tombstones of the key:

- ``AccessControlEntryKey`` (105): one ACL, by its id; the value is the binding.
- ``UserScramCredentialKey`` (106): one user's credential for one mechanism; the value is the
  salted form (salt, StoredKey, ServerKey, iterations), never the password. Its ``repr``
  hides the keys, as Kafka's ``ScramCredentialValue`` does, and the log dump leaves them out.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

__all__ = [
    "SECURITY_KEY_TYPES",
    "AccessControlEntryKey",
    "AccessControlEntryValue",
    "SecurityKey",
    "SecurityValue",
    "UserScramCredentialKey",
    "UserScramCredentialValue",
]


@dataclass(frozen=True, slots=True)
class AccessControlEntryKey:
    """Key of one ACL: its id (Kafka's AccessControlEntryRecord.Id)."""

    id: uuid.UUID


@dataclass(frozen=True, slots=True)
class AccessControlEntryValue:
    """The ACL's binding, with Kafka's codes (wire.constants)."""

    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int


@dataclass(frozen=True, slots=True)
class UserScramCredentialKey:
    """Key of one credential: the user and the mechanism (1 SCRAM-SHA-256, 2 SCRAM-SHA-512)."""

    name: str
    mechanism: int


@dataclass(frozen=True, slots=True)
class UserScramCredentialValue:
    """The salted credential (RFC 5802); never the password."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def __repr__(self) -> str:
        return "UserScramCredentialValue([hidden])"


SECURITY_KEY_TYPES: tuple[type, ...] = (AccessControlEntryKey, UserScramCredentialKey)
SecurityKey = AccessControlEntryKey | UserScramCredentialKey
SecurityValue = AccessControlEntryValue | UserScramCredentialValue
