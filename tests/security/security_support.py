"""Shared helpers for the security core's tests: deterministic randomness and users."""

from __future__ import annotations

import hashlib
import itertools

from coordinator.security.mechanisms import SaslMechanisms
from coordinator.security.plain import PlainUsers
from coordinator.security.sasl import ALL_MECHANISMS
from coordinator.security.scram_credentials import ScramCredentialStore, user_records


class CountingRandom:
    """Deterministic bytes (a counter through SHA-256): tests need no real randomness."""

    def __init__(self) -> None:
        self._counter = itertools.count()

    def __call__(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            out += hashlib.sha256(str(next(self._counter)).encode()).digest()
        return out[:n]


def scram_store(users: dict[str, str], random_bytes: CountingRandom) -> ScramCredentialStore:
    """A store with both SCRAM credentials for each user, set by replaying records."""
    store = ScramCredentialStore()
    for user, password in users.items():
        for record in user_records(user, password, random_bytes):
            store.replay(record)
    return store


def mechanisms(
    users: dict[str, str] | None = None, *, max_reauth_ms: int | None = None
) -> SaslMechanisms:
    users = {"alice": "alice-secret", "bob": "bob-secret"} if users is None else users
    random_bytes = CountingRandom()
    plain = PlainUsers()
    for user, password in users.items():
        plain.add(user, password, random_bytes)
    return SaslMechanisms(
        ALL_MECHANISMS, plain, scram_store(users, random_bytes), random_bytes,
        max_reauth_ms=max_reauth_ms,
    )
