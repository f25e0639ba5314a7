"""The route table: every route has a handler, keys are unique, and ApiVersions advertises
exactly what is both decoded by wire and handled."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from raw_client import API_VERSIONS

import wire
from coordinator.server.apis import SERVED_API_KEYS, RouteTable, load_handlers, load_routes
from coordinator.server.apis.api_versions import advertised_api_versions
from coordinator.server.route import ALLOWED, Route
from wire import ApiKey


def test_every_route_resolves_to_a_handler_for_a_decoded_api() -> None:
    handlers = load_handlers()
    assert handlers.keys() == load_routes().keys() == SERVED_API_KEYS
    for key, handler in handlers.items():
        assert callable(handler), key
        assert wire.lookup(key) is not None, key


def test_group_and_broker_apis_share_the_table() -> None:
    group = {ApiKey.JOIN_GROUP, ApiKey.SYNC_GROUP, ApiKey.HEARTBEAT, ApiKey.LEAVE_GROUP,
             ApiKey.OFFSET_COMMIT, ApiKey.OFFSET_FETCH, ApiKey.DESCRIBE_GROUPS,
             ApiKey.LIST_GROUPS, ApiKey.DELETE_GROUPS, ApiKey.OFFSET_DELETE,
             ApiKey.CONSUMER_GROUP_HEARTBEAT, ApiKey.CONSUMER_GROUP_DESCRIBE,
             ApiKey.SHARE_GROUP_HEARTBEAT, ApiKey.SHARE_GROUP_DESCRIBE,
             ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, ApiKey.ALTER_SHARE_GROUP_OFFSETS,
             ApiKey.DELETE_SHARE_GROUP_OFFSETS}
    broker = {ApiKey.PRODUCE, ApiKey.FETCH, ApiKey.LIST_OFFSETS, ApiKey.METADATA,
              ApiKey.FIND_COORDINATOR, ApiKey.API_VERSIONS, ApiKey.CREATE_TOPICS,
              ApiKey.DELETE_TOPICS, ApiKey.INIT_PRODUCER_ID, ApiKey.SASL_HANDSHAKE,
              ApiKey.SASL_AUTHENTICATE,
              ApiKey.CREATE_PARTITIONS, ApiKey.DELETE_RECORDS, ApiKey.DESCRIBE_CONFIGS,
              ApiKey.DESCRIBE_CLUSTER, ApiKey.ALTER_CONFIGS, ApiKey.INCREMENTAL_ALTER_CONFIGS,
              ApiKey.LIST_CONFIG_RESOURCES, ApiKey.OFFSET_FOR_LEADER_EPOCH,
              ApiKey.DESCRIBE_CLIENT_QUOTAS, ApiKey.ALTER_CLIENT_QUOTAS}
    transactions = {ApiKey.ADD_PARTITIONS_TO_TXN, ApiKey.ADD_OFFSETS_TO_TXN, ApiKey.END_TXN,
                    ApiKey.TXN_OFFSET_COMMIT, ApiKey.DESCRIBE_TRANSACTIONS,
                    ApiKey.LIST_TRANSACTIONS}
    cluster = {ApiKey.DESCRIBE_TOPIC_PARTITIONS, ApiKey.DESCRIBE_LOG_DIRS,
               ApiKey.DESCRIBE_PRODUCERS, ApiKey.ELECT_LEADERS, ApiKey.DESCRIBE_QUORUM,
               ApiKey.ALTER_PARTITION_REASSIGNMENTS, ApiKey.LIST_PARTITION_REASSIGNMENTS,
               ApiKey.ALTER_REPLICA_LOG_DIRS}
    shares = {ApiKey.SHARE_FETCH, ApiKey.SHARE_ACKNOWLEDGE}
    security = {ApiKey.CREATE_ACLS, ApiKey.DESCRIBE_ACLS, ApiKey.DELETE_ACLS,
                ApiKey.ALTER_USER_SCRAM_CREDENTIALS, ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS}
    assert group | broker | transactions | cluster | shares | security == SERVED_API_KEYS


def test_a_key_given_twice_is_refused() -> None:
    heartbeat = load_routes()[ApiKey.HEARTBEAT]
    with pytest.raises(ValueError, match="two routes"):
        RouteTable([heartbeat, heartbeat._replace(parks=True)])


def test_a_key_wire_cannot_decode_is_refused() -> None:
    metadata = load_routes()[ApiKey.METADATA]
    with pytest.raises(ValueError, match="no wire codec"):
        RouteTable([Route(ApiKey.ALTER_PARTITION, metadata.handler, acl=ALLOWED)])


def _ranges(keys: list[dict[str, int]]) -> dict[int, tuple[int, int]]:
    return {k["api_key"]: (k["min_version"], k["max_version"]) for k in keys}


def test_api_versions_advertises_exactly_the_decoded_and_handled_versions() -> None:
    advertised = _ranges(advertised_api_versions(SERVED_API_KEYS))
    decoded = {s.api_key: (s.min_version, s.max_version) for s in wire.all_apis()}
    assert advertised.keys() == decoded.keys() & SERVED_API_KEYS
    for key, versions in advertised.items():
        if key == ApiKey.PRODUCE:  # KAFKA-18659: Produce is advertised from v0
            assert versions == (0, decoded[key][1])
        else:
            assert versions == decoded[key]


def test_an_api_wire_decodes_without_a_handler_is_not_advertised() -> None:
    heartbeat = wire.lookup(ApiKey.HEARTBEAT)
    assert heartbeat is not None
    unhandled = replace(heartbeat, api_key=ApiKey.CONTROLLED_SHUTDOWN, name="ControlledShutdown")
    specs = [*wire.all_apis(), unhandled]
    advertised = _ranges(advertised_api_versions(SERVED_API_KEYS, specs))
    assert ApiKey.CONTROLLED_SHUTDOWN not in advertised
    assert ApiKey.HEARTBEAT in advertised
    # ... and one handled without a wire codec is not either.
    assert ApiKey.ALTER_PARTITION not in _ranges(
        advertised_api_versions({*SERVED_API_KEYS, ApiKey.ALTER_PARTITION}))


@pytest.mark.trio
async def test_the_server_answers_api_versions_from_the_table(server: Any, connect: Any) -> None:
    client = await connect(server.port)
    response = await client.request(API_VERSIONS, 3, {"client_software_name": "raw",
                                                      "client_software_version": "1"})
    assert response.error_code == 0
    got = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    assert got == _ranges(advertised_api_versions(SERVED_API_KEYS))


async def test_consumer_protocol_apis_are_not_advertised_when_disabled() -> None:
    """group.coordinator.rebalance.protocols=classic: no ConsumerGroupHeartbeat (as Kafka)."""
    import trio

    import wire
    from coordinator.server.app import RunningServer, serve
    from coordinator.server.options import build_options

    async def advertised(config: dict[str, str]) -> set[int]:
        async with trio.open_nursery() as nursery:
            options = build_options(config, port=0, data_dir=None)
            running: RunningServer = await nursery.start(serve, options)
            stream = await trio.open_tcp_stream("127.0.0.1", running.port)
            await stream.send_all(wire.encode_request(18, 3, 1, "t", {
                "client_software_name": "t", "client_software_version": "1"}))
            reader = wire.FrameReader()
            while (payload := reader.next_frame()) is wire.NEED_DATA:
                reader.receive_data(await stream.receive_some(65536))
            assert isinstance(payload, bytes)
            _, response = wire.decode_response(18, 3, payload)
            await stream.aclose()
            nursery.cancel_scope.cancel()
        return {k.api_key for k in response.api_keys}

    with trio.fail_after(30):
        assert {68, 69} <= await advertised({})
        keys = await advertised({"group.coordinator.rebalance.protocols": "classic"})
        assert not {68, 69} & keys and 12 in keys


def test_group_lifecycle_is_logged_at_info(caplog: pytest.LogCaptureFixture) -> None:
    """Issue 15 item 16: what Kafka's coordinator logs, from the appended history records."""
    import logging

    from coordinator.server.runtime import log_group_events
    from storage.records import RebalanceEventKey, RebalanceEventValue, Record

    def event(name: str, **kw: object) -> Record:
        return Record(RebalanceEventKey("g"), RebalanceEventValue(name, 0, 3, **kw))  # type: ignore[arg-type]

    with caplog.at_level(logging.INFO, logger="coordinator.server.runtime"):
        log_group_events([
            event("rebalance_start", reason="member join"),
            event("member_expired", member_id="m1", reason="session timeout"),
            event("rebalance_end", members=("m2", "m3")),
            event("group_deleted"),
        ])
    assert [r.getMessage() for r in caplog.records] == [
        "Preparing to rebalance group g in generation 3 (reason: member join).",
        "Member m1 in group g has been removed (reason: session timeout).",
        "Stabilized group g generation 3 with 2 members.",
        "Group g deleted.",
    ]
