"""SCRAM credentials, stored salted (RFC 5802: salt, StoredKey, ServerKey, iterations; never
the password), and the AlterUserScramCredentials/DescribeUserScramCredentials semantics of
Kafka's ScramControlManager and ScramImage.

Keys follow Kafka's ScramFormatter: the password is taken as its UTF-8 bytes (Kafka applies no
SASLprep), ``SaltedPassword = Hi(password, salt, i)`` is PBKDF2-HMAC, ``ClientKey =
HMAC(SaltedPassword, "Client Key")``, ``StoredKey = H(ClientKey)``, ``ServerKey =
HMAC(SaltedPassword, "Server Key")``.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from coordinator.security.sasl import RandomBytes
from storage.security_records import UserScramCredentialKey, UserScramCredentialValue
from wire.constants import ErrorCode, ScramMechanism

if TYPE_CHECKING:
    from storage.records import Record

__all__ = [
    "MAX_ITERATIONS",
    "MIN_ITERATIONS",
    "AlterResult",
    "DescribeResult",
    "ScramCredential",
    "ScramCredentialStore",
    "ScramDeletion",
    "ScramMechanism",
    "ScramUpsertion",
    "credential_from_password",
    "credential_from_salted_password",
    "credential_record",
    "credential_removal",
    "hash_name",
    "mechanism_by_name",
    "mechanism_name",
    "salted_password",
    "scram_mechanism",
    "user_records",
]

MIN_ITERATIONS = 4096
"""Kafka's minimum for both SCRAM mechanisms (ScramMechanism.minIterations)."""
MAX_ITERATIONS = 16384
"""Kafka's maximum for AlterUserScramCredentials (ScramControlManager.MAX_ITERATIONS)."""


_NAMES = {
    ScramMechanism.SCRAM_SHA_256: "SCRAM-SHA-256", ScramMechanism.SCRAM_SHA_512: "SCRAM-SHA-512"
}
_HASHES = {ScramMechanism.SCRAM_SHA_256: "sha256", ScramMechanism.SCRAM_SHA_512: "sha512"}


def scram_mechanism(code: int) -> ScramMechanism:
    """A wire code as its mechanism; UNKNOWN for a code Kafka does not know (``fromType``)."""
    try:
        return ScramMechanism(code)
    except ValueError:
        return ScramMechanism.UNKNOWN


def mechanism_by_name(name: str) -> ScramMechanism:
    """``SCRAM-SHA-256`` or ``SCRAM-SHA-512`` as its mechanism; UNKNOWN for any other name."""
    return next((m for m, n in _NAMES.items() if n == name), ScramMechanism.UNKNOWN)


def mechanism_name(mechanism: ScramMechanism) -> str:
    return _NAMES[mechanism]


def hash_name(mechanism: ScramMechanism) -> str:
    """The hashlib name of the mechanism's hash."""
    return _HASHES[mechanism]


ScramCredential = UserScramCredentialValue
"""A salted credential (salt, StoredKey, ServerKey, iterations): the log's record value, one
definition for the store and the log."""


def salted_password(
    mechanism: ScramMechanism, password: str, salt: bytes, iterations: int
) -> bytes:
    return hashlib.pbkdf2_hmac(hash_name(mechanism), password.encode("utf-8"), salt, iterations)


def credential_from_salted_password(
    mechanism: ScramMechanism, salted: bytes, salt: bytes, iterations: int
) -> ScramCredential:
    """The stored form of what AlterUserScramCredentials sends (salt + salted password)."""
    client_key = hmac.new(salted, b"Client Key", hash_name(mechanism)).digest()
    stored_key = hashlib.new(hash_name(mechanism), client_key).digest()
    server_key = hmac.new(salted, b"Server Key", hash_name(mechanism)).digest()
    return ScramCredential(salt, stored_key, server_key, iterations)


def credential_from_password(
    mechanism: ScramMechanism,
    password: str,
    random_bytes: RandomBytes,
    iterations: int = MIN_ITERATIONS,
) -> ScramCredential:
    """A new credential with a fresh salt (``--sasl-user``)."""
    salt = random_bytes(32)
    salted = salted_password(mechanism, password, salt, iterations)
    return credential_from_salted_password(mechanism, salted, salt, iterations)


def user_records(
    name: str, password: str, random_bytes: RandomBytes, iterations: int = MIN_ITERATIONS
) -> list[Record]:
    """Both SCRAM credentials of a configured user (``--sasl-user``), as records to persist."""
    return [
        credential_record(
            name, mechanism, credential_from_password(mechanism, password, random_bytes, iterations)
        )
        for mechanism in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512)
    ]


def _record(key: UserScramCredentialKey, value: ScramCredential | None) -> Record:
    # storage.records is imported here, not above: a SASL listener's options import this
    # module before the first answer, and the log's record types are not needed for that.
    from storage.records import Record

    return Record(key, value)


def credential_record(
    name: str, mechanism: ScramMechanism, credential: ScramCredential
) -> Record:
    """The record that sets one credential (the log's ``UserScramCredentialKey`` and its
    salted value: Kafka's ``UserScramCredentialRecord``)."""
    return _record(UserScramCredentialKey(name, mechanism.value), credential)


def credential_removal(name: str, mechanism: int) -> Record:
    """The record that removes one credential (a tombstone of its key: Kafka's
    ``RemoveUserScramCredentialRecord``)."""
    return _record(UserScramCredentialKey(name, mechanism), None)


@dataclass(frozen=True, slots=True)
class ScramDeletion:
    name: str
    mechanism: int


@dataclass(frozen=True, slots=True)
class ScramUpsertion:
    name: str
    mechanism: int
    iterations: int
    salt: bytes
    salted_password: bytes

    def __repr__(self) -> str:
        return f"ScramUpsertion(name={self.name!r}, mechanism={self.mechanism}, [hidden])"


@dataclass(frozen=True, slots=True)
class AlterResult:
    user: str
    error_code: ErrorCode = ErrorCode.NONE
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class DescribeResult:
    user: str
    error_code: ErrorCode = ErrorCode.NONE
    error_message: str | None = None
    credential_infos: tuple[tuple[ScramMechanism, int], ...] = ()
    """(mechanism, iterations) per credential the user has."""


_TWICE = "A user credential cannot be altered twice in the same request"


def _validate_name_and_mechanism(name: str, mechanism: ScramMechanism) -> AlterResult | None:
    if not name:
        return AlterResult(name, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
    if mechanism is ScramMechanism.UNKNOWN:
        return AlterResult(name, ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
    return None


class ScramCredentialStore:
    """(user, mechanism) -> credential; changed only by replaying its records."""

    __slots__ = ("_credentials",)

    def __init__(self) -> None:
        self._credentials: dict[tuple[str, ScramMechanism], ScramCredential] = {}

    def lookup(self, user: str, mechanism: ScramMechanism) -> ScramCredential | None:
        return self._credentials.get((user, mechanism))

    def alter(
        self, deletions: Sequence[ScramDeletion], upsertions: Sequence[ScramUpsertion]
    ) -> tuple[list[Record], list[AlterResult]]:
        """AlterUserScramCredentials: records to persist and one result per user (successful
        deletions, then successful upsertions, then errors, as ScramControlManager)."""
        errors: dict[str, AlterResult] = {}
        to_delete: dict[str, ScramDeletion] = {}
        to_upsert: dict[str, ScramUpsertion] = {}
        for deletion in deletions:
            if deletion.name in errors:
                continue
            if to_delete.pop(deletion.name, None) is not None:
                errors[deletion.name] = AlterResult(
                    deletion.name, ErrorCode.DUPLICATE_RESOURCE, _TWICE
                )
                continue
            error = self._validate_deletion(deletion)
            if error is not None:
                errors[deletion.name] = error
            else:
                to_delete[deletion.name] = deletion
        for upsertion in upsertions:
            if upsertion.name in errors:
                continue
            if (
                to_delete.pop(upsertion.name, None) is not None
                or to_upsert.pop(upsertion.name, None) is not None
            ):
                errors[upsertion.name] = AlterResult(
                    upsertion.name, ErrorCode.DUPLICATE_RESOURCE, _TWICE
                )
                continue
            error = _validate_upsertion(upsertion)
            if error is not None:
                errors[upsertion.name] = error
            else:
                to_upsert[upsertion.name] = upsertion
        records: list[Record] = []
        results: list[AlterResult] = []
        for deletion in to_delete.values():
            records.append(credential_removal(deletion.name, deletion.mechanism))
            results.append(AlterResult(deletion.name))
        for upsertion in to_upsert.values():
            mechanism = ScramMechanism(upsertion.mechanism)
            credential = credential_from_salted_password(
                mechanism, upsertion.salted_password, upsertion.salt, upsertion.iterations
            )
            records.append(credential_record(upsertion.name, mechanism, credential))
            results.append(AlterResult(upsertion.name))
        results.extend(errors.values())
        return records, results

    def _validate_deletion(self, deletion: ScramDeletion) -> AlterResult | None:
        mechanism = scram_mechanism(deletion.mechanism)
        error = _validate_name_and_mechanism(deletion.name, mechanism)
        if error is None and (deletion.name, mechanism) not in self._credentials:
            return AlterResult(
                deletion.name, ErrorCode.RESOURCE_NOT_FOUND,
                "Attempt to delete a user credential that does not exist",
            )
        return error

    def describe(self, users: Sequence[str] | None) -> list[DescribeResult]:
        """DescribeUserScramCredentials: every user with a credential when ``users`` is empty
        or None; a user named twice answers DUPLICATE_RESOURCE, an unknown one
        RESOURCE_NOT_FOUND (ScramImage.describe)."""
        asked: dict[str, bool] = {}  # user -> named twice
        if not users:
            for user, _ in self._credentials:
                asked[user] = False
        else:
            for user in users:
                asked[user] = user in asked
        results = []
        for user, twice in asked.items():
            if twice:
                results.append(DescribeResult(
                    user, ErrorCode.DUPLICATE_RESOURCE,
                    "Cannot describe SCRAM credentials for the same user twice in a single "
                    f"request: {user}",
                ))
                continue
            infos = tuple(
                (mechanism, credential.iterations)
                for mechanism in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512)
                if (credential := self._credentials.get((user, mechanism))) is not None
            )
            if infos:
                results.append(DescribeResult(user, credential_infos=infos))
            else:
                results.append(DescribeResult(
                    user, ErrorCode.RESOURCE_NOT_FOUND,
                    f"Attempt to describe a user credential that does not exist: {user}",
                ))
        return results

    def replay(self, record: Record) -> None:
        """Apply one credential record: set, or (no value) remove."""
        key, value = record.key, record.value
        if not isinstance(key, UserScramCredentialKey):
            raise TypeError(f"not a SCRAM credential record: {record!r}")
        at = (key.name, scram_mechanism(key.mechanism))
        if value is None:
            if self._credentials.pop(at, None) is None:
                raise ValueError(f"Unable to find credential to delete: {at}")
            return
        if not isinstance(value, UserScramCredentialValue):
            raise TypeError(f"not a SCRAM credential: {value!r}")
        self._credentials[at] = value


def _validate_upsertion(upsertion: ScramUpsertion) -> AlterResult | None:
    mechanism = scram_mechanism(upsertion.mechanism)
    error = _validate_name_and_mechanism(upsertion.name, mechanism)
    if error is not None:
        return error
    if upsertion.iterations < MIN_ITERATIONS:
        return AlterResult(upsertion.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations")
    if upsertion.iterations > MAX_ITERATIONS:
        return AlterResult(upsertion.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations")
    return None
