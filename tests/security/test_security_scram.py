"""SCRAM-SHA-256/512 servers: RFC 7677's vector, full exchanges against scramp's client, and
every failure answered with Kafka's error, never an exception."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest
import scramp
from security_support import CountingRandom, mechanisms, scram_store

from coordinator.security.sasl import Challenge, Complete, Failure, SaslAuthenticator
from coordinator.security.scram import ScramServer, server_nonce
from coordinator.security.scram_credentials import (
    ScramCredentialStore,
    ScramMechanism,
    credential_from_salted_password,
    credential_record,
    salted_password,
)
from wire.constants import ErrorCode

SHA256 = ScramMechanism.SCRAM_SHA_256
SHA512 = ScramMechanism.SCRAM_SHA_512
GENERIC = (
    "Authentication failed during authentication due to invalid credentials with SASL "
    "mechanism {}"
)

# RFC 7677 section 3: user "user", password "pencil".
RFC7677_CLIENT_FIRST = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
RFC7677_SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
RFC7677_SERVER_FIRST = (
    b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
)
RFC7677_CLIENT_FINAL = (
    b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
    b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
)
RFC7677_SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def rfc7677_store() -> ScramCredentialStore:
    salt = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    store = ScramCredentialStore()
    credential = credential_from_salted_password(
        SHA256, salted_password(SHA256, "pencil", salt, 4096), salt, 4096
    )
    store.replay(credential_record("user", SHA256, credential))
    return store


def rfc7677_server() -> ScramServer:
    return ScramServer(SHA256, rfc7677_store(), lambda: RFC7677_SERVER_NONCE)


def test_rfc7677_scram_sha_256_test_vector() -> None:
    server = rfc7677_server()
    assert server.evaluate(RFC7677_CLIENT_FIRST, 0) == Challenge(RFC7677_SERVER_FIRST)
    assert server.evaluate(RFC7677_CLIENT_FINAL, 0) == Complete(RFC7677_SERVER_FINAL, "user")


def test_rfc7677_vector_with_a_wrong_proof_fails() -> None:
    server = rfc7677_server()
    server.evaluate(RFC7677_CLIENT_FIRST, 0)
    bad = RFC7677_CLIENT_FINAL.replace(b"p=dHzb", b"p=dHzc")
    assert server.evaluate(bad, 0) == Failure(None)


def test_rfc5802_message_structure_is_accepted() -> None:
    # RFC 5802 section 5's exchange (SHA-1, user "user"): the same gs2 header, attribute order
    # and nonce rules; kcoord's server answers its client-first with r=<client+server>,s,i.
    random_bytes = CountingRandom()
    store = scram_store({"user": "pencil"}, random_bytes)
    server = ScramServer(SHA256, store, lambda: "3rfcNHYJY1ZVvWVs7j")
    step = server.evaluate(b"n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL", 0)
    assert isinstance(step, Challenge)
    r, s, i = step.auth_bytes.decode().split(",")
    assert r == "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j"
    assert s.startswith("s=") and base64.b64decode(s[2:]) == store.lookup("user", SHA256).salt
    assert i == "i=4096"


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_full_exchange_against_scramp_client(mechanism: str) -> None:
    authenticator = mechanisms().authenticator()
    assert authenticator.handshake(mechanism).error_code == ErrorCode.NONE
    client = scramp.ScramClient([mechanism], "alice", "alice-secret")
    first = authenticator.authenticate(client.get_client_first().encode(), 1000)
    assert first.error_code == ErrorCode.NONE and first.principal is None
    client.set_server_first(first.auth_bytes.decode())
    final = authenticator.authenticate(client.get_client_final().encode(), 1000)
    assert final.error_code == ErrorCode.NONE
    assert final.principal == "User:alice"
    client.set_server_final(final.auth_bytes.decode())  # raises if the signature is wrong
    assert final.session_lifetime_ms == 0 and final.expires_at_ms is None


def test_scramp_server_accepts_kcoord_credentials() -> None:
    # The stored form is the standard one: scramp's own server authenticates scramp's client
    # with kcoord's salt, StoredKey, ServerKey and iterations.
    store = scram_store({"alice": "alice-secret"}, CountingRandom())
    credential = store.lookup("alice", SHA256)
    assert credential is not None
    server = scramp.ScramMechanism("SCRAM-SHA-256").make_server(
        lambda user: (credential.salt, credential.stored_key, credential.server_key,
                      credential.iterations)
    )
    client = scramp.ScramClient(["SCRAM-SHA-256"], "alice", "alice-secret")
    server.set_client_first(client.get_client_first())
    client.set_server_first(server.get_server_first())
    server.set_client_final(client.get_client_final())
    client.set_server_final(server.get_server_final())


def test_credentials_match_scramp_derivation() -> None:
    salt = bytes(range(16))
    ours = credential_from_salted_password(
        SHA512, salted_password(SHA512, "s3cret", salt, 4096), salt, 4096
    )
    theirs = scramp.ScramMechanism("SCRAM-SHA-512").make_auth_info("s3cret", 4096, salt)
    assert (ours.salt, ours.stored_key, ours.server_key, ours.iterations) == theirs


def scramp_exchange(
    authenticator: SaslAuthenticator, user: str, password: str, mechanism: str = "SCRAM-SHA-256"
) -> tuple[bytes, bytes]:
    client = scramp.ScramClient([mechanism], user, password)
    authenticator.handshake(mechanism)
    first = authenticator.authenticate(client.get_client_first().encode(), 0)
    assert first.error_code == ErrorCode.NONE, first
    client.set_server_first(first.auth_bytes.decode())
    return first.auth_bytes, client.get_client_final().encode()


def test_wrong_password_answers_kafka_generic_failure() -> None:
    authenticator = mechanisms().authenticator()
    _, final = scramp_exchange(authenticator, "alice", "not-her-password")
    answer = authenticator.authenticate(final, 0)
    assert answer.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert answer.error_message == GENERIC.format("SCRAM-SHA-256")
    assert answer.close and answer.principal is None


def test_unknown_user_fails_at_the_first_message_with_the_same_text() -> None:
    authenticator = mechanisms().authenticator()
    authenticator.handshake("SCRAM-SHA-512")
    answer = authenticator.authenticate(b"n,,n=mallory,r=abcdef", 0)
    assert answer.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert answer.error_message == GENERIC.format("SCRAM-SHA-512")


def test_bad_nonce_in_client_final_fails() -> None:
    authenticator = mechanisms().authenticator()
    server_first, final = scramp_exchange(authenticator, "alice", "alice-secret")
    nonce = server_first.decode().split(",")[0][2:]
    tampered = final.replace(nonce.encode(), nonce.encode()[:-1] + b"X")
    answer = authenticator.authenticate(tampered, 0)
    assert answer.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert answer.error_message == GENERIC.format("SCRAM-SHA-256")


def test_replayed_client_final_fails_on_a_new_exchange() -> None:
    sasl = mechanisms()
    first_connection = sasl.authenticator()
    _, final = scramp_exchange(first_connection, "alice", "alice-secret")
    assert first_connection.authenticate(final, 0).principal == "User:alice"
    # Same client nonce again: the server's nonce is fresh, so the recorded proof is useless.
    client = scramp.ScramClient(["SCRAM-SHA-256"], "alice", "x", c_nonce=str(client_nonce(final)))
    second = sasl.authenticator()
    second.handshake("SCRAM-SHA-256")
    assert second.authenticate(client.get_client_first().encode(), 0).error_code == ErrorCode.NONE
    answer = second.authenticate(final, 0)
    assert answer.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED


def client_nonce(final: bytes) -> str:
    nonce = final.decode().split(",")[1][2:]
    return nonce[:24]  # scramp's client nonce is token_hex(): 64 hex chars; any prefix works


def test_replay_after_completion_is_an_illegal_state() -> None:
    server = rfc7677_server()
    server.evaluate(RFC7677_CLIENT_FIRST, 0)
    server.evaluate(RFC7677_CLIENT_FINAL, 0)
    step = server.evaluate(RFC7677_CLIENT_FINAL, 0)
    assert step == Failure(
        "Unexpected challenge in Sasl server state COMPLETE", illegal_state=True
    )


@pytest.mark.parametrize(
    "client_first",
    [
        b"",
        b"garbage",
        b"y,,n=user,r=abc",  # the client thinks channel binding is possible: not Kafka's "n"
        b"p=tls-unique,,n=user,r=abc",
        b"n,,n=user",
        b"n,,r=abc,n=user",
        b"n,,n=us,er,r=abc",
        b"n,,n=user,r=",
        b"n,,n=user,r=a\x00b",
        b"\xff\xfe\xfd",
        b"n,,n=user,r=abc,=novalue",
        b"n,,n=u=ser,r=abc",
    ],
)
def test_malformed_client_first_fails_generically(client_first: bytes) -> None:
    server = rfc7677_server()
    assert server.evaluate(client_first, 0) == Failure(None)


@pytest.mark.parametrize(
    "client_final",
    [
        b"",
        b"c=biws",
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=AAAA",  # short proof
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=!!!!",
        b"c=b,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzb",
        b"\x80" * 40,
    ],
)
def test_malformed_client_final_fails_generically(client_final: bytes) -> None:
    server = rfc7677_server()
    server.evaluate(RFC7677_CLIENT_FIRST, 0)
    assert server.evaluate(client_final, 0) == Failure(None)


def test_authzid_equal_to_user_is_accepted_and_different_one_refused() -> None:
    server = rfc7677_server()
    # Kafka rebuilds the AuthMessage without the gs2 header, so the RFC proof still holds.
    assert isinstance(server.evaluate(b"n,a=user,n=user,r=rOprNGfwEbeRWgbNEkqO", 0), Challenge)
    assert server.evaluate(RFC7677_CLIENT_FINAL, 0) == Complete(RFC7677_SERVER_FINAL, "user")
    other = rfc7677_server()
    assert other.evaluate(b"n,a=admin,n=user,r=rOprNGfwEbeRWgbNEkqO", 0) == Failure(
        "Authentication failed: Client requested an authorization id that is different "
        "from username"
    )


def proof_for(
    password: str, salt: bytes, iterations: int, auth_message: bytes
) -> bytes:
    """The client's proof (RFC 5802 section 3), computed here independently of the server."""
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", "sha256").digest()
    stored_key = hashlib.sha256(client_key).digest()
    signature = hmac.new(stored_key, auth_message, "sha256").digest()
    return bytes(a ^ b for a, b in zip(client_key, signature, strict=True))


def test_unknown_extension_is_ignored_but_kept_in_the_auth_message() -> None:
    # As Kafka: ScramExtensions keeps every key=value after the nonce; only tokenauth is
    # acted on, and the AuthMessage is rebuilt with the extensions the client sent.
    server = rfc7677_server()
    first = server.evaluate(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO,color=blue", 0)
    assert first == Challenge(RFC7677_SERVER_FIRST)
    nonce = "rOprNGfwEbeRWgbNEkqO" + RFC7677_SERVER_NONCE
    auth_message = (
        f"n=user,r=rOprNGfwEbeRWgbNEkqO,color=blue,{RFC7677_SERVER_FIRST.decode()},"
        f"c=biws,r={nonce}"
    ).encode()
    proof = proof_for("pencil", base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ=="), 4096, auth_message)
    final = f"c=biws,r={nonce},p={base64.b64encode(proof).decode()}".encode()
    step = server.evaluate(final, 0)
    assert isinstance(step, Complete) and step.authorization_id == "user"


def test_tokenauth_extension_fails_as_kcoord_has_no_delegation_tokens() -> None:
    server = rfc7677_server()
    assert server.evaluate(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO,tokenauth=true", 0) == Failure(None)
    ignored = rfc7677_server()  # tokenauth=false is not a token login
    assert isinstance(
        ignored.evaluate(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO,tokenauth=false", 0), Challenge
    )


def test_escaped_username_is_decoded() -> None:
    random_bytes = CountingRandom()
    store = scram_store({"a,b=c": "pw"}, random_bytes)
    server = ScramServer(SHA256, store, lambda: "srv")
    assert isinstance(server.evaluate(b"n,,n=a=2Cb=3Dc,r=abc", 0), Challenge)


def test_credential_below_minimum_iterations_fails() -> None:
    store = ScramCredentialStore()
    salt = b"s" * 16
    credential = credential_from_salted_password(
        SHA256, salted_password(SHA256, "pw", salt, 1024), salt, 1024
    )
    store.replay(credential_record("weak", SHA256, credential))
    server = ScramServer(SHA256, store, lambda: "srv")
    assert server.evaluate(b"n,,n=weak,r=abc", 0) == Failure(None)


def test_server_nonce_is_kafka_base36_of_130_bits() -> None:
    nonce = server_nonce(lambda n: b"\xff" * n)
    assert int(nonce, 36) == (1 << 130) - 1
    assert nonce.isalnum() and nonce.islower()


def test_failed_exchange_keeps_no_state() -> None:
    server = rfc7677_server()
    server.evaluate(RFC7677_CLIENT_FIRST, 0)
    server.evaluate(b"c=biws,r=wrong,p=AAAA", 0)
    assert server._credential is None
    assert server._client_first_bare == server._server_first == server._nonce == ""
