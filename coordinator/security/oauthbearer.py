"""SASL/OAUTHBEARER (RFC 7628) with Kafka's default, unsecured validator.

The client's first message is ``n,[a=authzid],^Aauth=Bearer TOKEN[^Akey=value...]^A^A``
(OAuthBearerClientInitialResponse). The token is an unsecured JWS: three dot-separated
base64url parts, header ``alg: none``, an empty signature (OAuthBearerUnsecuredJws). The
principal is the ``sub`` claim (or the configured claim); ``exp`` is required and checked
against now, ``iat`` must not be in the future, an optional required scope is checked
(OAuthBearerUnsecuredValidatorCallbackHandler). A rejected token is answered, as Kafka does,
with the JSON error as a challenge (``{"status":"invalid_token"}``); the client acknowledges
with a single ``0x01`` and the exchange then fails with that JSON as the message.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from coordinator.security.sasl import SASLNAME_PATTERN, Challenge, Complete, Failure, SaslStep

__all__ = [
    "OAUTHBEARER",
    "InvalidToken",
    "OAuthBearerServer",
    "UnsecuredJws",
    "UnsecuredValidatorOptions",
    "validate_unsecured_token",
]

OAUTHBEARER = "OAUTHBEARER"

_KEY = "[A-Za-z]+"
_VALUE = r"[\x21-\x7e \t\r\n]+"
_CLIENT_INITIAL_RESPONSE = re.compile(
    rf"n,(?:a=(?P<authzid>{SASLNAME_PATTERN}))?,\x01(?P<kvpairs>(?:{_KEY}={_VALUE}\x01)*)\x01"
)
_AUTH = re.compile(r"(?P<scheme>\w+) +(?P<token>[-_.a-zA-Z0-9]+)", re.ASCII)


@dataclass(frozen=True, slots=True)
class UnsecuredValidatorOptions:
    """The ``unsecuredValidator*`` JAAS options of Kafka's unsecured validator."""

    principal_claim_name: str = "sub"
    scope_claim_name: str = "scope"
    required_scope: tuple[str, ...] = ()
    allowable_clock_skew_ms: int = 0

    @classmethod
    def from_jaas_options(cls, options: Mapping[str, str]) -> UnsecuredValidatorOptions:
        """From the OAuthBearerLoginModule's options (blank means the default); raises
        ValueError for a clock skew that is not a non-negative integer."""
        principal = options.get("unsecuredValidatorPrincipalClaimName", "").strip()
        scope = options.get("unsecuredValidatorScopeClaimName", "").strip()
        required = options.get("unsecuredValidatorRequiredScope", "").split()
        skew_text = options.get("unsecuredValidatorAllowableClockSkewMs", "").strip()
        try:
            skew = int(skew_text) if skew_text else 0
        except ValueError:
            raise ValueError(f'For input string: "{skew_text}"') from None
        if skew < 0:
            raise ValueError(f"Allowable clock skew millis must not be negative: {skew_text}")
        return cls(principal or "sub", scope or "scope", tuple(required), skew)


class InvalidToken(Exception):
    """Why a token was refused (for logs; the client sees only the JSON status)."""

    def __init__(self, reason: str, scope: str | None = None) -> None:
        super().__init__(reason)
        self.scope = scope


@dataclass(frozen=True, slots=True)
class UnsecuredJws:
    principal_name: str
    lifetime_ms: int
    start_time_ms: int | None
    scope: frozenset[str]
    claims: dict[str, Any] = field(repr=False)


def _convert(value: Any) -> Any:
    # Kafka's OAuthBearerUnsecuredJws.convert over Jackson nodes: arrays become lists of text,
    # numbers stay numbers, everything else becomes its text (null -> "null", objects -> "").
    if isinstance(value, list):
        return [_text(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return _text(value)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float, str)):
        return str(value)
    return ""


def _to_map(part: str) -> dict[str, Any]:
    try:
        decoded = base64.b64decode(
            part.replace("-", "+").replace("_", "/") + "=" * (-len(part) % 4), validate=True
        )
    except (binascii.Error, ValueError):
        raise InvalidToken("malformed Base64 URL encoded value") from None
    try:
        parsed = json.loads(decoded)
    except (ValueError, RecursionError):
        raise InvalidToken("malformed JSON") from None
    if not isinstance(parsed, dict):
        raise InvalidToken("malformed JSON")
    return {key: _convert(value) for key, value in parsed.items()}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _claim(claims: dict[str, Any], name: str, kind: str) -> Any:
    value = claims.get(name)
    if value is None:
        return None
    ok = {"String": isinstance(value, str), "Number": _is_number(value),
          "List": isinstance(value, list)}[kind]
    if not ok:
        raise InvalidToken(f"The '{name}' claim was not of type {kind}")
    return value


def parse_unsecured_jws(token: str, options: UnsecuredValidatorOptions) -> UnsecuredJws:
    """Kafka's OAuthBearerUnsecuredJws constructor checks, in its order."""
    if ".." in token:
        raise InvalidToken("Malformed compact serialization contains '..'")
    parts = token.split(".")
    if len(parts) != 3:
        raise InvalidToken(
            "Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded "
            "values"
        )
    header = _to_map(parts[0])
    claims = _to_map(parts[1])
    # Kafka throws a NullPointerException for a header without "alg" (and drops the
    # connection); refusing the token is the answer a client can act on.
    if header.get("alg") != "none":
        raise InvalidToken("Unsecured JWS must have 'none' for an algorithm")
    if parts[2]:
        raise InvalidToken("Unsecured JWS must not contain a digital signature")
    scope_value = claims.get(options.scope_claim_name)
    if isinstance(scope_value, str):
        scope = frozenset({scope_value.strip()}) if scope_value.strip() else frozenset()
    else:
        scope_list = _claim(claims, options.scope_claim_name, "List") or []
        scope = frozenset(s.strip() for s in scope_list if s.strip())
    exp = _claim(claims, "exp", "Number")
    if exp is None:
        raise InvalidToken("No expiration time in JWT")
    principal = _claim(claims, options.principal_claim_name, "String")
    if principal is None or not principal.strip():
        raise InvalidToken(f"No principal name in JWT claim: {options.principal_claim_name}")
    iat = _claim(claims, "iat", "Number")
    return UnsecuredJws(
        principal, round(exp * 1000), None if iat is None else round(iat * 1000), scope, claims
    )


def validate_unsecured_token(
    token: str, now_ms: int, options: UnsecuredValidatorOptions
) -> UnsecuredJws:
    """The unsecured validator's checks; raises InvalidToken."""
    jws = parse_unsecured_jws(token, options)
    skew = options.allowable_clock_skew_ms
    iat = _claim(jws.claims, "iat", "Number")
    if iat is not None and 1000 * iat > now_ms + skew:
        raise InvalidToken("The Issued At value was after the indicated time plus allowable skew")
    exp = jws.claims["exp"]
    if now_ms - skew >= 1000 * exp:
        raise InvalidToken(
            "The indicated time minus allowable clock skew was on or after the Expiration Time"
        )
    if iat is not None and exp <= iat:
        raise InvalidToken("The Expiration Time time was not after the Issued At time")
    for required in options.required_scope:
        if required not in jws.scope:
            raise InvalidToken(
                f"The provided scope was missing a required scope ({required})",
                scope="[" + ", ".join(options.required_scope) + "]",
            )
    return jws


def _json_error(error: InvalidToken) -> str:
    # OAuthBearerSaslServer.jsonErrorResponse, byte for byte.
    if error.scope is None:
        return '{"status":"invalid_token"}'
    return f'{{"status":"insufficient_scope", "scope":"{error.scope}"}}'


class OAuthBearerServer:
    """One OAUTHBEARER exchange."""

    __slots__ = ("_done", "_error_message", "_options")

    def __init__(self, options: UnsecuredValidatorOptions | None = None) -> None:
        self._options = options or UnsecuredValidatorOptions()
        self._error_message: str | None = None
        self._done = False

    @property
    def mechanism(self) -> str:
        return OAUTHBEARER

    def evaluate(self, response: bytes, now_ms: int) -> SaslStep:
        if self._done:
            return Failure("Authentication exchange has already completed", illegal_state=True)
        if response == b"\x01" and self._error_message is not None:
            self._done = True
            return Failure(self._error_message)
        self._error_message = None
        match = _CLIENT_INITIAL_RESPONSE.fullmatch(response.decode("utf-8", errors="replace"))
        if match is None:
            self._done = True
            return Failure(None)  # "Invalid OAUTHBEARER client first message"
        properties: dict[str, str] = {}
        for pair in match["kvpairs"].split("\x01"):
            if pair:
                key, _, value = pair.partition("=")
                properties[key] = value
        auth = _AUTH.fullmatch(properties.get("auth", ""))
        if auth is None or auth["scheme"].lower() != "bearer":
            self._done = True
            return Failure(None)  # 'auth' missing, malformed, or not a Bearer scheme
        try:
            token = validate_unsecured_token(auth["token"], now_ms, self._options)
        except InvalidToken as error:
            self._error_message = _json_error(error)
            return Challenge(self._error_message.encode())
        self._done = True
        authzid = match["authzid"] or ""
        if authzid and authzid != token.principal_name:
            return Failure(
                f"Authentication failed: Client requested an authorization id ({authzid}) that "
                f"is different from the token's principal name ({token.principal_name})"
            )
        return Complete(b"", token.principal_name, token.lifetime_ms)
