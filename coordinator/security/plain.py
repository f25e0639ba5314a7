"""SASL/PLAIN (RFC 4616) as Kafka's PlainSaslServer: ``[authzid] NUL authcid NUL passwd``.

Users come from configuration (``--sasl-user``, the JAAS ``user_NAME="..."`` options); each
password is kept only as a salted digest, so it never sits in memory, dumps or logs.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from coordinator.security.sasl import Complete, Failure, RandomBytes, SaslStep

__all__ = ["PLAIN", "PlainCredential", "PlainServer", "PlainUsers"]

PLAIN = "PLAIN"


@dataclass(frozen=True, slots=True)
class PlainCredential:
    salt: bytes
    digest: bytes

    def __repr__(self) -> str:
        return "PlainCredential([hidden])"


def _digest(salt: bytes, password: str) -> bytes:
    return hmac.new(salt, password.encode("utf-8"), hashlib.sha256).digest()


class PlainUsers:
    """PLAIN's user table: name -> salted digest of the password."""

    __slots__ = ("_users",)

    def __init__(self) -> None:
        self._users: dict[str, PlainCredential] = {}

    def add(self, user: str, password: str, random_bytes: RandomBytes) -> None:
        salt = random_bytes(16)
        self._users[user] = PlainCredential(salt, _digest(salt, password))

    def __contains__(self, user: object) -> bool:
        return user in self._users

    def verify(self, user: str, password: str) -> bool:
        credential = self._users.get(user)
        if credential is None:
            return False
        return hmac.compare_digest(credential.digest, _digest(credential.salt, password))


def _split3(message: str) -> tuple[str, str, str]:
    # Kafka's PlainSaslServer.split: at most three NUL-separated tokens; anything after a
    # third NUL is dropped, and missing tokens are empty.
    tokens = ["", "", ""]
    start = 0
    for i in range(3):
        end = message.find("\0", start)
        if end == -1:
            tokens[i] = message[start:]
            break
        tokens[i] = message[start:end]
        start = end + 1
    return tokens[0], tokens[1], tokens[2]


class PlainServer:
    """One PLAIN exchange: a single client message, then complete or failed."""

    __slots__ = ("_done", "_users")

    def __init__(self, users: PlainUsers) -> None:
        self._users = users
        self._done = False

    @property
    def mechanism(self) -> str:
        return PLAIN

    def evaluate(self, response: bytes, now_ms: int) -> SaslStep:
        if self._done:
            return Failure("Unexpected challenge in Sasl server state COMPLETE", illegal_state=True)
        self._done = True
        authzid, username, password = _split3(response.decode("utf-8", errors="replace"))
        if not username or not password:
            # "username/password not specified": a SaslException, so the generic text.
            return Failure(None)
        if not self._users.verify(username, password):
            return Failure("Authentication failed: Invalid username or password")
        if authzid and authzid != username:
            return Failure(
                "Authentication failed: Client requested an authorization id that is "
                "different from username"
            )
        return Complete(b"", username)
