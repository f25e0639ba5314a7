"""OAUTHBEARER with Kafka's unsecured validator: the token librdkafka and Java make, the JSON
error flow, expiry against now, the principal claim, scopes and the KIP-368 lifetime."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from security_support import mechanisms

from coordinator.security.jaas import server_jaas_entry
from coordinator.security.oauthbearer import (
    InvalidToken,
    OAuthBearerServer,
    UnsecuredValidatorOptions,
    validate_unsecured_token,
)
from coordinator.security.sasl import Challenge, Complete, Failure
from wire.constants import ErrorCode

NOW_MS = 1_700_000_000_000
INVALID_TOKEN = b'{"status":"invalid_token"}'


def b64url(data: dict[str, Any] | bytes) -> str:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def token(claims: dict[str, Any], header: dict[str, Any] | None = None, signature: str = "") -> str:
    return f"{b64url(header or {'alg': 'none'})}.{b64url(claims)}.{signature}"


def claims(**extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"sub": "alice", "iat": NOW_MS / 1000 - 10, "exp": NOW_MS / 1000 + 3600}
    base.update(extra)
    return {k: v for k, v in base.items() if v is not None}


def initial_response(value: str, authzid: str = "", extensions: str = "") -> bytes:
    a = f"a={authzid}" if authzid else ""
    ext = f"\x01{extensions}" if extensions else ""
    return f"n,{a},\x01auth=Bearer {value}{ext}\x01\x01".encode()


def test_valid_token_authenticates_its_subject() -> None:
    step = OAuthBearerServer().evaluate(initial_response(token(claims())), NOW_MS)
    assert step == Complete(b"", "alice", NOW_MS + 3_600_000)


def test_full_exchange_through_the_authenticator_sets_session_lifetime() -> None:
    authenticator = mechanisms(max_reauth_ms=600_000).authenticator()
    assert authenticator.handshake("OAUTHBEARER").error_code == ErrorCode.NONE
    answer = authenticator.authenticate(initial_response(token(claims())), NOW_MS)
    assert answer.principal == "User:alice"
    assert answer.session_lifetime_ms == 600_000  # shorter than the token's hour
    short = mechanisms(max_reauth_ms=None).authenticator()
    short.handshake("OAUTHBEARER")
    assert short.authenticate(initial_response(token(claims())), NOW_MS).session_lifetime_ms == (
        3_600_000
    )


def test_expired_token_gets_the_json_error_then_fails_after_the_client_ack() -> None:
    authenticator = mechanisms().authenticator()
    authenticator.handshake("OAUTHBEARER")
    expired = token(claims(iat=NOW_MS / 1000 - 100, exp=NOW_MS / 1000))
    challenge = authenticator.authenticate(initial_response(expired), NOW_MS)
    assert challenge.error_code == ErrorCode.NONE and challenge.auth_bytes == INVALID_TOKEN
    assert not challenge.close and challenge.principal is None
    final = authenticator.authenticate(b"\x01", NOW_MS)
    assert final.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert final.error_message == INVALID_TOKEN.decode() and final.close


def test_clock_skew_allows_a_just_expired_token() -> None:
    expired = token(claims(exp=NOW_MS / 1000 - 1))
    options = UnsecuredValidatorOptions(allowable_clock_skew_ms=5_000)
    assert validate_unsecured_token(expired, NOW_MS, options).principal_name == "alice"
    with pytest.raises(InvalidToken):
        validate_unsecured_token(expired, NOW_MS, UnsecuredValidatorOptions())


@pytest.mark.parametrize(
    "bad",
    [
        token(claims(), header={"alg": "HS256"}),
        token(claims(), header={"typ": "JWT"}),
        token(claims(), signature="c2ln"),
        token(claims(sub=None)),
        token(claims(sub="   ")),
        token(claims(sub=42)),
        token(claims(exp=None)),
        token(claims(exp="tomorrow")),
        token(claims(iat=NOW_MS / 1000 + 60)),  # issued in the future
        token(claims(iat=NOW_MS / 1000 + 7200, exp=NOW_MS / 1000 + 3600)),
        "onlyonepart",
        "a.b.c.d",
        "a..c",
        f"{b64url({'alg': 'none'})}.{b64url(b'not json')}.",
        f"{b64url({'alg': 'none'})}.{b64url(b'[1, 2]')}.",
        f"{b64url({'alg': 'none'})}.a.",  # bad base64url length
    ],
)
def test_invalid_tokens_answer_invalid_token(bad: str) -> None:
    server = OAuthBearerServer()
    assert server.evaluate(initial_response(bad), NOW_MS) == Challenge(INVALID_TOKEN)
    assert server.evaluate(b"\x01", NOW_MS) == Failure(INVALID_TOKEN.decode())


def test_configured_principal_claim() -> None:
    options = UnsecuredValidatorOptions(principal_claim_name="client_id")
    value = token(claims(client_id="svc-orders"))
    step = OAuthBearerServer(options).evaluate(initial_response(value), NOW_MS)
    assert isinstance(step, Complete) and step.authorization_id == "svc-orders"


def test_required_scope_answers_insufficient_scope() -> None:
    options = UnsecuredValidatorOptions(required_scope=("LOGIN_TO_KAFKA", "ADMIN"))
    value = token(claims(scope=["LOGIN_TO_KAFKA"]))
    step = OAuthBearerServer(options).evaluate(initial_response(value), NOW_MS)
    assert step == Challenge(b'{"status":"insufficient_scope", "scope":"[LOGIN_TO_KAFKA, ADMIN]"}')
    enough = token(claims(scope=["ADMIN", "LOGIN_TO_KAFKA"]))
    assert isinstance(OAuthBearerServer(options).evaluate(initial_response(enough), NOW_MS),
                      Complete)


def test_authzid_must_match_the_token_principal() -> None:
    step = OAuthBearerServer().evaluate(initial_response(token(claims()), authzid="bob"), NOW_MS)
    assert step == Failure(
        "Authentication failed: Client requested an authorization id (bob) that is different "
        "from the token's principal name (alice)"
    )
    ok = OAuthBearerServer().evaluate(initial_response(token(claims()), authzid="alice"), NOW_MS)
    assert isinstance(ok, Complete)


def test_extensions_are_accepted_by_the_unsecured_validator() -> None:
    message = initial_response(token(claims()), extensions="traceId=abc 123\x01logicalCluster=x")
    assert isinstance(OAuthBearerServer().evaluate(message, NOW_MS), Complete)


@pytest.mark.parametrize(
    "message",
    [
        b"",
        b"n,,auth=Bearer abc",  # the old, pre-RFC 7628 framing
        b"n,,\x01auth=Bearer abc\x01",  # no terminating ^A^A
        b"n,,\x01\x01",  # no auth
        b"n,,\x01auth=Basic YWxpY2U=\x01\x01",
        b"n,,\x01auth=Bearer\x01\x01",
        b"n,,\x01auth=Bearer a b\x01\x01",
        b"\xff\x01\x01",
    ],
)
def test_malformed_initial_response_fails_generically(message: bytes) -> None:
    authenticator = mechanisms().authenticator()
    authenticator.handshake("OAUTHBEARER")
    answer = authenticator.authenticate(message, NOW_MS)
    assert answer.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert answer.error_message == (
        "Authentication failed during authentication due to invalid credentials with SASL "
        "mechanism OAUTHBEARER"
    )


def test_a_new_token_after_an_error_is_evaluated_afresh() -> None:
    # Kafka clears the remembered error on anything but the 0x01 acknowledgement.
    server = OAuthBearerServer()
    expired = token(claims(exp=NOW_MS / 1000 - 1, iat=NOW_MS / 1000 - 10))
    assert server.evaluate(initial_response(expired), NOW_MS) == Challenge(INVALID_TOKEN)
    assert isinstance(server.evaluate(initial_response(token(claims())), NOW_MS), Complete)


def test_validator_options_from_jaas() -> None:
    entry = server_jaas_entry(
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
        'unsecuredLoginStringClaim_sub="admin" unsecuredValidatorPrincipalClaimName=" azp " '
        'unsecuredValidatorRequiredScope="LOGIN_TO_KAFKA  ADMIN" '
        'unsecuredValidatorAllowableClockSkewMs="3000";'
    )
    options = UnsecuredValidatorOptions.from_jaas_options(entry.options)
    assert options == UnsecuredValidatorOptions("azp", "scope", ("LOGIN_TO_KAFKA", "ADMIN"), 3000)
    assert UnsecuredValidatorOptions.from_jaas_options({}) == UnsecuredValidatorOptions()
    with pytest.raises(ValueError, match="must not be negative: -1"):
        UnsecuredValidatorOptions.from_jaas_options(
            {"unsecuredValidatorAllowableClockSkewMs": "-1"}
        )
