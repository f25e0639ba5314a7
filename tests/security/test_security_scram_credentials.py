"""AlterUserScramCredentials / DescribeUserScramCredentials semantics (Kafka's
ScramControlManager and ScramImage), records, replay, and no password anywhere."""

from __future__ import annotations

import hashlib

import scramp
from security_support import CountingRandom

from coordinator.security.sasl import Complete
from coordinator.security.scram import ScramServer
from coordinator.security.scram_credentials import (
    AlterResult,
    DescribeResult,
    ScramCredentialStore,
    ScramDeletion,
    ScramMechanism,
    ScramUpsertion,
    credential_from_password,
    salted_password,
    scram_mechanism,
    user_records,
)
from storage.records import Record
from storage.security_records import UserScramCredentialKey, UserScramCredentialValue
from wire.constants import ErrorCode

SHA256, SHA512 = ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512
SALT = b"0123456789abcdef"
TWICE = "A user credential cannot be altered twice in the same request"


def upsertion(name: str, mechanism: int = 1, iterations: int = 4096, password: str = "pw") -> (
    ScramUpsertion
):
    mech = scram_mechanism(mechanism)
    salted = (
        salted_password(mech, password, SALT, max(iterations, 1))
        if mech is not ScramMechanism.UNKNOWN else b"x" * 32
    )
    return ScramUpsertion(name, mechanism, iterations, SALT, salted)


def applied(store: ScramCredentialStore, deletions: list[ScramDeletion],
            upsertions: list[ScramUpsertion]) -> list[AlterResult]:
    records, results = store.alter(deletions, upsertions)
    for record in records:
        store.replay(record)
    return results


def test_upsertion_creates_a_credential_a_client_can_log_in_with() -> None:
    store = ScramCredentialStore()
    results = applied(store, [], [upsertion("alice", 1, 8192, "alice-secret")])
    assert results == [AlterResult("alice")]
    credential = store.lookup("alice", SHA256)
    assert credential is not None and credential.iterations == 8192 and credential.salt == SALT
    client = scramp.ScramClient(["SCRAM-SHA-256"], "alice", "alice-secret")
    server = ScramServer(SHA256, store, lambda: "srvnonce")
    client.set_server_first(server.evaluate(client.get_client_first().encode(), 0)
                            .auth_bytes.decode())  # type: ignore[union-attr]
    step = server.evaluate(client.get_client_final().encode(), 0)
    assert isinstance(step, Complete)
    client.set_server_final(step.auth_bytes.decode())


def test_records_carry_keys_never_the_password() -> None:
    store = ScramCredentialStore()
    records, _ = store.alter([], [upsertion("alice", 2, 4096, "hunter2-secret")])
    (record,) = records
    key, value = record.key, record.value
    assert isinstance(key, UserScramCredentialKey)
    assert isinstance(value, UserScramCredentialValue)
    assert key.name == "alice" and key.mechanism == 2 and value.iterations == 4096
    assert b"hunter2" not in value.salt + value.stored_key + value.server_key
    assert "hidden" in repr(record) and value.stored_key.hex() not in repr(record)
    salted = hashlib.pbkdf2_hmac("sha512", b"hunter2-secret", SALT, 4096)
    assert value.server_key != salted


def test_iterations_out_of_range_are_unacceptable() -> None:
    store = ScramCredentialStore()
    results = applied(store, [], [upsertion("low", iterations=4095),
                                  upsertion("high", iterations=16385),
                                  upsertion("max", iterations=16384)])
    assert AlterResult("low", ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations") in results
    assert AlterResult("high", ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations") in results
    assert AlterResult("max") in results
    assert store.lookup("low", SHA256) is None and store.lookup("max", SHA256) is not None


def test_unknown_mechanism_and_empty_name() -> None:
    store = ScramCredentialStore()
    results = applied(store, [ScramDeletion("x", 7)], [upsertion("", 1), upsertion("y", 0)])
    assert results == [
        AlterResult("x", ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
        AlterResult("", ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
        AlterResult("y", ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
    ]


def test_deleting_a_missing_credential_is_resource_not_found() -> None:
    store = ScramCredentialStore()
    assert applied(store, [ScramDeletion("ghost", 1)], []) == [AlterResult(
        "ghost", ErrorCode.RESOURCE_NOT_FOUND,
        "Attempt to delete a user credential that does not exist",
    )]


def test_a_user_altered_twice_is_duplicate_resource() -> None:
    store = ScramCredentialStore()
    applied(store, [], [upsertion("a", 1), upsertion("b", 1)])
    results = applied(
        store,
        [ScramDeletion("a", 1), ScramDeletion("a", 2), ScramDeletion("b", 1)],
        [upsertion("b", 2), upsertion("c", 1), upsertion("c", 2)],
    )
    assert sorted(results, key=lambda r: r.user) == [
        AlterResult("a", ErrorCode.DUPLICATE_RESOURCE, TWICE),
        AlterResult("b", ErrorCode.DUPLICATE_RESOURCE, TWICE),
        AlterResult("c", ErrorCode.DUPLICATE_RESOURCE, TWICE),
    ]
    # Nothing was changed for any of them.
    assert store.lookup("a", SHA256) is not None and store.lookup("b", SHA256) is not None
    assert store.lookup("c", SHA256) is None


def test_deletion_removes_one_mechanism_only() -> None:
    store = ScramCredentialStore()
    applied(store, [], [upsertion("a", 1)])
    applied(store, [], [upsertion("a", 2)])
    records, results = store.alter([ScramDeletion("a", 1)], [])
    assert records == [Record(UserScramCredentialKey("a", 1), None)]
    assert results == [AlterResult("a")]
    store.replay(records[0])
    assert store.lookup("a", SHA256) is None and store.lookup("a", SHA512) is not None


def test_results_order_deletions_then_upsertions_then_errors() -> None:
    store = ScramCredentialStore()
    applied(store, [], [upsertion("old", 1)])
    results = applied(store, [ScramDeletion("old", 1), ScramDeletion("none", 1)],
                      [upsertion("new", 2)])
    assert [r.user for r in results] == ["old", "new", "none"]


def test_describe_all_named_unknown_and_twice() -> None:
    store = ScramCredentialStore()
    applied(store, [], [upsertion("alice", 1, 4096), upsertion("bob", 2, 8192)])
    applied(store, [], [upsertion("alice", 2, 5000)])
    assert store.describe(None) == store.describe([]) == [
        DescribeResult("alice", credential_infos=((SHA256, 4096), (SHA512, 5000))),
        DescribeResult("bob", credential_infos=((SHA512, 8192),)),
    ]
    assert store.describe(["bob", "carol", "bob"]) == [
        DescribeResult("bob", ErrorCode.DUPLICATE_RESOURCE,
                       "Cannot describe SCRAM credentials for the same user twice in a single "
                       "request: bob"),
        DescribeResult("carol", ErrorCode.RESOURCE_NOT_FOUND,
                       "Attempt to describe a user credential that does not exist: carol"),
    ]


def test_replay_of_the_records_rebuilds_the_same_store() -> None:
    store = ScramCredentialStore()
    log: list[Record] = []
    for deletions, upsertions in [
        ([], [upsertion("a", 1), upsertion("b", 2)]),
        ([ScramDeletion("a", 1)], [upsertion("c", 1)]),
    ]:
        records, _ = store.alter(deletions, upsertions)
        for record in records:
            log.append(record)
            store.replay(record)
    rebuilt = ScramCredentialStore()
    for record in log:
        rebuilt.replay(record)
    assert rebuilt.describe(None) == store.describe(None)
    assert rebuilt.lookup("b", SHA512) == store.lookup("b", SHA512)


def test_configured_users_get_fresh_salts() -> None:
    random_bytes = CountingRandom()
    first = credential_from_password(SHA256, "same", random_bytes)
    second = credential_from_password(SHA256, "same", random_bytes)
    assert first.salt != second.salt and first.stored_key != second.stored_key
    assert len(first.salt) == 32 and first.iterations == 4096
    assert "same" not in repr(first)


def test_user_records_cover_both_mechanisms() -> None:
    store = ScramCredentialStore()
    for record in user_records("carol", "carol-secret", CountingRandom()):
        store.replay(record)
    assert store.describe(["carol"]) == [
        DescribeResult("carol", credential_infos=((SHA256, 4096), (SHA512, 4096)))
    ]


def test_password_is_hashed_as_utf8_without_saslprep_as_kafka_does() -> None:
    # Kafka's ScramFormatter takes the password's UTF-8 bytes; SASLprep (which scramp applies)
    # would map the soft hyphen away and make the two passwords one.
    salt = b"s" * 16
    assert salted_password(SHA256, "I\u00adX", salt, 4096) == hashlib.pbkdf2_hmac(
        "sha256", "I\u00adX".encode(), salt, 4096
    )
    assert salted_password(SHA256, "I\u00adX", salt, 4096) != salted_password(
        SHA256, "IX", salt, 4096
    )

