"""DescribeClientQuotas and AlterClientQuotas over raw frames on an in-process server (issue
30 item 6): set, describe with each match type and strict, remove; validate_only writing
nothing; per-entity errors with Kafka's messages; a bad filter's whole-answer error; the
records in the log (key version 108) replayed by a restarted server from its data
directory; ApiVersions advertising both APIs at v0-1; CLUSTER ACLs enforced."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio

from coordinator.server.app import RunningServer, serve
from coordinator.server.options import build_options
from storage.config_records import ClientQuotaRecordKey
from wire import ApiKey, ErrorCode

DESCRIBE, ALTER = ApiKey.DESCRIBE_CLIENT_QUOTAS, ApiKey.ALTER_CLIENT_QUOTAS
EXACT, DEFAULT, SPECIFIED = 0, 1, 2


def entry(entity: dict[str, str | None], **ops: float | None) -> dict[str, Any]:
    return {"entity": [{"entity_type": t, "entity_name": n} for t, n in entity.items()],
            "ops": [{"key": k, "value": 0.0 if v is None else v, "remove": v is None}
                    for k, v in ops.items()]}


def alter(*entries: dict[str, Any], validate_only: bool = False) -> dict[str, Any]:
    return {"entries": list(entries), "validate_only": validate_only}


def describe(*components: tuple[str, int, str | None], strict: bool = False) -> dict[str, Any]:
    return {"components": [{"entity_type": t, "match_type": m, "match": n}
                           for t, m, n in components], "strict": strict}


def seen(answer: Any) -> dict[tuple[tuple[str, str | None], ...], dict[str, float]]:
    assert answer.error_code == 0, answer.error_message
    return {tuple((e.entity_type, e.entity_name) for e in item.entity):
            {v.key: v.value for v in item["values"]} for item in answer.entries}


async def test_alter_describe_and_remove(server: Any, connect: Any) -> None:
    client = await connect(server.port)
    done = await client.request(ALTER, 1, alter(
        entry({"user": "alice"}, producer_byte_rate=1024.0, request_percentage=12.5),
        entry({"user": "alice", "client-id": "app"}, consumer_byte_rate=2048.0),
        entry({"user": None}, producer_byte_rate=4096.0),
        entry({"client-id": None}, controller_mutation_rate=5.0),
        entry({"ip": "10.0.0.1"}, connection_creation_rate=100.0)))
    assert [(e.error_code, e.error_message) for e in done.entries] == [(0, None)] * 5
    assert [[(x.entity_type, x.entity_name) for x in e.entity] for e in done.entries][1] == [
        ("client-id", "app"), ("user", "alice")]
    everything = seen(await client.request(DESCRIBE, 1, describe()))
    assert everything == {
        (("user", "alice"),): {"producer_byte_rate": 1024.0, "request_percentage": 12.5},
        (("client-id", "app"), ("user", "alice")): {"consumer_byte_rate": 2048.0},
        (("user", None),): {"producer_byte_rate": 4096.0},
        (("client-id", None),): {"controller_mutation_rate": 5.0},
        (("ip", "10.0.0.1"),): {"connection_creation_rate": 100.0}}
    assert seen(await client.request(DESCRIBE, 0, describe(strict=True))) == {}
    alice = seen(await client.request(DESCRIBE, 1, describe(("user", EXACT, "alice"))))
    assert set(alice) == {(("user", "alice"),), (("client-id", "app"), ("user", "alice"))}
    strict = seen(await client.request(DESCRIBE, 1, describe(("user", EXACT, "alice"),
                                                             strict=True)))
    assert set(strict) == {(("user", "alice"),)}
    defaults = seen(await client.request(DESCRIBE, 1, describe(("user", DEFAULT, None))))
    assert set(defaults) == {(("user", None),)}
    users = seen(await client.request(DESCRIBE, 1, describe(("user", SPECIFIED, None),
                                                            ("client-id", SPECIFIED, None))))
    assert set(users) == {(("client-id", "app"), ("user", "alice"))}
    await client.request(ALTER, 0, alter(entry({"user": "alice"}, producer_byte_rate=None,
                                               request_percentage=None)))
    after = seen(await client.request(DESCRIBE, 1, describe(("user", EXACT, "alice"))))
    assert set(after) == {(("client-id", "app"), ("user", "alice"))}


async def test_validate_only_and_errors_write_nothing(server: Any, connect: Any) -> None:
    client = await connect(server.port)
    sink = server.server.groups.sink
    before = len(sink.records)
    checked = await client.request(ALTER, 1, alter(
        entry({"user": "bob"}, producer_byte_rate=10.0), validate_only=True))
    assert checked.entries[0].error_code == 0
    bad = await client.request(ALTER, 1, alter(
        entry({"user": "bob"}, producer_byte_rate=1.5),
        entry({"user": "carol"}, request_percentage=-1.0),
        entry({"ip": "10.0.0.1", "user": "dan"}, connection_creation_rate=1.0),
        entry({"group": "g"}, producer_byte_rate=1.0),
        entry({"client-id": ""}, producer_byte_rate=1.0),
        entry({"user": "erin"}, connection_creation_rate=1.0),
        entry({}, producer_byte_rate=1.0)))
    assert [(e.error_code, e.error_message) for e in bad.entries] == [
        (ErrorCode.INVALID_REQUEST, "producer_byte_rate cannot be a fractional value."),
        (ErrorCode.INVALID_REQUEST, "Quota request_percentage must be greater than 0"),
        (ErrorCode.INVALID_REQUEST, "Invalid quota entity combination, IP entity shouldnot be "
                                    "combined with User or ClientId"),
        (ErrorCode.INVALID_REQUEST, "Unhandled client quota entity type: group"),
        (ErrorCode.INVALID_REQUEST, "Empty client-id not supported"),
        (ErrorCode.INVALID_REQUEST, "Invalid configuration key connection_creation_rate"),
        (ErrorCode.INVALID_REQUEST, "Invalid empty client quota entity")]
    assert len(sink.records) == before
    assert seen(await client.request(DESCRIBE, 1, describe())) == {}
    filters = [
        (describe(("user", EXACT, None)), ErrorCode.INVALID_REQUEST,
         "Request specified MATCH_TYPE_EXACT, but set match string to null."),
        (describe(("user", SPECIFIED, "x")), ErrorCode.INVALID_REQUEST,
         "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string."),
        (describe(("user", 7, None)), ErrorCode.INVALID_REQUEST, "Unknown match type 7"),
        (describe(("group", SPECIFIED, None)), ErrorCode.UNSUPPORTED_VERSION,
         "Unsupported entity type group"),
        (describe(("ip", SPECIFIED, None), ("user", SPECIFIED, None)),
         ErrorCode.INVALID_REQUEST, "Invalid entity filter component combination. IP filter "
         "component should not be used with user or clientId filter component."),
    ]
    for body, code, message in filters:
        answer = await client.request(DESCRIBE, 1, body)
        assert (answer.error_code, answer.error_message, answer.entries) == (code, message, None)


async def test_quotas_survive_a_restart(connect: Any, tmp_path: Path) -> None:
    async def run(steps: Any) -> Any:
        options = build_options({}, host="127.0.0.1", port=0, data_dir=str(tmp_path))
        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:
                running: RunningServer = await nursery.start(serve, options)
                result = await steps(await connect(running.port), running)
                scope.cancel()
        return result

    async def set_quotas(client: Any, running: RunningServer) -> list[Any]:
        await client.request(ALTER, 1, alter(
            entry({"user": "alice", "client-id": None}, producer_byte_rate=1000.0),
            entry({"ip": None}, connection_creation_rate=30.0),
            entry({"user": "gone"}, consumer_byte_rate=5.0)))
        await client.request(ALTER, 1, alter(entry({"user": "gone"}, consumer_byte_rate=None)))
        return list(running.server.groups.sink.replay())

    written = [r for r in await run(set_quotas) if isinstance(r.key, ClientQuotaRecordKey)]
    assert len(written) == 4
    assert written[-1].value is None  # the removal: the key's tombstone

    async def read(client: Any, running: RunningServer) -> Any:
        return seen(await client.request(DESCRIBE, 1, describe()))

    assert await run(read) == {
        (("client-id", None), ("user", "alice")): {"producer_byte_rate": 1000.0},
        (("ip", None),): {"connection_creation_rate": 30.0}}


async def test_api_versions_and_cluster_acls(start_server: Any, connect: Any) -> None:
    running = await start_server({
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer"})
    client = await connect(running.port)
    versions = await client.request(ApiKey.API_VERSIONS, 3, {
        "client_software_name": "raw", "client_software_version": "1"})
    ranges = {k.api_key: (k.min_version, k.max_version) for k in versions.api_keys}
    assert ranges[DESCRIBE] == ranges[ALTER] == (0, 1)
    denied = await client.request(DESCRIBE, 1, describe())
    # KafkaApis answers getErrorResponse: null entries, no message (the error's default)
    assert (denied.error_code, denied.error_message, denied.entries) == (
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None, None)
    refused = await client.request(ALTER, 1, alter(entry({"user": "x", "client-id": "y"},
                                                         producer_byte_rate=1.0)))
    assert [e.error_code for e in refused.entries] == [ErrorCode.CLUSTER_AUTHORIZATION_FAILED]
    assert [(x.entity_type, x.entity_name) for x in refused.entries[0].entity] == [
        ("user", "x"), ("client-id", "y")]
    assert not [r for r in running.server.groups.sink.records
                if isinstance(r.key, ClientQuotaRecordKey)]


async def test_alter_client_quotas_bad_ip(server: Any, connect: Any) -> None:
    """Kafka's ClientQuotasRequestTest.testAlterClientQuotasBadIp: a name with spaces and an
    RFC 2606 .invalid name are looked up and refused; an address literal needs no lookup."""
    client = await connect(server.port)
    answer = await client.request(ALTER, 1, alter(
        entry({"ip": "not a valid host because it has spaces"}, connection_creation_rate=50.0),
        entry({"ip": "RFC2606.invalid"}, connection_creation_rate=50.0),
        entry({"ip": "::1"}, connection_creation_rate=50.0), validate_only=True))
    assert [(e.error_code, e.error_message) for e in answer.entries] == [
        (ErrorCode.INVALID_REQUEST,
         "not a valid host because it has spaces is not a valid IP or resolvable host."),
        (ErrorCode.INVALID_REQUEST, "RFC2606.invalid is not a valid IP or resolvable host."),
        (ErrorCode.NONE, None)]
