"""The records that change security state: SCRAM credentials and ACLs.

They carry the fields of Kafka's metadata records of the same names
(``UserScramCredentialRecord``, ``RemoveUserScramCredentialRecord``,
``AccessControlEntryRecord``, ``RemoveAccessControlEntryRecord``). The stores here emit them
and change only by replaying them, so a log that holds them rebuilds the same state.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

__all__ = [
    "AccessControlEntryRecord",
    "RemoveAccessControlEntryRecord",
    "RemoveUserScramCredentialRecord",
    "SecurityRecord",
    "UserScramCredentialRecord",
]


@dataclass(frozen=True, slots=True)
class UserScramCredentialRecord:
    """A user's salted credential for one mechanism (created or replaced); never a password."""

    name: str
    mechanism: int  # Kafka's ScramMechanism type: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def __repr__(self) -> str:  # keys stay out of logs, as Kafka's ScramCredentialValue
        return (
            f"UserScramCredentialRecord(name={self.name!r}, mechanism={self.mechanism}, "
            "salt=[hidden], stored_key=[hidden], server_key=[hidden], iterations=[hidden])"
        )


@dataclass(frozen=True, slots=True)
class RemoveUserScramCredentialRecord:
    name: str
    mechanism: int


@dataclass(frozen=True, slots=True)
class AccessControlEntryRecord:
    id: uuid.UUID
    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int


@dataclass(frozen=True, slots=True)
class RemoveAccessControlEntryRecord:
    id: uuid.UUID


SecurityRecord = (
    UserScramCredentialRecord
    | RemoveUserScramCredentialRecord
    | AccessControlEntryRecord
    | RemoveAccessControlEntryRecord
)
