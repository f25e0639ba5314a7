"""The connection's SASL state (handshake, exchange, KIP-368 re-authentication) and PLAIN:
Kafka's errors and messages, a bounded cost for failed-login floods, and no exception for
any input."""

from __future__ import annotations

import base64
import gc
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from security_support import mechanisms

from coordinator.security.mechanisms import SaslMechanisms, parse_enabled_mechanisms
from coordinator.security.plain import PlainServer, PlainUsers
from coordinator.security.sasl import (
    ALL_MECHANISMS,
    Complete,
    Failure,
    SessionLifetime,
    session_lifetime,
)
from wire.constants import ErrorCode

GENERIC_PLAIN = (
    "Authentication failed during authentication due to invalid credentials with SASL "
    "mechanism PLAIN"
)


SHARED = mechanisms()
"""For the fuzz tests: building users costs PBKDF2 rounds, so they share one set."""


def plain_login(user: str, password: str, authzid: str = "") -> bytes:
    return f"{authzid}\0{user}\0{password}".encode()


# ------------------------------------------------------------------ handshake


def test_unsupported_mechanism_answers_33_with_the_enabled_list() -> None:
    authenticator = mechanisms().authenticator()
    answer = authenticator.handshake("GSSAPI")
    assert answer.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM == 33
    assert answer.mechanisms == ALL_MECHANISMS
    assert answer.close


def test_narrowed_mechanisms_refuse_the_others() -> None:
    sasl = mechanisms()
    sasl.enabled = parse_enabled_mechanisms("SCRAM-SHA-512, PLAIN")
    authenticator = sasl.authenticator()
    answer = authenticator.handshake("SCRAM-SHA-256")
    assert answer.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM
    assert answer.mechanisms == ("SCRAM-SHA-512", "PLAIN")
    ok = authenticator.handshake("PLAIN")
    assert ok.error_code == ErrorCode.NONE and not ok.close


def test_enabled_mechanisms_default_to_all_four_and_refuse_unknown_names() -> None:
    assert parse_enabled_mechanisms(None) == ALL_MECHANISMS
    with pytest.raises(ValueError, match="GSSAPI"):
        parse_enabled_mechanisms("PLAIN,GSSAPI")


def test_second_handshake_during_an_exchange_is_an_illegal_state() -> None:
    authenticator = mechanisms().authenticator()
    authenticator.handshake("SCRAM-SHA-256")
    authenticator.authenticate(b"n,,n=alice,r=abc", 0)
    answer = authenticator.handshake("PLAIN")
    assert answer.error_code == ErrorCode.ILLEGAL_SASL_STATE and answer.close
    fresh = mechanisms().authenticator()
    fresh.handshake("PLAIN")
    assert fresh.handshake("PLAIN").error_code == ErrorCode.ILLEGAL_SASL_STATE


def test_authenticate_before_handshake_is_an_illegal_state() -> None:
    answer = mechanisms().authenticator().authenticate(plain_login("alice", "alice-secret"), 0)
    assert answer.error_code == ErrorCode.ILLEGAL_SASL_STATE and answer.close


# ------------------------------------------------------------------ PLAIN


def test_plain_success() -> None:
    authenticator = mechanisms().authenticator()
    authenticator.handshake("PLAIN")
    answer = authenticator.authenticate(plain_login("alice", "alice-secret"), 0)
    assert answer.error_code == ErrorCode.NONE
    assert answer.principal == "User:alice" and answer.auth_bytes == b""


def test_plain_wrong_password_answers_kafka_message() -> None:
    authenticator = mechanisms().authenticator()
    authenticator.handshake("PLAIN")
    answer = authenticator.authenticate(plain_login("alice", "wrong"), 0)
    assert answer.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED == 58
    assert answer.error_message == "Authentication failed: Invalid username or password"
    assert answer.close


def test_plain_unknown_user_answers_the_same_message() -> None:
    server = PlainServer(mechanisms().plain_users)
    assert server.evaluate(plain_login("mallory", "x"), 0) == Failure(
        "Authentication failed: Invalid username or password"
    )


def test_plain_authzid_must_equal_username() -> None:
    users = mechanisms().plain_users
    assert PlainServer(users).evaluate(plain_login("alice", "alice-secret", "alice"), 0) == (
        Complete(b"", "alice")
    )
    assert PlainServer(users).evaluate(plain_login("alice", "alice-secret", "bob"), 0) == Failure(
        "Authentication failed: Client requested an authorization id that is different from "
        "username"
    )


@pytest.mark.parametrize(
    "message", [b"", b"alice", b"\0alice", b"\0\0secret", b"\0alice\0", b"\xff\0\xfe"]
)
def test_plain_missing_fields_fail_generically(message: bytes) -> None:
    authenticator = mechanisms().authenticator()
    authenticator.handshake("PLAIN")
    answer = authenticator.authenticate(message, 0)
    assert answer.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert answer.error_message == GENERIC_PLAIN


def test_plain_ignores_what_follows_a_third_nul() -> None:
    # Kafka's PlainSaslServer.split keeps three tokens and drops the rest.
    server = PlainServer(mechanisms().plain_users)
    assert server.evaluate(b"\0alice\0alice-secret\0trailing", 0) == Complete(b"", "alice")


def test_plain_users_keep_no_password() -> None:
    users = PlainUsers()
    users.add("alice", "hunter2-secret", lambda n: b"\x07" * n)
    assert "hunter2" not in repr(users._users)
    assert all(b"hunter2" not in c.digest for c in users._users.values())
    assert users.verify("alice", "hunter2-secret") and not users.verify("alice", "hunter2")


# ------------------------------------------------------------------ KIP-368


def test_session_lifetime_as_kafka_computes_it() -> None:
    assert session_lifetime(1000, None, None) == SessionLifetime(0, None)
    assert session_lifetime(1000, None, 0) == SessionLifetime(0, None)
    assert session_lifetime(1000, None, 60_000) == SessionLifetime(60_000, 61_000)
    assert session_lifetime(1000, 31_000, None) == SessionLifetime(30_000, 31_000)
    assert session_lifetime(1000, 31_000, 60_000) == SessionLifetime(30_000, 31_000)
    assert session_lifetime(1000, 500_000, 60_000) == SessionLifetime(60_000, 61_000)
    assert session_lifetime(1000, 500, 60_000) == SessionLifetime(0, 1000)  # already expired


def test_authenticate_answer_carries_session_lifetime() -> None:
    authenticator = mechanisms(max_reauth_ms=30_000).authenticator()
    authenticator.handshake("PLAIN")
    answer = authenticator.authenticate(plain_login("alice", "alice-secret"), 5_000)
    assert answer.session_lifetime_ms == 30_000 and answer.expires_at_ms == 35_000


def test_reauthentication_keeps_the_principal() -> None:
    authenticator = mechanisms(max_reauth_ms=30_000).authenticator()
    authenticator.handshake("PLAIN")
    authenticator.authenticate(plain_login("alice", "alice-secret"), 0)
    assert authenticator.reauthenticating
    authenticator.handshake("PLAIN")
    again = authenticator.authenticate(plain_login("alice", "alice-secret"), 20_000)
    assert again.principal == "User:alice" and again.expires_at_ms == 50_000
    authenticator.handshake("PLAIN")
    other = authenticator.authenticate(plain_login("bob", "bob-secret"), 40_000)
    assert other.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert other.error_message == (
        "Cannot change principals during re-authentication from User.alice: User.bob"
    )


def test_reauthentication_with_another_mechanism_fails() -> None:
    authenticator = mechanisms().authenticator()
    authenticator.handshake("PLAIN")
    authenticator.authenticate(plain_login("alice", "alice-secret"), 0)
    assert authenticator.handshake("SCRAM-SHA-256").error_code == ErrorCode.NONE
    answer = authenticator.authenticate(b"n,,n=alice,r=abc", 0)
    assert answer.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert answer.error_message == (
        "SASL mechanism 'SCRAM-SHA-256' requested by client is not supported for "
        "re-authentication of mechanism 'PLAIN'"
    )


def test_generic_message_says_re_authentication_when_reauthenticating() -> None:
    authenticator = mechanisms().authenticator()
    authenticator.handshake("PLAIN")
    authenticator.authenticate(plain_login("alice", "alice-secret"), 0)
    authenticator.handshake("PLAIN")
    answer = authenticator.authenticate(b"nonsense", 0)
    assert answer.error_message == (
        "Authentication failed during re-authentication due to invalid credentials with SASL "
        "mechanism PLAIN"
    )


# ------------------------------------------------------------------ floods and fuzz


def failed_scram_login(sasl: SaslMechanisms, index: int) -> None:
    """A whole SCRAM exchange with a wrong proof (no client-side PBKDF2: the proof is junk)."""
    authenticator = sasl.authenticator()
    authenticator.handshake("SCRAM-SHA-256")
    first = authenticator.authenticate(f"n,,n=alice,r=client{index}".encode(), index)
    nonce = first.auth_bytes.split(b",")[0][2:]
    proof = base64.b64encode(index.to_bytes(32, "big"))
    answer = authenticator.authenticate(b"c=biws,r=" + nonce + b",p=" + proof, index)
    assert answer.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED


def test_failed_login_flood_costs_bounded_memory() -> None:
    # Each failed exchange leaves nothing in the shared mechanisms: memory after 3,000
    # failures is what it was after 100 (allocations counted by tracemalloc, not timed).
    sasl = mechanisms()
    for i in range(100):
        failed_scram_login(sasl, i)
    gc.collect()
    tracemalloc.start()
    try:
        baseline = tracemalloc.take_snapshot()
        for i in range(3_000):
            failed_scram_login(sasl, i)
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    ours = [tracemalloc.Filter(True, "*coordinator/security/*")]
    growth = sum(
        stat.size_diff for stat in after.filter_traces(ours).compare_to(
            baseline.filter_traces(ours), "filename"
        )
    )
    assert growth < 16_384, growth


@settings(max_examples=300, deadline=None)
@given(
    mechanism=st.sampled_from(ALL_MECHANISMS),
    messages=st.lists(st.binary(max_size=200), min_size=1, max_size=4),
)
def test_no_input_raises(mechanism: str, messages: list[bytes]) -> None:
    authenticator = SHARED.authenticator()
    authenticator.handshake(mechanism)
    for message in messages:
        answer = authenticator.authenticate(message, 0)
        assert answer.error_code in (
            ErrorCode.NONE, ErrorCode.SASL_AUTHENTICATION_FAILED, ErrorCode.ILLEGAL_SASL_STATE
        )
        if answer.close:
            break


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60))
def test_no_scram_first_message_shape_raises(user: str, nonce: str) -> None:
    authenticator = SHARED.authenticator()
    authenticator.handshake("SCRAM-SHA-512")
    answer = authenticator.authenticate(f"n,,n={user},r={nonce}".encode(), 0)
    assert answer.error_code in (ErrorCode.NONE, ErrorCode.SASL_AUTHENTICATION_FAILED)
