"""SASL on one connection, sans-I/O: SaslHandshake picks a mechanism, SaslAuthenticate feeds
the client's bytes to that mechanism's server, answers are bytes or Kafka's error.

Mechanism servers (``plain``, ``scram``, ``oauthbearer``) answer each client message with a
step: a ``Challenge`` (more to come), ``Complete``, or a ``Failure``. A failure either carries
a message meant for the client (Kafka's SaslAuthenticationException) or none, in which case
the client reads Kafka's generic text, which never says whether the user exists
(SaslServerAuthenticator). After a failure or completion a mechanism server holds no
credential and no message: a flood of failed logins leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from wire.constants import ErrorCode

__all__ = [
    "ALL_MECHANISMS",
    "SASLNAME_PATTERN",
    "AuthenticateAnswer",
    "Challenge",
    "Complete",
    "Failure",
    "HandshakeAnswer",
    "RandomBytes",
    "SaslAuthenticator",
    "SaslServer",
    "SaslStep",
    "SessionLifetime",
    "session_lifetime",
]

ALL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
"""kcoord's mechanisms, the default ``sasl.enabled.mechanisms``."""

SASLNAME_PATTERN = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
"""RFC 5802's ``saslname`` (ASCII less ',' and '=', which come escaped as =2C and =3D), the
authzid and user name grammar Kafka's SCRAM and OAUTHBEARER servers share."""

RandomBytes = Callable[[int], bytes]
"""Where salts and nonces come from: the runtime passes ``secrets.token_bytes``."""


@dataclass(frozen=True, slots=True)
class Challenge:
    auth_bytes: bytes


@dataclass(frozen=True, slots=True)
class Complete:
    auth_bytes: bytes
    authorization_id: str
    credential_expiry_ms: int | None = None
    """When the credential itself expires (an OAUTHBEARER token's ``exp``), for KIP-368."""


@dataclass(frozen=True, slots=True)
class Failure:
    client_message: str | None
    """Shown to the client; None for Kafka's generic "invalid credentials" text."""
    illegal_state: bool = False


SaslStep = Challenge | Complete | Failure


class SaslServer(Protocol):
    """One mechanism's server side for one authentication exchange."""

    @property
    def mechanism(self) -> str: ...

    def evaluate(self, response: bytes, now_ms: int) -> SaslStep: ...


@dataclass(frozen=True, slots=True)
class SessionLifetime:
    lifetime_ms: int
    """``session_lifetime_ms`` in the SaslAuthenticate answer (0: no re-authentication)."""
    expires_at_ms: int | None
    """When the runtime closes a connection that has not re-authenticated; None: never."""


def session_lifetime(
    now_ms: int, credential_expiry_ms: int | None, max_reauth_ms: int | None
) -> SessionLifetime:
    """KIP-368's session lifetime as SaslServerAuthenticator computes it: the shorter of
    ``connections.max.reauth.ms`` (when positive) and the time left on the credential."""
    max_set = max_reauth_ms is not None and max_reauth_ms > 0
    if credential_expiry_ms is None and not max_set:
        return SessionLifetime(0, None)
    candidates = []
    if credential_expiry_ms is not None:
        candidates.append(credential_expiry_ms - now_ms)
    if max_set and max_reauth_ms is not None:
        candidates.append(max_reauth_ms)
    lifetime = max(0, min(candidates))
    return SessionLifetime(lifetime, now_ms + lifetime)


@dataclass(frozen=True, slots=True)
class HandshakeAnswer:
    error_code: ErrorCode
    mechanisms: tuple[str, ...]
    close: bool
    """True when the runtime sends this answer and then closes the connection."""


@dataclass(frozen=True, slots=True)
class AuthenticateAnswer:
    error_code: ErrorCode
    error_message: str | None
    auth_bytes: bytes
    session_lifetime_ms: int = 0
    principal: str | None = None
    """Set once authentication completed: ``User:`` + the authorization id."""
    expires_at_ms: int | None = None
    close: bool = False


@dataclass(frozen=True, slots=True)
class _Session:
    mechanism: str
    principal: str


class SaslAuthenticator:
    """One connection's SASL state: handshake, then the exchange, then (KIP-368) maybe again.

    ``servers`` builds a mechanism's server by name; ``max_reauth_ms`` is
    ``connections.max.reauth.ms`` for the listener (None or 0: never expire sessions), and
    ``max_reauth_ms_by_mechanism`` a mechanism's own (Kafka's
    ``listener.name.<name>.<mechanism>.connections.max.reauth.ms``), which wins.
    """

    __slots__ = (
        "_bad_mechanism_message", "_enabled", "_max_reauth_ms", "_max_reauth_ms_by_mechanism",
        "_previous", "_server", "_servers",
    )

    def __init__(
        self,
        enabled_mechanisms: Sequence[str],
        servers: Callable[[str], SaslServer],
        max_reauth_ms: int | None = None,
        max_reauth_ms_by_mechanism: Mapping[str, int] | None = None,
    ) -> None:
        self._enabled = tuple(enabled_mechanisms)
        self._servers = servers
        self._max_reauth_ms = max_reauth_ms
        self._max_reauth_ms_by_mechanism = max_reauth_ms_by_mechanism or {}
        self._server: SaslServer | None = None
        self._previous: _Session | None = None
        self._bad_mechanism_message: str | None = None

    @property
    def reauthenticating(self) -> bool:
        return self._previous is not None

    @property
    def exchanging(self) -> bool:
        """Whether a handshake chose the mechanism and the exchange is under way (Kafka's
        AUTHENTICATE state: only SaslAuthenticate may come)."""
        return self._server is not None or self._bad_mechanism_message is not None

    def handshake(self, mechanism: str) -> HandshakeAnswer:
        """SaslHandshake: the mechanism must be enabled (UNSUPPORTED_SASL_MECHANISM with the
        enabled list, then close); on re-authentication it must be the one used before. A
        second handshake in the middle of an exchange is ILLEGAL_SASL_STATE, as in Kafka,
        where only SaslAuthenticate may follow a handshake until the exchange ends."""
        if self._server is not None or self._bad_mechanism_message is not None:
            self._server = None
            self._bad_mechanism_message = None
            return HandshakeAnswer(ErrorCode.ILLEGAL_SASL_STATE, self._enabled, True)
        if mechanism not in self._enabled:
            self._server = None
            return HandshakeAnswer(ErrorCode.UNSUPPORTED_SASL_MECHANISM, self._enabled, True)
        self._bad_mechanism_message = None
        if self._previous is not None and mechanism != self._previous.mechanism:
            self._server = None
            self._bad_mechanism_message = (
                f"SASL mechanism '{mechanism}' requested by client is not supported for "
                f"re-authentication of mechanism '{self._previous.mechanism}'"
            )
        else:
            self._server = self._servers(mechanism)
        return HandshakeAnswer(ErrorCode.NONE, self._enabled, False)

    def authenticate(self, auth_bytes: bytes, now_ms: int) -> AuthenticateAnswer:
        """SaslAuthenticate: one client message in, the answer out. Any error answer means
        the runtime sends it and closes the connection."""
        if self._bad_mechanism_message is not None:
            return self._fail(self._bad_mechanism_message)
        server = self._server
        if server is None:
            return AuthenticateAnswer(
                ErrorCode.ILLEGAL_SASL_STATE,
                "Unexpected SaslAuthenticate request before a successful SaslHandshake",
                b"", close=True,
            )
        step = server.evaluate(auth_bytes, now_ms)
        if isinstance(step, Challenge):
            return AuthenticateAnswer(ErrorCode.NONE, None, step.auth_bytes)
        self._server = None
        if isinstance(step, Failure):
            if step.illegal_state:
                return AuthenticateAnswer(
                    ErrorCode.ILLEGAL_SASL_STATE, step.client_message, b"", close=True
                )
            return self._fail(step.client_message or self._generic_message(server.mechanism))
        principal = f"User:{step.authorization_id}"
        previous = self._previous
        if previous is not None and previous.principal != principal:
            old_type, _, old_name = previous.principal.partition(":")
            new_type, _, new_name = principal.partition(":")
            return self._fail(
                "Cannot change principals during re-authentication from "
                f"{old_type}.{old_name}: {new_type}.{new_name}"
            )
        lifetime = session_lifetime(now_ms, step.credential_expiry_ms,
                                    self._max_reauth_ms_by_mechanism.get(
                                        server.mechanism, self._max_reauth_ms))
        self._previous = _Session(server.mechanism, principal)
        return AuthenticateAnswer(
            ErrorCode.NONE, None, step.auth_bytes, lifetime.lifetime_ms, principal,
            lifetime.expires_at_ms,
        )

    def _generic_message(self, mechanism: str) -> str:
        what = "re-authentication" if self._previous is not None else "authentication"
        return (
            f"Authentication failed during {what} due to invalid credentials with SASL "
            f"mechanism {mechanism}"
        )

    def _fail(self, message: str) -> AuthenticateAnswer:
        self._server = None
        self._bad_mechanism_message = None
        return AuthenticateAnswer(ErrorCode.SASL_AUTHENTICATION_FAILED, message, b"", close=True)
