"""The security APIs over TCP against an in-process server (issue 29): CreateAcls,
DescribeAcls, DeleteAcls round trip, persisted through the coordinator's log and replayed
by a restarted server; SECURITY_DISABLED without an authorizer, as Kafka's AclApis;
AlterUserScramCredentials / DescribeUserScramCredentials likewise, never a key in a log."""

from __future__ import annotations

import hashlib
from typing import Any

import trio

from coordinator.server.app import RunningServer, serve
from coordinator.server.options import build_options
from coordinator.server.sink import MemorySink
from storage.config_records import ConfigRecordKey
from storage.security_records import AccessControlEntryKey, UserScramCredentialKey
from wire import ApiKey, ErrorCode

AUTHORIZER = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
              "super.users": "User:ANONYMOUS"}
ACL = {"resource_type": 2, "resource_name": "orders", "resource_pattern_type": 3,
       "principal": "User:alice", "host": "*", "operation": 3, "permission_type": 3}
ANY_FILTER = {"resource_type_filter": 1, "resource_name_filter": None, "pattern_type_filter": 1,
              "principal_filter": None, "host_filter": None, "operation": 1,
              "permission_type": 1}


async def _with_server(props: dict[str, str], sink: MemorySink, connect: Any,
                       steps: Any) -> Any:
    options = build_options(props, host="127.0.0.1", port=0, data_dir=None, sink=sink)
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            running: RunningServer = await nursery.start(serve, options)
            client = await connect(running.port)
            result = await steps(client)
            scope.cancel()
    return result


async def test_acls_round_trip_and_survive_a_restart(connect: Any) -> None:
    sink = MemorySink()

    async def create(client: Any) -> Any:
        created = await client.request(ApiKey.CREATE_ACLS, 3, {"creations": [
            ACL, {**ACL, "resource_type": 4, "resource_name": "nope"}]})
        described = await client.request(ApiKey.DESCRIBE_ACLS, 3, ANY_FILTER)
        return created, described

    created, described = await _with_server(AUTHORIZER, sink, connect, create)
    assert [r.error_code for r in created.results] == [0, ErrorCode.INVALID_REQUEST]
    assert created.results[1].error_message == (
        "The only valid name for the CLUSTER resource is kafka-cluster")
    assert [(r.resource_name, [a.principal for a in r.acls]) for r in described.resources] == [
        ("orders", ["User:alice"])]
    # (beside the cluster-level min.insync.replicas written on activation)
    assert [type(r.key) for r in sink.records
            if not isinstance(r.key, ConfigRecordKey)] == [AccessControlEntryKey]

    async def delete(client: Any) -> Any:
        before = await client.request(ApiKey.DESCRIBE_ACLS, 2, ANY_FILTER)
        deleted = await client.request(ApiKey.DELETE_ACLS, 3, {"filters": [ANY_FILTER]})
        after = await client.request(ApiKey.DESCRIBE_ACLS, 3, ANY_FILTER)
        return before, deleted, after

    sink = sink.reopen()
    before, deleted, after = await _with_server(AUTHORIZER, sink, connect, delete)
    assert [r.resource_name for r in before.resources] == ["orders"]  # replayed
    assert [a.resource_name for a in deleted.filter_results[0].matching_acls] == ["orders"]
    assert after.resources == []
    assert sink.records[-1].value is None  # the removal is a tombstone of the ACL's id


async def test_acl_apis_answer_security_disabled_without_an_authorizer(connect: Any) -> None:
    async def steps(client: Any) -> Any:
        return (await client.request(ApiKey.CREATE_ACLS, 2, {"creations": [ACL]}),
                await client.request(ApiKey.DESCRIBE_ACLS, 2, ANY_FILTER),
                await client.request(ApiKey.DELETE_ACLS, 2, {"filters": [ANY_FILTER]}))

    created, described, deleted = await _with_server({}, MemorySink(), connect, steps)
    assert created.results[0].error_code == ErrorCode.SECURITY_DISABLED
    assert created.results[0].error_message == "No Authorizer is configured."
    assert described.error_code == ErrorCode.SECURITY_DISABLED
    assert described.error_message == "No Authorizer is configured on the broker"
    assert deleted.filter_results[0].error_code == ErrorCode.SECURITY_DISABLED


def _upsertion(name: str, iterations: int = 4096) -> dict[str, Any]:
    salt = b"salt-" + name.encode()
    salted = hashlib.pbkdf2_hmac("sha256", b"secret", salt, iterations)
    return {"name": name, "mechanism": 1, "iterations": iterations, "salt": salt,
            "salted_password": salted}


async def test_scram_credentials_are_persisted_salted_and_replayed(connect: Any) -> None:
    sink = MemorySink()

    async def alter(client: Any) -> Any:
        return await client.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, {
            "deletions": [], "upsertions": [_upsertion("carol"), _upsertion("dave", 100)]})

    altered = await _with_server({}, sink, connect, alter)
    assert [(r.user, r.error_code, r.error_message) for r in altered.results] == [
        ("carol", 0, None), ("dave", ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations")]
    [record] = [r for r in sink.records if not isinstance(r.key, ConfigRecordKey)]
    assert record.key == UserScramCredentialKey("carol", 1)
    assert "salt" not in repr(record.value) and b"secret" not in repr(record).encode()

    async def describe(client: Any) -> Any:
        return await client.request(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, {"users": None})

    described = await _with_server({}, sink.reopen(), connect, describe)
    assert [(r.user, [(c.mechanism, c.iterations) for c in r.credential_infos])
            for r in described.results] == [("carol", [(1, 4096)])]


async def test_a_failed_append_changes_nothing_and_answers_the_error(connect: Any) -> None:
    """Persist, then apply: when the log refuses the records, the requester gets the
    mapped error and the ACL does not exist (nor after a restart)."""
    sink = MemorySink()
    sink.fail_with = lambda records: OSError(28, "No space left on device")

    async def steps(client: Any) -> Any:
        created = await client.request(ApiKey.CREATE_ACLS, 3, {"creations": [ACL]})
        sink.fail_with = None
        described = await client.request(ApiKey.DESCRIBE_ACLS, 3, ANY_FILTER)
        return created, described

    created, described = await _with_server(AUTHORIZER, sink, connect, steps)
    assert created.results[0].error_code == ErrorCode.KAFKA_STORAGE_ERROR
    assert described.resources == []
    assert sink.records == []
